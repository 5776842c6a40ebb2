/*
 * courier.h: the C ABI of Courier, an HTTP/1.1 client library for Linux.
 *
 * C programs and other runtimes (Python through ctypes, any FFI) use the same engine and the same
 * process-wide queue as Swift code: the queue's width bounds every caller together.
 *
 * Conventions (as in sqlite3.h and curl.h):
 *   - Handles are opaque. Constructors return COURIER_OK and store the handle through an out
 *     pointer; destructors accept NULL and return nothing.
 *   - Functions return an int result code: COURIER_OK (0) or a COURIER_E_* code. Codes are
 *     append-only and never renumbered. The primary code sits in the low 8 bits, a detail above
 *     it (COURIER_E_TIMEOUT_CONNECT is COURIER_E_TIMEOUT | 2 << 8), so `code & 0xff` gives the
 *     family. courier_strerror() gives static text for any code.
 *   - A NULL or destroyed handle is reported as COURIER_E_MISUSE, never a crash. (A destroyed
 *     handle is recognised while its memory has not been reused; do not rely on it.)
 *   - A function that takes a callback and returns an error never calls that callback.
 *   - Strings are UTF-8 and NUL-terminated, and are copied: the caller may free them after the
 *     call. Buffers returned by Courier stay valid as long as the handle they came from.
 *
 * Threads: every function may be called from any thread, but one request handle must not be used
 * by two threads at once, with one exception: courier_request_cancel() is meant to be called
 * from another thread while the request is in flight (also while a thread waits in
 * courier_request_perform()). Each function states its rule. Callbacks run on Courier's loop
 * thread, the one thread that moves every byte for the process: they must return quickly and must
 * not block. From a callback you may call any courier_* function (send more requests, free the
 * request, destroy the engine) except courier_request_perform() and courier_shutdown(), which
 * return COURIER_E_MISUSE there. The library never aborts the host process: a system that
 * refuses the loop's thread or descriptors gives COURIER_E_LOOP_UNAVAILABLE.
 *
 * Build: cc app.c $(pkg-config --cflags --libs courier)
 */
#ifndef COURIER_H
#define COURIER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Compile-time version; compare with courier_version_number() at run time. */
#define COURIER_VERSION_MAJOR 0
#define COURIER_VERSION_MINOR 5
#define COURIER_VERSION_PATCH 0
#define COURIER_VERSION_NUM 0x000500
/* The ABI generation: the library's SONAME is libcourier.so.<COURIER_ABI_VERSION>. */
#define COURIER_ABI_VERSION 1

/* Result codes. Append only; never renumber, never reuse. */
#define COURIER_OK                      0
#define COURIER_E_MISUSE                1   /* NULL or destroyed handle, call from the wrong thread */
#define COURIER_E_INVALID_ARGUMENT      2   /* out-of-range or unknown option value */
#define COURIER_E_INVALID_URL           3
#define COURIER_E_UNSUPPORTED_SCHEME    4   /* neither http nor https */
#define COURIER_E_INVALID_HEADER        5   /* CR, LF, NUL or a non-token name */
#define COURIER_E_DNS                   6
#define COURIER_E_CONNECT               7
#define COURIER_E_TIMEOUT               8
#define COURIER_E_CONNECTION_RESET      9
#define COURIER_E_EMPTY_REPLY          10
#define COURIER_E_TRUNCATED_BODY       11
#define COURIER_E_MALFORMED_RESPONSE   12
#define COURIER_E_HEADERS_TOO_LARGE    13
#define COURIER_E_BODY_TOO_LARGE       14
#define COURIER_E_TOO_MANY_REDIRECTS   15
#define COURIER_E_REDIRECT_REJECTED    16
#define COURIER_E_DECODING             17
#define COURIER_E_CANCELLED            18
#define COURIER_E_SEND                 19
#define COURIER_E_FILE                 20
#define COURIER_E_SHUTDOWN             21
#define COURIER_E_TLS                  22
#define COURIER_E_RESPONSE_FORMAT      23
#define COURIER_E_HTTP_STATUS          24
#define COURIER_E_NOT_FOUND            25   /* no such header, no finished request to return */
#define COURIER_E_NO_MEMORY            26
#define COURIER_E_LOOP_UNAVAILABLE     27   /* the event loop could not start (no descriptor or
                                               thread left); nothing was sent, the next call retries */
#define COURIER_E_RANGE                28   /* a download could not be resumed: the server did not
                                               honour the byte range asked for (curl's 33) */
#define COURIER_E_PROXY                29   /* the proxy would not or could not open a tunnel */
#define COURIER_E_REJECTED             30   /* an engine hook turned the request into a failure */
#define COURIER_E_OUTBOX               31   /* the outbox could not take or keep an entry */
#define COURIER_E_AGAIN                32   /* courier_request_read: nothing yet within the timeout
                                               (curl's CURLE_AGAIN; not a failure; since 0.3) */
#define COURIER_E_HTTP2                33   /* HTTP/2 failed (curl's 16 and 92; since 0.6) */

/* Details, in bits 8 and up of their family. */
#define COURIER_E_TIMEOUT_QUEUE        (COURIER_E_TIMEOUT | (1 << 8))
#define COURIER_E_TIMEOUT_CONNECT      (COURIER_E_TIMEOUT | (2 << 8))
#define COURIER_E_TIMEOUT_FIRST_BYTE   (COURIER_E_TIMEOUT | (3 << 8))
#define COURIER_E_TIMEOUT_IDLE         (COURIER_E_TIMEOUT | (4 << 8))
#define COURIER_E_TIMEOUT_TOTAL        (COURIER_E_TIMEOUT | (5 << 8))
#define COURIER_E_TIMEOUT_SEND         (COURIER_E_TIMEOUT | (6 << 8))   /* the server stopped reading
                                               the request body (since 0.6) */
#define COURIER_E_BAD_STATUS_LINE      (COURIER_E_MALFORMED_RESPONSE | (1 << 8))
#define COURIER_E_BAD_HEADER           (COURIER_E_MALFORMED_RESPONSE | (2 << 8))
#define COURIER_E_BAD_CHUNK            (COURIER_E_MALFORMED_RESPONSE | (3 << 8))
#define COURIER_E_AMBIGUOUS_FRAMING    (COURIER_E_MALFORMED_RESPONSE | (4 << 8))
#define COURIER_E_BAD_CONTENT_LENGTH   (COURIER_E_MALFORMED_RESPONSE | (5 << 8))
#define COURIER_E_UNSOLICITED_DATA     (COURIER_E_MALFORMED_RESPONSE | (6 << 8))
#define COURIER_E_UNEXPECTED_UPGRADE   (COURIER_E_MALFORMED_RESPONSE | (7 << 8))
#define COURIER_E_HEADER_BYTES         (COURIER_E_HEADERS_TOO_LARGE | (1 << 8))
#define COURIER_E_HEADER_COUNT         (COURIER_E_HEADERS_TOO_LARGE | (2 << 8))
#define COURIER_E_REDIRECT_SCHEME      (COURIER_E_REDIRECT_REJECTED | (1 << 8))
#define COURIER_E_REDIRECT_DOWNGRADE   (COURIER_E_REDIRECT_REJECTED | (2 << 8))
#define COURIER_E_REDIRECT_LOCATION    (COURIER_E_REDIRECT_REJECTED | (3 << 8))
#define COURIER_E_CORRUPT_ENCODING     (COURIER_E_DECODING | (1 << 8))
#define COURIER_E_DECODED_TOO_LARGE    (COURIER_E_DECODING | (2 << 8))
#define COURIER_E_UNSUPPORTED_ENCODING (COURIER_E_DECODING | (3 << 8))  /* not gzip, deflate, br or zstd */
#define COURIER_E_FILE_READ            (COURIER_E_FILE | (1 << 8))
#define COURIER_E_FILE_WRITE           (COURIER_E_FILE | (2 << 8))
#define COURIER_E_BODY_SOURCE          (COURIER_E_FILE | (3 << 8))   /* a read callback aborted, or
                                                                    returned a bad count */
#define COURIER_E_TLS_HANDSHAKE        (COURIER_E_TLS | (1 << 8))
#define COURIER_E_TLS_UNTRUSTED        (COURIER_E_TLS | (2 << 8))
#define COURIER_E_TLS_HOST_MISMATCH    (COURIER_E_TLS | (3 << 8))
#define COURIER_E_TLS_EXPIRED          (COURIER_E_TLS | (4 << 8))
#define COURIER_E_TLS_NOT_YET_VALID    (COURIER_E_TLS | (5 << 8))
#define COURIER_E_TLS_PIN_MISMATCH     (COURIER_E_TLS | (6 << 8))
#define COURIER_E_TLS_PROTOCOL_VERSION (COURIER_E_TLS | (7 << 8))
#define COURIER_E_TLS_CLIENT_CERT      (COURIER_E_TLS | (8 << 8))
#define COURIER_E_TLS_CA_FILE          (COURIER_E_TLS | (9 << 8))
#define COURIER_E_TLS_REJECTED         (COURIER_E_TLS | (10 << 8))
#define COURIER_E_TLS_TRUNCATED        (COURIER_E_TLS | (11 << 8))
#define COURIER_E_REDIRECT_REFUSED     (COURIER_E_REDIRECT_REJECTED | (4 << 8))   /* by a redirect hook */
#define COURIER_E_DNS_PROXY            (COURIER_E_DNS | (1 << 8))     /* the proxy's name (curl's 5) */
#define COURIER_E_CONNECT_PROXY        (COURIER_E_CONNECT | (1 << 8))
#define COURIER_E_INVALID_JSON         (COURIER_E_RESPONSE_FORMAT | (2 << 8)) /* courier_json_pretty */
#define COURIER_E_CONNECT_BIND         (COURIER_E_CONNECT | (3 << 8)) /* the local address or port
                                                                     could not be bound (curl's 45) */
#define COURIER_E_CONNECT_NO_ROUTE     (COURIER_E_CONNECT | (2 << 8)) /* ENETUNREACH, EHOSTUNREACH: the
                                                                     link is down; nothing was sent */
#define COURIER_E_PROXY_REFUSED        (COURIER_E_PROXY | (1 << 8))   /* CONNECT answered with non-2xx;
                                                                     courier_response_status has it */
#define COURIER_E_PROXY_HANDSHAKE      (COURIER_E_PROXY | (2 << 8))   /* the CONNECT answer is not HTTP */
#define COURIER_E_PROXY_CLOSED         (COURIER_E_PROXY | (3 << 8))   /* closed before answering CONNECT */
#define COURIER_E_PROXY_UNSUPPORTED    (COURIER_E_PROXY | (4 << 8))   /* a scheme of no proxy spoken
                                                                     (socks4://) */
#define COURIER_E_PROXY_SOCKS_CONNECT  (COURIER_E_PROXY | (5 << 8))   /* the SOCKS5 proxy's reply: refused,
                                                                     unreachable; or no address for a
                                                                     socks5:// origin name */
#define COURIER_E_PROXY_SOCKS_AUTH     (COURIER_E_PROXY | (6 << 8))   /* no method accepted, or the
                                                                     user and password rejected */
#define COURIER_E_PROXY_SOCKS_HANDSHAKE (COURIER_E_PROXY | (7 << 8))  /* the answer is not SOCKS5 */
#define COURIER_E_OUTBOX_LOCKED        (COURIER_E_OUTBOX | (1 << 8))  /* another process owns it */
#define COURIER_E_OUTBOX_FULL          (COURIER_E_OUTBOX | (2 << 8))  /* its entry or byte limit */
#define COURIER_E_OUTBOX_CORRUPT       (COURIER_E_OUTBOX | (3 << 8))  /* a damaged entry, set aside */
#define COURIER_E_FILE_CHANGED         (COURIER_E_FILE | (4 << 8))    /* a frozen request's file changed */
#define COURIER_E_NETRC                (COURIER_E_FILE | (5 << 8))    /* a .netrc file that breaks its rules */
#define COURIER_E_INVALIDATED          (COURIER_E_MISUSE | (1 << 8))  /* the engine was invalidated */
#define COURIER_E_TLS_CIPHER           (COURIER_E_TLS | (12 << 8))    /* a cipher list, TLS 1.3 suite list or
                                                                     curve list names nothing usable (since 0.4) */
#define COURIER_E_HTTP2_PROTOCOL       (COURIER_E_HTTP2 | (1 << 8))   /* the server broke HTTP/2: a malformed
                                                                     frame or header block, a flood, no SETTINGS */
#define COURIER_E_HTTP2_STREAM_RESET   (COURIER_E_HTTP2 | (2 << 8))   /* the server reset the stream (RST_STREAM) */
#define COURIER_E_HTTP2_NOT_NEGOTIATED (COURIER_E_HTTP2 | (3 << 8))   /* HTTP/2 required, the server refused it */
#define COURIER_E_HTTP2_GOAWAY         (COURIER_E_HTTP2 | (4 << 8))   /* GOAWAY with an error mid-stream */

/* Option values. */
#define COURIER_PRIORITY_VERY_LOW   0
#define COURIER_PRIORITY_LOW        1
#define COURIER_PRIORITY_NORMAL     2
#define COURIER_PRIORITY_HIGH       3
#define COURIER_PRIORITY_VERY_HIGH  4

#define COURIER_TIMEOUT_QUEUE       1
#define COURIER_TIMEOUT_CONNECT     2
#define COURIER_TIMEOUT_FIRST_BYTE  3
#define COURIER_TIMEOUT_IDLE        4
#define COURIER_TIMEOUT_TOTAL       5
#define COURIER_TIMEOUT_SEND        6   /* between two writes of the body; default: the idle limit
                                           (since 0.6) */
#define COURIER_TIMEOUT_DEFAULT    (-1)   /* milliseconds: back to the default */

#define COURIER_PARAMS_FORM         0   /* application/x-www-form-urlencoded (default) */
#define COURIER_PARAMS_JSON         1   /* a JSON object of string members */

#define COURIER_TLS_1_0             0x0301   /* minimums only where OpenSSL's policy allows (since 0.4) */
#define COURIER_TLS_1_1             0x0302
#define COURIER_TLS_1_2             0x0303
#define COURIER_TLS_1_3             0x0304

/* What a write callback returns to pause (curl's CURL_WRITEFUNC_PAUSE): the bytes offered were
 * not taken and are offered again, first, after courier_request_resume. */
#define COURIER_WRITEFUNC_PAUSE     ((size_t)-1)
/* What a read callback returns to abort the upload (COURIER_E_BODY_SOURCE) or to pause it until
 * courier_request_resume. */
#define COURIER_READFUNC_ABORT      (-1)
#define COURIER_READFUNC_PAUSE      (-2)

#define COURIER_EXPECT_AUTO         0   /* Expect: 100-continue for bodies >= 1 MiB or of unknown size */
#define COURIER_EXPECT_ALWAYS       1
#define COURIER_EXPECT_NEVER        2

#define COURIER_PROGRESS_UPLOAD     0
#define COURIER_PROGRESS_DOWNLOAD   1

#define COURIER_TIMING_QUEUE        1   /* waiting in the shared queue */
#define COURIER_TIMING_DNS          2
#define COURIER_TIMING_CONNECT      3
#define COURIER_TIMING_TLS          4
#define COURIER_TIMING_FIRST_BYTE   5   /* start to first response byte */
#define COURIER_TIMING_TOTAL        6   /* start to completion (queue excluded) */

/* Cache policies (courier_request_set_cache_policy). */
#define COURIER_CACHE_USE_PROTOCOL           0  /* RFC 9111: fresh from storage, stale revalidated (default) */
#define COURIER_CACHE_RELOAD                 1  /* ignore what is stored; store the new response */
#define COURIER_CACHE_RETURN_CACHE_ELSE_LOAD 2  /* a stored response whatever its age, else the network */
#define COURIER_CACHE_ONLY                   3  /* never the network: stored, or a generated 504 */
#define COURIER_CACHE_STALE_IF_ERROR         4  /* the protocol, and the stored response when the origin fails */
#define COURIER_CACHE_THEN_FRESH             5  /* the stored response at once, then the network's (two callbacks)
                                                   unless it was fresh (RFC 9111 decides when to ask) */
#define COURIER_CACHE_THEN_NETWORK           6  /* MKNetworkKit's: the stored response at once, fresh or not,
                                                   and the network always asked (two callbacks) */

/* Where a response came from (courier_response_cache_phase). */
#define COURIER_PHASE_FRESH                  0  /* from the origin, now */
#define COURIER_PHASE_CACHED                 1  /* from storage, fresh */
#define COURIER_PHASE_CACHED_STALE           2  /* from storage, past its freshness (allowed, or a preview) */
#define COURIER_PHASE_NOT_MODIFIED           3  /* the origin answered 304: stored body, updated fields */
#define COURIER_PHASE_STALE_ON_ERROR         4  /* the origin failed; the stored response stood in */
#define COURIER_PHASE_GENERATED              5  /* a 504 the cache made (only-if-cached, unreachable origin) */

/* When identical GET/HEAD requests in flight share one network request (courier_request_set_coalescing). */
#define COURIER_COALESCE_WITH_CACHE          0  /* when the engine has a cache (default) */
#define COURIER_COALESCE_ALWAYS              1
#define COURIER_COALESCE_NEVER               2

/* Cache statistics (courier_cache_stat). Append only. */
#define COURIER_CACHE_STAT_HITS              1  /* answered from storage (memory and disk) */
#define COURIER_CACHE_STAT_MEMORY_HITS       2
#define COURIER_CACHE_STAT_DISK_HITS         3
#define COURIER_CACHE_STAT_MISSES            4
#define COURIER_CACHE_STAT_REVALIDATIONS     5
#define COURIER_CACHE_STAT_NOT_MODIFIED      6  /* revalidations answered 304 */
#define COURIER_CACHE_STAT_STALE_SERVED      7
#define COURIER_CACHE_STAT_STORES            8
#define COURIER_CACHE_STAT_GENERATED         9  /* 504s the cache generated */
#define COURIER_CACHE_STAT_MEMORY_BYTES     10
#define COURIER_CACHE_STAT_MEMORY_ENTRIES   11
#define COURIER_CACHE_STAT_DISK_BYTES       12
#define COURIER_CACHE_STAT_MEMORY_EVICTIONS 13
#define COURIER_CACHE_STAT_DISK_EVICTIONS   14
#define COURIER_CACHE_STAT_CORRUPT_REMOVED  15  /* damaged files found on disk (each a miss, removed) */
#define COURIER_CACHE_STAT_DROPPED_WRITES   16

typedef struct courier_engine courier_engine;
typedef struct courier_request courier_request;
typedef struct courier_response courier_response;
typedef struct courier_cache courier_cache;

/*
 * Called once when a request sent with courier_request_send() ends (twice with
 * COURIER_CACHE_THEN_FRESH when a stale response is stored: first with that response, for which
 * courier_response_is_preview() is 1 and the code COURIER_OK, then with the final outcome). `response` is NULL when no
 * response arrived (code says why); otherwise it is a new handle the callback now owns and must
 * release with courier_response_free() (now or later, from any thread). `code` is COURIER_OK,
 * COURIER_E_HTTP_STATUS for a status outside the engine's accepted range (the response is there),
 * or the failure. Runs on the loop thread (except for a request refused because
 * courier_shutdown() is under way: it reports on the thread that sent it, so nothing waits forever).
 */
typedef void (*courier_done_fn)(courier_request *request, courier_response *response, int code, void *user);

/*
 * Progress of one direction (COURIER_PROGRESS_UPLOAD or _DOWNLOAD): bytes done and expected (-1
 * when unknown). At most every 50 ms, and once at the end. Runs on the loop thread.
 */
typedef void (*courier_progress_fn)(courier_request *request, int direction, uint64_t done, int64_t total, void *user);

/* Called with the number of running and queued operations, process-wide, when it changes
 * (coalesced per loop turn). Runs on the loop thread. */
typedef void (*courier_activity_fn)(int running, int queued, void *user);

/* ---------------------------------------------------------------------------------------------
 * Library
 */

/* COURIER_VERSION_NUM of the library loaded at run time. Thread safety: any thread. */
int courier_version_number(void);

/* The version as text ("0.1.0"); static storage. Thread safety: any thread. */
const char *courier_version(void);

/* Static English text for a result code (any code, known or not); never NULL, never freed.
 * Thread safety: any thread. */
const char *courier_strerror(int code);

/* OCNet's JSON pretty printer (OCNetPrintDecodeJSON), for logs: the JSON text `json` (`length`
 * bytes of UTF-8) indented two spaces per level, one member or element per line, members in
 * document order, numbers as written, non-ASCII characters as themselves (never \u escapes).
 * Writes at most `capacity` bytes into `out`, always NUL-terminated when capacity > 0, and the
 * whole text's length (without its NUL) into *needed: a first call with capacity 0 sizes the
 * buffer. COURIER_E_INVALID_JSON for text that is not JSON (nothing written), COURIER_E_MISUSE
 * for NULL json or needed. */
int courier_json_pretty(const char *json, size_t length, char *out, size_t capacity, size_t *needed);

/* The request as a curl command line, for logs and bug reports (MKNetworkKit's
 * curlCommandLineString): method, URL, headers as they will be sent, the body (text, a file, a
 * form; binary bytes as a note), --compressed. Written as courier_json_pretty writes (capacity 0
 * sizes it). COURIER_E_MISUSE for a NULL request or needed. Any time after creation. */
int courier_request_curl_command(const courier_request *request, char *out, size_t capacity, size_t *needed);

/*
 * Fails every request in flight with COURIER_E_SHUTDOWN (their callbacks run), closes every
 * connection and stops the loop thread; the next request starts it again. Use before exit in
 * programs checked with valgrind. Returns COURIER_E_MISUSE from a callback (it would wait for
 * itself). Thread safety: any thread but the loop thread.
 */
int courier_shutdown(void);

/* ---------------------------------------------------------------------------------------------
 * The shared queue (process-wide: Swift and C callers share it)
 */

/* Operations running at once, process-wide. Thread safety: any thread. */
int courier_queue_width(void);

/* Changes the width (0 holds everything until raised). Lowering it never stops running work.
 * COURIER_E_INVALID_ARGUMENT for a negative width. Thread safety: any thread. */
int courier_queue_set_width(int width);

/* Sets the operation and connection limit for one host (NULL host: the default for all hosts;
 * limit 0 with a host: remove that host's own limit). Thread safety: any thread. */
int courier_queue_set_host_limit(const char *host, int limit);

/* Current running and queued counts (either pointer may be NULL). Thread safety: any thread. */
int courier_queue_activity(int *running, int *queued);

/* Registers an activity observer; *token identifies it for courier_queue_unobserve. `user` is
 * passed back untouched and must stay valid until unobserved. Thread safety: any thread. */
int courier_queue_observe(courier_activity_fn observer, void *user, int *token);

/* Removes an observer: once this returns it is never called again, so `user` may be freed.
 * Thread safety: any thread. From another thread it waits for a notification in progress on the
 * loop thread to finish (an observer must not wait for the thread that unobserves it); from a
 * callback on the loop thread it returns at once. */
int courier_queue_unobserve(int token);

/* ---------------------------------------------------------------------------------------------
 * Engines: one per API, with a base URL and default headers
 */

/*
 * CONSTRUCTOR. `base` is a URL ("https://api.example.com/v1") or a bare host ("api.example.com",
 * meaning https, as in Swift and Python; give "http://" for plain HTTP) under which requests may
 * give paths, or NULL for an engine that only takes absolute URLs. Copied. Errors: COURIER_E_INVALID_URL, COURIER_E_UNSUPPORTED_SCHEME,
 * COURIER_E_MISUSE (engine NULL), COURIER_E_NO_MEMORY (no descriptor left for the completion
 * queue); *engine is NULL after an error. Thread safety: any thread.
 */
int courier_engine_create(const char *base, courier_engine **engine);

/*
 * DESTRUCTOR. Cancels the engine's requests still in flight (their callbacks run with
 * COURIER_E_CANCELLED) and releases the engine; requests already created keep working until
 * freed (the engine's memory lives until then, like sqlite3_close_v2). Safe from a callback:
 * nothing waits. NULL is a no-op. Thread safety: any thread, once.
 */
void courier_engine_destroy(courier_engine *engine);

/* Invalidates the engine (AFURLSessionManager's invalidation): courier_request_create and
 * courier_request_reset on it fail with COURIER_E_INVALIDATED from now on; its requests already
 * queued or running are cancelled (cancel_running 1, invalidateAndCancel: COURIER_E_CANCELLED)
 * or left to finish (0, finishTasksAndInvalidate). The engine stays to be destroyed. Once: a
 * second call does nothing. COURIER_E_MISUSE for NULL (the shared engine cannot be invalidated),
 * COURIER_E_INVALID_ARGUMENT for cancel_running other than 0 or 1. Any thread. */
int courier_engine_invalidate(courier_engine *engine, int cancel_running);

/* Cancels every queued and running request of the engine (MKNetworkKit's cancel of an engine's
 * operations); each ends with COURIER_E_CANCELLED as with courier_request_cancel. Returns at
 * once. courier_engine_cancel_where cancels those `select` returns non-zero for, asked with each
 * request's method and current URL on Courier's thread before it returns (so `user` need only
 * live for the call; `select` must not call into Courier). Both are safe from a callback.
 * COURIER_E_MISUSE for a NULL engine or select. Thread safety: any thread. */
typedef int (*courier_select_fn)(const char *method, const char *url, void *user);
int courier_engine_cancel_all(courier_engine *engine);
int courier_engine_cancel_where(courier_engine *engine, courier_select_fn select, void *user);

/* A header every request of the engine sends unless it sets the same name. Copied.
 * COURIER_E_INVALID_HEADER for CR, LF, NUL or a bad name. Thread safety: not concurrently with
 * courier_request_create on the same engine. */
int courier_engine_add_header(courier_engine *engine, const char *name, const char *value);

/* Statuses outside [low, high) complete with COURIER_E_HTTP_STATUS (default [200, 400)); use
 * (0, 1000) to accept every status. Applies to requests created afterwards. Thread safety: not
 * concurrently with courier_request_create or courier_engine_add_header on the same engine
 * (configure an engine, then share it). */
int courier_engine_set_accepted_status(courier_engine *engine, int low, int high);

/*
 * Engine defaults (since 0.2): what every request created from the engine afterwards starts with,
 * so an API's timeouts, TLS settings and redirect rules are set once rather than per request. Same
 * arguments, meanings and errors as the courier_request_set_* of the same name (a request's own
 * setter still overrides its copy; COURIER_TIMEOUT_DEFAULT on a request means the engine's value,
 * on the engine the library's). Strings are copied. Errors: COURIER_E_MISUSE (bad handle),
 * COURIER_E_INVALID_ARGUMENT (and COURIER_E_TLS_* for pins that do not parse), with the engine
 * unchanged. Thread safety: as courier_engine_set_accepted_status.
 */
int courier_engine_set_timeout(courier_engine *engine, int which, int64_t milliseconds);
int courier_engine_set_redirects(courier_engine *engine, int follow, int max_redirects);
int courier_engine_set_decompress(courier_engine *engine, int enabled);
int courier_engine_set_max_body(courier_engine *engine, int64_t bytes);
int courier_engine_set_tls_ca(courier_engine *engine, const char *file, const char *directory);
int courier_engine_set_tls_system_roots(courier_engine *engine, int use);
int courier_engine_set_tls_verify(courier_engine *engine, int verify);
int courier_engine_set_tls_client_certificate(courier_engine *engine, const char *certificate, const char *key, const char *passphrase);
int courier_engine_set_tls_pins(courier_engine *engine, const char *pins);
int courier_engine_set_tls_versions(courier_engine *engine, int minimum, int maximum);

/* The application's own trust decision for the engine's TLS connections (AFNetworking's
 * authentication challenge, Swift's TrustEvaluator), consulted after Courier's checks during each
 * handshake. `evaluate` gets the host and port, Courier's verdict (COURIER_OK, or the
 * COURIER_E_TLS_* it would fail with), whether a pin matched (-1: none apply), and the server's
 * chain, leaf first (`count` DER certificates of `lengths[i]` bytes, valid for the call); it
 * returns 1 to trust (even a chain Courier rejected), 0 to refuse (COURIER_E_TLS_REJECTED). NULL
 * keeps Courier's verdict. `pin_mismatch` (may be NULL) hears of every pin mismatch: in
 * COURIER_PIN_REPORT_ONLY mode it is the only consequence (the connection proceeds). Both run on
 * Courier's thread during the handshake: quick, no blocking, no calls into Courier; `user` must
 * outlive the engine's requests. Both NULL: no hook. Connections made under one hook never serve
 * requests under another. */
typedef int (*courier_trust_fn)(const char *host, int port, int verdict, int pin_matched,
                                const unsigned char *const *chain, const size_t *lengths, size_t count, void *user);
typedef void (*courier_pin_report_fn)(const char *host, int port, void *user);
int courier_engine_set_trust(courier_engine *engine, courier_trust_fn evaluate, courier_pin_report_fn pin_mismatch, void *user);
#define COURIER_PIN_ENFORCE     0  /* a mismatch fails the connection with COURIER_E_TLS_PIN_MISMATCH (default) */
#define COURIER_PIN_REPORT_ONLY 1  /* a mismatch is only reported to pin_mismatch */
int courier_engine_set_tls_pin_mode(courier_engine *engine, int mode);

/*
 * A file descriptor that is readable while finished requests wait in the engine's completion
 * queue (requests started with courier_request_enqueue). For poll(), epoll, asyncio's add_reader.
 * Take finished requests with courier_engine_next_done until it reports none: the descriptor then
 * reads idle (a request finishing just as the last is taken may leave it ready a moment longer,
 * with none to take: a spurious wakeup, as poll() allows). Owned by the engine: do not
 * read, write or close it. Returns -COURIER_E_MISUSE for a bad handle. Thread safety: any thread.
 *
 * Each engine has a descriptor (and completion queue) of its own, by design: the engines of two
 * libraries in one process, or of two asyncio loops in two threads, never take each other's
 * finished requests, and an engine's destruction drops only its own. A program with several
 * engines watches their descriptors together (one poll() array, one epoll set); the requests of
 * every engine still share the one process-wide queue and connection pool.
 */
int courier_engine_fd(courier_engine *engine);

/*
 * Takes one finished request from the completion queue (pull style, like curl_multi_info_read).
 * Returns COURIER_OK and sets *request, *response (NULL when no response arrived; the caller
 * owns it) and *code; COURIER_E_NOT_FOUND when the queue is empty. Never blocks.
 * Thread safety: any thread.
 */
int courier_engine_next_done(courier_engine *engine, courier_request **request, courier_response **response, int *code);

/*
 * Gives the engine an HTTP cache (RFC 9111, private: like a browser's), or none with NULL. Requests
 * created afterwards use it: GET responses are stored and answered from it, revalidated when
 * stale, coalesced while in flight; the 206s to single byte ranges are kept and combined, and a
 * range inside what is stored is answered as a 206. Several engines may share one cache. Thread safety: as
 * courier_engine_set_accepted_status.
 */
int courier_engine_set_cache(courier_engine *engine, courier_cache *cache);

/* ---------------------------------------------------------------------------------------------
 * HTTP caches (shared by engines, by Swift code, and with --cache-dir by the courier CLI)
 */

/*
 * CONSTRUCTOR. A cache with a memory tier of `memory_bytes` (-1 for the default, 16 MiB; 0 keeps
 * nothing in memory) and, when `directory` is not NULL, a disk tier there (created when missing)
 * of at most `disk_bytes` (0 for the default, 256 MiB). Several processes may share a directory:
 * files are written to a temporary name and renamed, carry a checksum, and a damaged one is a
 * miss and is removed. The memory tier is dropped automatically under memory pressure where Linux
 * reports it (PSI, cgroup memory events). Errors: COURIER_E_FILE_WRITE (the directory cannot be
 * made), COURIER_E_MISUSE (cache NULL). Thread safety: any thread.
 */
int courier_cache_create(const char *directory, int64_t memory_bytes, int64_t disk_bytes, courier_cache **cache);

/* DESTRUCTOR. Engines given the cache keep using it until they are destroyed. NULL is a no-op.
 * Thread safety: any thread, once. */
void courier_cache_destroy(courier_cache *cache);

/* One statistic (COURIER_CACHE_STAT_*) into *value; COURIER_E_INVALID_ARGUMENT for an unknown one.
 * Thread safety: any thread. */
int courier_cache_stat(courier_cache *cache, int which, int64_t *value);

/* Empties the memory tier (what memory pressure does); the disk tier keeps everything.
 * Thread safety: any thread. */
int courier_cache_drop_memory(courier_cache *cache);

/* Removes everything stored, in memory and on disk. Thread safety: any thread. */
int courier_cache_clear(courier_cache *cache);

/* Waits until every disk write queued so far is done (before another process reads them).
 * Thread safety: any thread; from a callback it stalls every transfer while the disk works. */
int courier_cache_flush(courier_cache *cache);

/* ---------------------------------------------------------------------------------------------
 * Requests
 */

/*
 * CONSTRUCTOR. `engine` may be NULL for a process-wide engine with no base URL and the standard
 * headers (such requests cannot use courier_request_enqueue: there is no engine to poll).
 * `method` is "GET", "POST", ... (NULL means GET). `url` is absolute ("http://host/path?q"), or a
 * path under the engine's base URL ("items/1"). The request snapshots the engine's default
 * headers and accepted statuses. Errors: COURIER_E_INVALID_URL, COURIER_E_UNSUPPORTED_SCHEME,
 * COURIER_E_INVALID_ARGUMENT (a method that is not a token), COURIER_E_MISUSE (bad engine, NULL
 * out pointer); *request is NULL after an error. Thread safety: any thread.
 */
int courier_request_create(courier_engine *engine, const char *method, const char *url, courier_request **request);

/*
 * DESTRUCTOR. May be called at any time, including from the request's own callback. If the
 * request is in flight it is cancelled and its callback will not run; for a request started with
 * courier_request_enqueue it does not appear in the completion queue. NULL is a no-op.
 * Thread safety: any thread, once, and not while another thread is still using the handle
 * (cancelling it, or waiting in courier_request_perform with it): the handle is gone on return.
 */
void courier_request_free(courier_request *request);

/*
 * Makes a finished request new again (curl_easy_reset's role, since 0.2): the handle becomes what
 * courier_request_create(engine, method, url) makes from its engine now (the engine's current
 * defaults, headers and accepted statuses; every setting of the last send is dropped, callbacks
 * included) and may be configured and sent again. Only the user data pointer is kept, so a pool
 * of handles keeps each one's context. `method` and `url` as for courier_request_create.
 * Allowed before the first send and once the outcome was delivered (in or after the done
 * callback, after courier_request_perform returned, after courier_engine_next_done handed it
 * out); COURIER_E_MISUSE while it is in flight or waiting (in an outbox, for credentials, or
 * finished but still in the engine's completion queue), and
 * COURIER_E_INVALID_URL / COURIER_E_INVALID_ARGUMENT for a refused URL or method, with the
 * request unchanged in each case. A response taken from the last send stays valid and is
 * still freed with courier_response_free. Thread safety: as the setters (one thread at a time).
 */
int courier_request_reset(courier_request *request, const char *method, const char *url);

/* Adds a header (copied). An empty value sends the header empty. COURIER_E_INVALID_HEADER for
 * CR, LF, NUL or a bad name. Setters return COURIER_E_MISUSE once the request was sent. */
int courier_request_add_header(courier_request *request, const char *name, const char *value);

/* Removes a header: one set on this request, and the engine's default of that name (curl's
 * -H "Name:"). COURIER_E_INVALID_HEADER for a name that is not a token. */
int courier_request_remove_header(courier_request *request, const char *name);

/* The body, copied (`data` may be freed after the call). */
int courier_request_set_body(courier_request *request, const void *data, size_t length);

/* The body streamed from a file at send time (the path is copied). */
int courier_request_set_body_file(courier_request *request, const char *path);

/* A parameter: in the query string for GET, HEAD and DELETE (or with an explicit body), in the
 * body otherwise (form or JSON, see courier_request_set_param_encoding). Copied. */
int courier_request_add_param(courier_request *request, const char *name, const char *value);

/* COURIER_PARAMS_FORM or COURIER_PARAMS_JSON. */
int courier_request_set_param_encoding(courier_request *request, int encoding);

/* Appends a field to the request's application/x-www-form-urlencoded body (Content-Type set unless
 * the request has one), in the order added, repeated names kept ("tag=a&tag=b"), encoded as
 * browsers do. The body is that form (it replaces a body set before). Copied; NULL name or value:
 * COURIER_E_INVALID_ARGUMENT. (courier_request_add_form_field is the multipart form's.) */
int courier_request_add_urlencoded_field(courier_request *request, const char *name, const char *value);

/* COURIER_PRIORITY_VERY_LOW ... COURIER_PRIORITY_VERY_HIGH (default NORMAL). The queue starts the
 * highest first; LOW and VERY_LOW are background work (since 0.6): it never holds a place of the
 * queue's width against NORMAL and higher requests, starts only in what they leave, and its
 * request body pauses while they run (10 s at most at a time), so a view's requests are not
 * stuck behind uploads on a slow link. */
int courier_request_set_priority(courier_request *request, int priority);

/* One of COURIER_TIMEOUT_*; milliseconds, 0 for no limit, COURIER_TIMEOUT_DEFAULT (-1, since 0.2)
 * for the default again (30 s connect, 60 s first byte and idle, no queue or total limit); other
 * negative values are COURIER_E_INVALID_ARGUMENT. Queue time never counts against the
 * connect or first-byte limits. The idle limit covers both directions unless SEND is set: then
 * a server that stops reading the body fails the request after SEND (COURIER_E_TIMEOUT_SEND), and
 * IDLE is the read side's alone (httpx's write and read timeouts). */
int courier_request_set_timeout(courier_request *request, int which, int64_t milliseconds);

/* Follow 301/302/303/307/308 (default on, 10 at most); max_redirects < 0 keeps the default.
 * follow: 0 (off), 1 (on), or COURIER_FOLLOW_AUTO_REFERER (since 0.3): on, and each hop sends
 * the URL it was redirected from as Referer, without credentials or fragment (curl's
 * CURLOPT_AUTOREFERER). Other values are COURIER_E_INVALID_ARGUMENT. */
#define COURIER_FOLLOW_AUTO_REFERER 2
int courier_request_set_redirects(courier_request *request, int follow, int max_redirects);

/* Ask for and decode gzip/deflate (default on). */
int courier_request_set_decompress(courier_request *request, int enabled);

/* Where the request's connection goes instead of the URL's host (curl's CURLOPT_RESOLVE,
 * CURLOPT_CONNECT_TO, CURLOPT_IPRESOLVE); the request itself (Host field, TLS name and
 * certificate check) is unchanged, and such connections are never shared with requests routed
 * otherwise. Through a proxy the proxy is connected to as usual.
 * courier_request_add_resolve: "HOST:PORT:ADDR[,ADDR]..." (IP addresses) used instead of a name
 * lookup; courier_request_add_connect_to: "HOST1:PORT1:HOST2:PORT2" (empty parts match any or keep
 * the request's), the first matching rule wins; courier_request_set_ip_family: COURIER_IP_*.
 * The addresses of a name are raced either way (Happy Eyeballs, RFC 8305), and "localhost" is
 * both loopback addresses. COURIER_E_INVALID_ARGUMENT for an entry that does not parse (or NULL). */
#define COURIER_IP_ANY 0
#define COURIER_IP_V4  1
#define COURIER_IP_V6  2
int courier_request_add_resolve(courier_request *request, const char *entry);
int courier_request_add_connect_to(courier_request *request, const char *entry);
int courier_request_set_ip_family(courier_request *request, int family);

/* A condition on the resource's modification time `time` (epoch seconds), curl's
 * CURLOPT_TIMECONDITION with its values: COURIER_TIMECOND_IFMODSINCE sends If-Modified-Since (the
 * server answers 304 when not modified since), _IFUNMODSINCE If-Unmodified-Since (412 when it was),
 * _LASTMOD a Last-Modified field; _NONE removes them. COURIER_E_INVALID_ARGUMENT for another value,
 * or a time outside the years 0000 to 9999 (what an HTTP date can name). */
#define COURIER_TIMECOND_NONE         0
#define COURIER_TIMECOND_IFMODSINCE   1
#define COURIER_TIMECOND_IFUNMODSINCE 2
#define COURIER_TIMECOND_LASTMOD      3
int courier_request_set_time_condition(courier_request *request, int condition, int64_t time);

/* Every connection goes to the Unix domain socket `path` instead of over TCP (curl's
 * CURLOPT_UNIX_SOCKET_PATH; with `abstract` not 0, a name in Linux's abstract namespace, curl's
 * CURLOPT_ABSTRACT_UNIX_SOCKET). The URL still names the host for the Host field and TLS; no name
 * is resolved and proxies are not used. The Docker Engine API:
 *     courier_engine_set_unix_socket(engine, "/var/run/docker.sock", 0);
 *     ... GET http://localhost/v1.43/containers/json
 * NULL goes back to TCP. COURIER_E_INVALID_ARGUMENT for an empty path or one over 107 bytes; a
 * socket that is missing or not listening fails the request with COURIER_E_CONNECT. */
int courier_engine_set_unix_socket(courier_engine *engine, const char *path, int abstract);

/* Where TCP connections come from (curl's CURLOPT_INTERFACE and CURLOPT_LOCALPORT /
 * CURLOPT_LOCALPORTRANGE, httpx's local_address). `address` in curl's --interface syntax: an IP
 * address of this machine, an interface name (bound to the device as root, else to its address
 * of the destination's family), "if!NAME" or "host!ADDRESS"; NULL for anywhere. Ports: the first
 * free one in [low, high]; 0, 0 for any. Connections bound differently are never shared.
 * COURIER_E_INVALID_ARGUMENT for an address that is not one or a bad range; a binding the kernel
 * refuses fails the request with COURIER_E_CONNECT_BIND (curl's 45). */
int courier_engine_set_local_address(courier_engine *engine, const char *address);
int courier_request_set_local_address(courier_request *request, const char *address);
int courier_engine_set_local_port(courier_engine *engine, int low, int high);
int courier_request_set_local_port(courier_request *request, int low, int high);
int courier_request_set_unix_socket(courier_request *request, const char *path, int abstract);

/* Fail with COURIER_E_BODY_TOO_LARGE beyond this many body bytes (0: no limit). */
int courier_request_set_max_body(courier_request *request, int64_t bytes);

/* Write the body to this file instead of memory (courier_response_body is then empty). */
int courier_request_set_output_file(courier_request *request, const char *path);

/* TLS: extra trusted CAs from a PEM file and/or a hashed directory (either may be NULL). */
int courier_request_set_tls_ca(courier_request *request, const char *file, const char *directory);

/* TLS: 1 trusts the system's roots (OpenSSL's default paths, which SSL_CERT_FILE and SSL_CERT_DIR
 * move; the default), 0 only the CAs of courier_request_set_tls_ca, as curl's --cacert and
 * CURLOPT_CAINFO trust only their file. Also saves reading the system bundle (milliseconds, once
 * per process). Errors: COURIER_E_INVALID_ARGUMENT for other values. */
int courier_request_set_tls_system_roots(courier_request *request, int use);

/* TLS: 0 accepts any certificate (test servers only; pins still apply), 1 verifies (default). */
int courier_request_set_tls_verify(courier_request *request, int verify);

/* TLS: client certificate and key (PEM), key passphrase (NULL when none). */
int courier_request_set_tls_client_certificate(courier_request *request, const char *certificate, const char *key, const char *passphrase);

/* TLS: public-key pins as curl's --pinnedpubkey takes them: "sha256//BASE64;sha256//BASE64"
 * (current and backup keys), or the path of a public key or certificate file (PEM or DER). */
int courier_request_set_tls_pins(courier_request *request, const char *pins);

/* TLS: lowest and highest version (COURIER_TLS_*; 0 for the default, TLS 1.2 and the newest).
 * A minimum below 1.2 offers it only where the system's OpenSSL policy still allows it (Debian's
 * does not), as curl's --tlsv1.0 and --tlsv1.1. */
int courier_request_set_tls_versions(courier_request *request, int minimum, int maximum);

/* TLS choices (since 0.4), in OpenSSL's syntax, each NULL for OpenSSL's default: the cipher list for
 * TLS 1.2 and below and the TLS 1.3 suites (curl's --ciphers and --tls13-ciphers), the key-exchange
 * groups ("X25519:P-256", curl's --curves). A list that names nothing OpenSSL has fails the
 * requests that use it with COURIER_E_TLS_CIPHER. courier_request_set_tls_alpn(request, 0) offers
 * no ALPN (curl's --no-alpn); 1 (the default) offers what the HTTP version allows ("h2,http/1.1"). */
int courier_request_set_tls_ciphers(courier_request *request, const char *ciphers, const char *tls13_ciphers);
int courier_request_set_tls_curves(courier_request *request, const char *curves);
int courier_request_set_tls_alpn(courier_request *request, int enabled);
int courier_engine_set_tls_ciphers(courier_engine *engine, const char *ciphers, const char *tls13_ciphers);
int courier_engine_set_tls_curves(courier_engine *engine, const char *curves);
int courier_engine_set_tls_alpn(courier_engine *engine, int enabled);

/* Which HTTP version requests may use (since 0.6; curl's CURLOPT_HTTP_VERSION):
 *   COURIER_HTTP_VERSION_DEFAULT, COURIER_HTTP_VERSION_2: HTTP/2 where an https server agrees by
 *     ALPN, HTTP/1.1 otherwise (and on http://: no h2c Upgrade);
 *   COURIER_HTTP_VERSION_1_1: HTTP/1.1 only;
 *   COURIER_HTTP_VERSION_2_ONLY: HTTP/2 or COURIER_E_HTTP2_NOT_NEGOTIATED; on http:// h2c with prior
 *     knowledge (curl's --http2-prior-knowledge).
 * courier_response_http_version then says 20 for a response that came over HTTP/2. A server that
 * resets a stream with HTTP_1_1_REQUIRED gets the request again over HTTP/1.1, and its origin
 * stays on HTTP/1.1. */
#define COURIER_HTTP_VERSION_DEFAULT 0
#define COURIER_HTTP_VERSION_1_1     1
#define COURIER_HTTP_VERSION_2       2
#define COURIER_HTTP_VERSION_2_ONLY  3
int courier_request_set_http_version(courier_request *request, int version);
int courier_engine_set_http_version(courier_engine *engine, int version);
/* A PING every interval (milliseconds; 0, the default: none) on the HTTP/2 connections a request
 * opens, busy or idle; one unanswered within 5 s fails the connection (its unanswered idempotent
 * requests go again on a new one). For connections kept across NATs and load balancers that drop
 * silent flows (since 0.6). Without it a PING goes only before reusing a connection silent 30 s. */
int courier_request_set_http2_ping_interval(courier_request *request, int64_t milliseconds);
int courier_engine_set_http2_ping_interval(courier_engine *engine, int64_t milliseconds);

/* Connecting and the response head (since 0.4). courier_request_set_happy_eyeballs: how long one
 * address's connect runs before the next address (the other family first) is tried beside it
 * (RFC 8305, curl's --happy-eyeballs-timeout-ms; default 250). courier_request_set_continue_timeout:
 * how long a body held for "100 Continue" waits before it is sent anyway (curl's
 * --expect100-timeout; default 1000). courier_request_set_header_limits: the response head's bounds,
 * bytes (status line, fields and trailers; default 300 KiB, curl's) and fields (default 10000); 0
 * for the default. A head beyond them fails with COURIER_E_HEADER_BYTES or COURIER_E_HEADER_COUNT. */
int courier_request_set_happy_eyeballs(courier_request *request, int64_t milliseconds);
int courier_request_set_continue_timeout(courier_request *request, int64_t milliseconds);
int courier_request_set_header_limits(courier_request *request, int64_t bytes, int fields);
int courier_engine_set_happy_eyeballs(courier_engine *engine, int64_t milliseconds);
int courier_engine_set_continue_timeout(courier_engine *engine, int64_t milliseconds);
int courier_engine_set_header_limits(courier_engine *engine, int64_t bytes, int fields);

/* How the request uses its engine's cache: one of COURIER_CACHE_* (default USE_PROTOCOL). Request
 * directives given as headers apply too ("Cache-Control: no-cache", "only-if-cached", ...). */
int courier_request_set_cache_policy(courier_request *request, int policy);

/* COURIER_COALESCE_WITH_CACHE (default), _ALWAYS or _NEVER: whether an identical GET or HEAD in
 * flight may answer this request too. Each request keeps its own handle: cancelling one detaches
 * only it; the network request stops when every one of them has cancelled. */
int courier_request_set_coalescing(courier_request *request, int mode);

/* Authentication when the request sets no Authorization header itself: Basic (RFC 7617; the
 * user may not contain ':', NULL password is empty) or Bearer (RFC 6750, curl's --oauth2-bearer;
 * NULL removes it). Like every credential it is dropped on a redirect to another origin.
 * COURIER_E_INVALID_ARGUMENT for a control character, a space in a token, or a ':' in a user. */
int courier_request_set_basic_auth(courier_request *request, const char *user, const char *password);
int courier_request_set_bearer(courier_request *request, const char *token);
/* Digest authentication (RFC 7616: MD5, SHA-256, SHA-512-256 and their -sess forms, qop auth;
 * curl's CURLAUTH_DIGEST): the request goes out without credentials, and a 401 offering Digest is
 * answered once (again only for a stale nonce), on the same URL, with the body sent again (not
 * for a body read from a callback); the 401 is dropped, and is the response when the answer is
 * refused. Each redirect hop is answered for its own URI; the answer never goes to another
 * origin. NULL user removes it. The engine's setting applies to requests created afterwards.
 * COURIER_E_INVALID_ARGUMENT for a control character in the user name. */
int courier_engine_set_digest_auth(courier_engine *engine, const char *user, const char *password);
/* Basic credentials from a .netrc file (curl's CURLOPT_NETRC_FILE; NULL path: $HOME/.netrc): the
 * entry for the request's host (with a user in the URL, that user's; else the "default" entry)
 * becomes its Basic authentication, unless it has credentials of its own already. Looked up now,
 * for the URL the request has. A missing file or host is no error (curl's rule: no credentials);
 * COURIER_E_NETRC for a file that breaks the format (it is refused whole), COURIER_E_FILE_READ
 * for one that cannot be read. */
int courier_request_set_netrc(courier_request *request, const char *path);
int courier_request_set_digest_auth(courier_request *request, const char *user, const char *password);

/* Retries (curl's --retry; OCNet's retry request). After a failed attempt the request is sent
 * again `count` times at most, waiting `intervals_ms[i]` before retry i+1 (the last value repeats;
 * NULL/0 values: 1000 ms); a waiting retry holds no connection and no place of the queue's width.
 * Retried by default: idempotent methods (or requests with an Idempotency-Key header), failures
 * before any response head (refused or timed-out connects, resets, closes, silence) and the
 * statuses 408, 429, 502, 503, 504; never a TLS verification failure. Retry-After lengthens a
 * wait (up to 60 s, see below). Each origin has a retry budget shared by every request in the
 * process (nine retries from full, then about one per five successes), so a failing server gets
 * a few retries in total, not `count` from every caller. A connect that failed for want of a
 * route (COURIER_E_CONNECT_NO_ROUTE: the link is down) takes no token, and when its interval ends
 * with the network still down, the retry waits for the network to come back (at most 60 s, or
 * to the total timeout) instead of failing again at once.
 * `flags`: COURIER_RETRY_* or'ed. count 0 turns retries off. */
#define COURIER_RETRY_BACKOFF        1u  /* past the list, each wait doubles (up to max_interval) */
#define COURIER_RETRY_JITTER         2u  /* each wait drawn between half of it and all of it */
#define COURIER_RETRY_ALL_ERRORS     4u  /* every failure of the server, as curl --retry-all-errors */
#define COURIER_RETRY_NON_IDEMPOTENT 8u  /* POST and PATCH too, without an Idempotency-Key */
#define COURIER_RETRY_NO_BUDGET      16u /* retry whatever other requests to the origin did */
int courier_request_set_retry(courier_request *request, int count, const int64_t *intervals_ms, size_t n, unsigned flags);

/* After courier_request_set_retry: no retry starts later than `max_time_ms` after the request was
 * queued (curl's --retry-max-time; 0: no limit); a Retry-After longer than `retry_after_limit_ms`
 * is not waited for (0: keep 60 s); backoff stops growing at `max_interval_ms` (0: keep 60 s). */
int courier_request_set_retry_limits(courier_request *request, int64_t max_time_ms, int64_t retry_after_limit_ms,
                                     int64_t max_interval_ms);

/* After courier_request_set_retry: the statuses that are retried instead of 408/429/502/503/504. */
int courier_request_set_retry_statuses(courier_request *request, const int *statuses, size_t n);

/* Asked before each retry on the loop thread (keep it short): `retry` is its number (1 for the
 * first), and either `code` is the failure (a COURIER_E_* code) or `status` the response status
 * that is retried (the other is 0). Return non-zero to retry, 0 to stop: that failure or response
 * is the result. */
typedef int (*courier_retry_fn)(courier_request *request, int retry, int code, int status, void *user);
int courier_request_set_retry_callback(courier_request *request, courier_retry_fn retry, void *user);

/* Progress callback (set before sending). `user` is passed back untouched. */
int courier_request_set_progress(courier_request *request, courier_progress_fn progress, void *user);

/* ---- Streamed bodies ------------------------------------------------------------------------
 * Callbacks below run on the loop thread, must return quickly and must not block; `user` is
 * passed back untouched. Set them before sending.
 */

/* Called with each piece of the response body as it arrives (decoded when decompression is on).
 * Return `length` when taken, COURIER_WRITEFUNC_PAUSE to stop reading (the piece is offered again
 * after courier_request_resume; the server is slowed by TCP, nothing is buffered for you), or any
 * other value to fail the request with COURIER_E_FILE_WRITE. Several callbacks (and an output
 * file) may be set: each gets every piece, and one that pauses pauses all (the slowest sets the
 * pace). The body is then not kept in the response. */
typedef size_t (*courier_write_fn)(const void *data, size_t length, void *user);
int courier_request_add_write_callback(courier_request *request, courier_write_fn write, void *user);

/* Called once with the final response head (after redirects), before any body byte: `head` is
 * valid during the call only (status and header accessors work on it; do not free it). */
/*
 * A debug callback (curl's CURLOPT_DEBUGFUNCTION role, since 0.2): shown every exchange of the
 * request when its response head arrives, redirects' and retries' included, on Courier's thread,
 * in this order: COURIER_DEBUG_TEXT once per line about the connection ("  Trying 127.0.0.1:80...",
 * "Connected to host (ip) port n (#id)" or "Re-using existing connection #id with host h", the TLS
 * session and server certificate), each ending in "\n"; COURIER_DEBUG_HEADER_OUT with the request
 * head as sent (CRLF lines and the empty line); COURIER_DEBUG_HEADER_IN with the response head. `data`
 * is not NUL-terminated and valid during the call only; the callback must not free the request.
 * A response served from a cache is shown as one COURIER_DEBUG_TEXT line saying so and its head
 * (nothing was sent). A new connection's lines (since 0.4) are curl's -v lines: each address tried,
 * each TLS handshake message ("TLSv1.3 (OUT), TLS handshake, Client hello (1):"), the cipher,
 * ALPN and certificate chain; a request that fails before any response (a refused connect, a
 * failed handshake, an untrusted certificate) is shown those lines, up to where it stopped, as it
 * ends. A frozen request whose attempt got no answer is shown that attempt's lines and then
 * "Waiting in the outbox for the network (why)" as it begins to wait (since 0.5).
 * NULL removes it. courier_engine_set_debug gives requests created afterwards the same callback
 * (thread safety as courier_engine_set_accepted_status). Bodies are never shown. Nothing of this
 * costs a request without a callback.
 */
#define COURIER_DEBUG_TEXT       0
#define COURIER_DEBUG_HEADER_OUT 1
#define COURIER_DEBUG_HEADER_IN  2
typedef void (*courier_debug_fn)(courier_request *request, int kind, const char *data, size_t length, void *user);
int courier_request_set_debug(courier_request *request, courier_debug_fn debug, void *user);
int courier_engine_set_debug(courier_engine *engine, courier_debug_fn debug, void *user);

typedef void (*courier_head_fn)(courier_request *request, const courier_response *head, void *user);
int courier_request_set_head_callback(courier_request *request, courier_head_fn head, void *user);

/* The request body from a callback that fills `buffer` (up to `capacity` bytes) and returns the
 * count, 0 at the end, COURIER_READFUNC_PAUSE to wait for courier_request_resume, or
 * COURIER_READFUNC_ABORT. `length` is the body's size (the callback is not asked for more; ending
 * early fails the request), or -1 when unknown (sent chunked). The callback is read once: the
 * request is not replayed or redirected with its body (307/308). */
typedef int64_t (*courier_read_fn)(void *buffer, size_t capacity, void *user);
int courier_request_set_body_callback(courier_request *request, courier_read_fn read, int64_t length, void *user);

/* Resumes a request a write or read callback paused. Thread safety: any thread, also from a
 * callback; does nothing for a request that is not paused. */
int courier_request_resume(courier_request *request);

/*
 * Reading the body yourself (since 0.3): instead of a write callback on Courier's thread, the body
 * waits in a buffer for courier_request_read, called from any thread of yours. A runtime that must
 * take a lock to run a callback (Python's GIL, a VM's thread attach) pays one call per buffer-full
 * instead of one callback per socket read, and the copy lands in memory the caller owns.
 *
 * courier_request_set_body_reader (before sending): up to `buffer_size` bytes (0: 256 KiB; at least
 * 4 KiB, at most 256 MiB; more costs memory and saves hand-offs when each read is dear) wait for the reader; beyond
 * that the socket is not read until the reader takes them (TCP slows the server: memory stays at
 * about two buffers however slow the reader). Write callbacks and an output file may be set too:
 * each gets every piece, paced by the slowest. The body is then not kept in the response.
 *
 * courier_request_read: copies up to `capacity` bytes into `buffer` and sets `*received`, waiting up
 * to `timeout_ms` milliseconds for them (0: only what is there; -1: until they come or the request
 * ends). Returns COURIER_OK with *received > 0 for bytes; COURIER_OK with *received == 0 at the end
 * of the body (the request succeeded, or ended with COURIER_E_HTTP_STATUS: the body came whole);
 * COURIER_E_AGAIN when the time passed first (call again); otherwise the request's failure code
 * (courier_request_errmsg says more), also after a cancel. The end is known here before the done
 * callback runs. The head comes first through the head callback or the done callback's response.
 * While a call waits (nothing was there), `buffer` is lent to Courier's thread: the socket reads
 * land in it and the call returns with them in place, so a reader that keeps up with the network
 * copies nothing. It is Courier's until the call returns: no other thread may touch it meanwhile.
 * Without a `readable` callback and with nothing else taking the pieces (no write callback, output
 * file, cache or progress callback), the rest of a long plain-HTTP body with a Content-Length is
 * read by the calling thread itself, straight from the socket into `buffer`: no
 * hand-off between threads per read. Nothing changes for the caller: timeouts, cancels and the
 * request's deadlines behave as before, a reader that stops calling stops the reads, and the
 * connection goes back to the pool after the body.
 * Thread safety: any thread but Courier's own (COURIER_E_MISUSE from a callback, as for a request
 * never sent or without a reader); one reader at a time; the request must not be freed while a
 * call is in progress.
 *
 * An event loop that must not block reads with timeout 0 and waits for `readable` (may be NULL): it
 * is called on Courier's thread, once after each COURIER_E_AGAIN, when bytes or the end have come
 * (so a reader without a thread of its own is woken once per wait, not once per socket read; from
 * it, schedule the read on your loop — do not read there). Never called for a freed request.
 */
typedef void (*courier_readable_fn)(courier_request *request, void *user);
int courier_request_set_body_reader(courier_request *request, size_t buffer_size, courier_readable_fn readable, void *user);
int courier_request_read(courier_request *request, void *buffer, size_t capacity, size_t *received, int timeout_ms);

/* The readable callback as a descriptor (since 0.3), for a loop that polls descriptors (poll/epoll,
 * Python's asyncio add_reader) and had rather not run code on Courier's thread (a runtime with a
 * global lock would take it there once per wait). Poll it for reading; never read it: after a
 * COURIER_E_AGAIN it becomes readable when bytes or the end have come, and the next
 * courier_request_read clears it (a wake that finds nothing is harmless: read, then poll again).
 * It is an epoll set: for the rest of a long plain-HTTP body with a Content-Length (nothing else
 * taking the pieces), the socket itself joins it, and courier_request_read with timeout 0 reads
 * the socket straight into `buffer`, one copy per byte as for a blocking reader; the idle timeout
 * still applies, counted from the first read that found nothing. Call after
 * courier_request_set_body_reader and before sending; the same descriptor every time. It belongs
 * to the request: valid until courier_request_free (stop polling it first), never close it
 * yourself. COURIER_E_MISUSE without a body reader or once sent, COURIER_E_INVALID_ARGUMENT for a
 * NULL `fd` (*fd is -1 on failure). Thread safety: as the setters. */
int courier_request_get_readable_fd(courier_request *request, int *fd);

/* A multipart/form-data body (RFC 7578), parts in the order added: a field; bytes (copied; a file
 * upload when `filename` is given; `mime_type` NULL is application/octet-stream); a file streamed
 * from disk when sent (its size is taken then; `mime_type` NULL is guessed from the extension,
 * `filename` NULL is the path's last component). Replaces any other body. */
int courier_request_add_form_field(courier_request *request, const char *name, const char *value);
int courier_request_add_form_data(courier_request *request, const char *name, const void *data, size_t length,
                                  const char *mime_type, const char *filename);
int courier_request_add_form_file(courier_request *request, const char *name, const char *path,
                                  const char *mime_type, const char *filename);

/* A resumable download to `path`: the body goes to "<path>.courier-partial", described by
 * "<path>.courier-resume" (validator and length); a later request for the same resource (from any
 * process, from any URL) continues it with Range and If-Range; a changed resource starts over. A
 * break mid-body is continued up to `attempts` times within this request. On success the file
 * moves to `path`. */
int courier_request_set_resume_file(courier_request *request, const char *path, int attempts);

/* Chooses the download file from the final response head: return a path (copied at once) or NULL
 * to keep the body in the response. The file is staged and moved into place on success. */
typedef const char *(*courier_destination_fn)(courier_request *request, const courier_response *head, void *user);
int courier_request_set_destination(courier_request *request, courier_destination_fn choose, void *user);

/* When the body waits for "100 Continue": COURIER_EXPECT_AUTO (default), _ALWAYS or _NEVER. */
int courier_request_set_expect_continue(courier_request *request, int mode);

/* Most body bytes per second received and sent (0: no limit), enforced by pausing reads and
 * writes. */
int courier_request_set_rate_limit(courier_request *request, int64_t receive, int64_t send);

/*
 * Sends the request through the shared queue; `done` runs once, on the loop thread, when it ends
 * (never from inside this call). On error the callback is never called. A request is sent at
 * most once (COURIER_E_MISUSE the second time); `done` NULL is COURIER_E_MISUSE.
 * Thread safety: any thread.
 */
int courier_request_send(courier_request *request, courier_done_fn done, void *user);

/*
 * Sends the request; when it ends it is appended to the engine's completion queue (see
 * courier_engine_next_done and courier_engine_fd) instead of calling back. For hosts that would
 * rather poll than be called on a foreign thread (COURIER_CACHE_THEN_FRESH may append two entries
 * for the request: the preview, then the final one). COURIER_E_MISUSE when the request has no engine
 * of its own or the engine was destroyed. Thread safety: any thread.
 */
int courier_request_enqueue(courier_request *request);

/*
 * Sends the request and waits for it. Returns the outcome's code and, when a response arrived,
 * stores a new response handle in *response (owned by the caller; may be NULL when not wanted).
 * With COURIER_CACHE_THEN_FRESH only the final response is returned.
 * COURIER_E_MISUSE on the loop thread. Thread safety: any thread but the loop thread.
 */
int courier_request_perform(courier_request *request, courier_response **response);

/* Cancels the request wherever it is; its callback (or completion entry, or the waiting
 * courier_request_perform) reports COURIER_E_CANCELLED. Cancelling a finished or unsent request
 * does nothing (an unsent one is then cancelled as soon as it is sent). Returns at once; never
 * blocks. Thread safety: any thread, concurrently with the thread that sent the request or waits
 * for it — this is the call meant for another thread — but not after courier_request_free. */
int courier_request_cancel(courier_request *request);

/* Per-request user data (curl's CURLOPT_PRIVATE / CURLINFO_PRIVATE): a pointer Courier keeps
 * and never reads, so a callback that gets the request handle (done, progress, head, retry, body)
 * finds its context without a map. Set it any time before courier_request_free (also from a
 * callback); courier_request_user_data returns it (NULL when unset or for a bad handle). Setting
 * it returns COURIER_E_MISUSE only for a bad handle. Since 0.2. */
int courier_request_set_user_data(courier_request *request, void *data);
void *courier_request_user_data(const courier_request *request);

/* Detail of the request's last error (static text plus context); valid until the request is
 * freed or fails again. Never NULL. */
const char *courier_request_errmsg(const courier_request *request);

/* ---------------------------------------------------------------------------------------------
 * Responses (read-only; any thread; valid until courier_response_free)
 */

/*
 * Const-correctness (since 0.2): every accessor that only reads takes a const handle. Those that
 * return strings may still make and cache a NUL-terminated copy inside the handle on first use
 * (a header value, the URL), which is why they are safe from several threads at once.
 */

/* The HTTP status (100-999), or 0 for a NULL handle. */
int courier_response_status(const courier_response *response);

/* The body (decoded from gzip/deflate when that was on); *length receives its size. The pointer
 * stays valid until the response is freed. Empty (not NULL) for an empty body. */
const uint8_t *courier_response_body(const courier_response *response, size_t *length);

/* The body's size in bytes after decoding, also when it was written to a file (then
 * courier_response_body is empty); -1 for a NULL handle. */
int64_t courier_response_body_size(const courier_response *response);

/* Number of header fields, duplicates counted separately. */
size_t courier_response_header_count(const courier_response *response);

/* Field `index`: pointers into the response (not NUL-terminated) and their lengths.
 * COURIER_E_NOT_FOUND past the end. */
int courier_response_header_at(const courier_response *response, size_t index,
                               const char **name, size_t *name_length, const char **value, size_t *value_length);

/* The first value of a header (case-insensitive name), NUL-terminated, valid until the response
 * is freed; NULL when absent. */
const char *courier_response_header(const courier_response *response, const char *name);

/* The URL that answered, after redirects (NUL-terminated; valid until the response is freed). */
const char *courier_response_url(const courier_response *response);

/* A duration in seconds (one of COURIER_TIMING_*), or -1 for an unknown `which`. */
double courier_response_timing(const courier_response *response, int which);

/* Whether the response came over a connection that had served an earlier request. */
int courier_response_reused_connection(const courier_response *response);

/* Cookie jars (RFC 6265bis): cookies a response sets are stored, and sent with the requests
 * they match (host, path, Secure only over https or to a loopback host); every hop of a redirect
 * gets its own. A jar is shared by any number of requests and engines, from any thread; a
 * request keeps its jar alive. Files are curl's Netscape cookie files (-b/-c), written
 * atomically; loading a missing file is not an error. A "Cookie" header set by hand wins over the
 * jar. */
typedef struct courier_cookiejar courier_cookiejar;
int courier_cookiejar_create(courier_cookiejar **out);
int courier_cookiejar_load(courier_cookiejar *jar, const char *path);
int courier_cookiejar_save(courier_cookiejar *jar, const char *path);
size_t courier_cookiejar_count(courier_cookiejar *jar);   /* cookies stored, expired ones dropped */
int courier_cookiejar_clear(courier_cookiejar *jar);
void courier_cookiejar_free(courier_cookiejar *jar);       /* NULL is fine */
int courier_request_set_cookiejar(courier_request *request, courier_cookiejar *jar);   /* NULL: none */

/* HSTS (RFC 6797; curl's --hsts). A store of the hosts that said, over verified https, that they
 * are to be reached over https only (Strict-Transport-Security: max-age, includeSubDomains; never
 * an IP address). A request or redirect to http:// one of them goes to https:// instead (port 80
 * becoming 443, another port kept) before anything is sent. create: `path` (NULL: memory only) in
 * curl's file format (a missing file is an empty store; COURIER_E_FILE_READ for one that cannot be
 * read), written back by save, atomically (COURIER_E_FILE_WRITE). A store may be shared by any
 * number of engines, requests and threads; free it after them. */
typedef struct courier_hsts courier_hsts;
int courier_hsts_create(const char *path, courier_hsts **out);
int courier_hsts_save(courier_hsts *hsts);
int courier_hsts_requires_https(courier_hsts *hsts, const char *host);   /* 1 or 0 */
void courier_hsts_free(courier_hsts *hsts);                                /* NULL is fine */
int courier_engine_set_hsts(courier_engine *engine, courier_hsts *hsts);   /* NULL: none */
int courier_request_set_hsts(courier_request *request, courier_hsts *hsts);

/* A mock server for the application's own tests (httpx's MockTransport, OkHttp's MockWebServer):
 * the engine's requests (created afterwards) never open a socket; `handler` answers each one,
 * and Courier reads its reply with its own HTTP/1.1 parser, so redirects, cookies, the cache,
 * retries, authentication and hooks run as against a real server. The handler runs on Courier's
 * loop thread, one request at a time, and must answer at once: it gets the method, the target
 * (path and query), the fields as "Name: value\r\n" lines, the body (de-chunked), and fills
 * `reply` (valid during the call only) with courier_mock_reply_*: status 200 and no body unless
 * set; Content-Length is Courier's. The mock speaks HTTP/1.1 without TLS, whatever the scheme.
 * NULL handler: the network again. Thread safety as courier_engine_set_accepted_status. */
typedef struct courier_mock_reply courier_mock_reply;
typedef void (*courier_mock_fn)(void *user, const char *method, const char *target, const char *headers,
                                const void *body, size_t body_length, courier_mock_reply *reply);
int courier_engine_set_mock(courier_engine *engine, courier_mock_fn handler, void *user);
int courier_mock_reply_set_status(courier_mock_reply *reply, int status);   /* 100 to 999 */
int courier_mock_reply_add_header(courier_mock_reply *reply, const char *name, const char *value);
int courier_mock_reply_set_body(courier_mock_reply *reply, const void *body, size_t length);

/* Proxies. `proxy` in curl's syntax, "[scheme://][user:password@]host[:port]" (port 1080 by
 * default, 443 for https://; credentials percent-decoded and sent only to the proxy), used for
 * every scheme. With http:// (the default) http URLs are forwarded in absolute form, https ones go
 * through a CONNECT tunnel with TLS still verified against the origin; credentials go as
 * Proxy-Authorization: Basic. https:// is the same over TLS with the proxy (verified against its
 * name: courier_*_set_proxy_tls), so an https URL runs TLS inside TLS.
 * With socks5h:// (the proxy resolves the origin's name) or socks5:// (Courier resolves it and
 * gives the proxy an IPv4 address when it has one) every URL goes through the SOCKS5 proxy's
 * connection (RFC 1928), TLS end to end inside; credentials are its user/password login (RFC 1929). NULL follows the environment with curl's
 * rules (http_proxy -- lower case only --, https_proxy, all_proxy, no_proxy; the default of every
 * request); "" turns proxies off. `no_proxy` (NULL: the environment's with proxy NULL, else none)
 * lists hosts reached directly: names (matching subdomains too), addresses, CIDR networks, "*".
 * Connections through a proxy never serve direct requests, nor the other way round.
 * COURIER_E_PROXY_UNSUPPORTED for another scheme (socks4://), COURIER_E_INVALID_ARGUMENT for a
 * malformed string. The proxy's own failures: COURIER_E_DNS_PROXY, COURIER_E_CONNECT_PROXY,
 * COURIER_E_PROXY_REFUSED (courier_response_status is not set; the error message has the status),
 * COURIER_E_PROXY_HANDSHAKE, COURIER_E_PROXY_CLOSED; an http request the proxy refuses gets its
 * response (407 when it wants credentials); for SOCKS5 COURIER_E_PROXY_SOCKS_CONNECT (its reply
 * refused the origin: the message names the reply), COURIER_E_PROXY_SOCKS_AUTH,
 * COURIER_E_PROXY_SOCKS_HANDSHAKE. The engine's setting applies to requests created
 * afterwards (thread safety as courier_engine_set_accepted_status). */
int courier_engine_set_proxy(courier_engine *engine, const char *proxy, const char *no_proxy);
int courier_request_set_proxy(courier_request *request, const char *proxy, const char *no_proxy);
/* http URLs through a CONNECT tunnel too (1), as https ones always go, instead of being forwarded
 * in absolute form (0, the default): curl's --proxytunnel (since 0.4). Kept across
 * courier_*_set_proxy calls, in either order. */
int courier_engine_set_proxy_tunnel(courier_engine *engine, int tunnel);
int courier_request_set_proxy_tunnel(courier_request *request, int tunnel);
/* How an https:// proxy's own certificate is checked (curl's --proxy-cacert, --proxy-capath,
 * --proxy-insecure): besides the system's roots, the CAs in `ca_file` and `ca_directory` (each
 * may be NULL), against the proxy's name; verify 0 accepts any certificate from the proxy (the
 * origin's checks are unchanged: TLS with it runs end to end inside). Kept across
 * courier_*_set_proxy calls, in either order. COURIER_E_INVALID_ARGUMENT for verify other than
 * 0 or 1; a CA file that does not load fails the requests through the proxy with
 * COURIER_E_TLS_CA_FILE. Thread safety as courier_engine_set_accepted_status. */
int courier_engine_set_proxy_tls(courier_engine *engine, const char *ca_file, const char *ca_directory, int verify);
int courier_request_set_proxy_tls(courier_request *request, const char *ca_file, const char *ca_directory, int verify);

/* Auth challenges. Requests of the engine (created afterwards, without an Authorization of their
 * own) send `initial` ("Bearer <token>" or "Basic <base64 of user:password>"; NULL for none).
 * When the origin answers 401, or a proxy 407, `challenge` is asked for new credentials and the
 * request is sent once more with them; however many requests are refused at once, it runs ONCE,
 * and they all replay with its answer; later requests start with it. It runs on a thread of its
 * own (not Courier's loop: it may block, and may perform requests itself, e.g. to a token
 * endpoint), one call at a time. It gets the status, the refused URL, the WWW-Authenticate (or
 * Proxy-Authenticate) values joined with ", " ("" for a refused CONNECT), and is_proxy; it
 * returns 1 after writing the new value (as `initial`, NUL-terminated, at most `capacity` bytes
 * with the NUL) to `credentials`, or 0 to let the refusal be the result (as does a value that is
 * not Bearer or Basic; a proxy takes Basic only). A replayed request refused again gets its
 * response. Requests with a write or head callback are not replayed. NULL `challenge` removes
 * the authenticator. COURIER_E_INVALID_ARGUMENT for a malformed `initial`. Thread safety: as
 * courier_engine_set_accepted_status. */
typedef int (*courier_challenge_fn)(void *user, int status, const char *url, const char *challenges, int is_proxy,
                                    char *credentials, size_t capacity);
int courier_engine_set_authenticator(courier_engine *engine, const char *initial, courier_challenge_fn challenge, void *user);

/* How long requests refused at once wait for the challenge callback: after `milliseconds`
 * (default 30000) they get their refusal (their 401 or 407) as if it had returned 0, so a token
 * endpoint that hangs never holds them; what the callback returns later still serves the requests
 * that follow. A request cancelled (or freed) while it waits ends at once with
 * COURIER_E_CANCELLED. Applies to the engine's authenticator now and when set again;
 * COURIER_E_INVALID_ARGUMENT for milliseconds <= 0. Thread safety: as
 * courier_engine_set_accepted_status. */
int courier_engine_set_challenge_timeout(courier_engine *engine, int64_t milliseconds);

/* Engine hooks: where the application steps into every request of the engine created afterwards
 * (each may be NULL; one call sets all four and `user` for them; thread safety as
 * courier_engine_set_accepted_status).
 *
 * request: just before a request is built for sending (on the sending thread; again when a
 *   challenge replays it), with its final method, URL, merged headers and body in a
 *   courier_outgoing valid during the call; it may set or remove fields (signing). Non-zero fails
 *   the request with COURIER_E_REJECTED, before any I/O.
 * response: every response that arrived, of any status, borrowed during the call, on the loop
 *   thread (keep it quick); non-zero fails the request with COURIER_E_REJECTED, the response still
 *   delivered (a 200 carrying an error body), and a download is not moved into place.
 * redirect: before each redirect is followed, on the loop thread: COURIER_REDIRECT_FOLLOW,
 *   COURIER_REDIRECT_REFUSE (the request fails with COURIER_E_REDIRECT_REFUSED), or
 *   COURIER_REDIRECT_REWRITE after writing another URL (absolute, or relative to `from`;
 *   NUL-terminated, at most `capacity` bytes) to `rewrite`.
 * metrics: every request that reached the network, when it ends, before its outcome is
 *   delivered, on the loop thread: the request, the response (NULL when none arrived; borrowed:
 *   courier_response_timing and friends work on it) and the final code. */
typedef struct courier_outgoing courier_outgoing;
#define COURIER_REDIRECT_FOLLOW  0
#define COURIER_REDIRECT_REFUSE  1
#define COURIER_REDIRECT_REWRITE 2
typedef int (*courier_request_hook_fn)(courier_outgoing *request, void *user);
typedef int (*courier_response_hook_fn)(courier_response *response, void *user);
typedef int (*courier_redirect_hook_fn)(int status, const char *from, const char *to, char *rewrite, size_t capacity, void *user);
typedef void (*courier_metrics_hook_fn)(courier_request *request, courier_response *response, int code, void *user);
int courier_engine_set_hooks(courier_engine *engine, courier_request_hook_fn request, courier_response_hook_fn response,
                             courier_redirect_hook_fn redirect, courier_metrics_hook_fn metrics, void *user);
/* Inside a request hook. Strings stay valid until the hook returns; NULL for a NULL handle or a
 * missing field. The body is NULL (and *length 0) unless it is in memory. set_header replaces
 * every field of that name (NULL value: removes them); COURIER_E_INVALID_HEADER for CR, LF, NUL
 * or a bad name. */
const char *courier_outgoing_method(courier_outgoing *request);
const char *courier_outgoing_url(courier_outgoing *request);
const char *courier_outgoing_header(courier_outgoing *request, const char *name);
const void *courier_outgoing_body(courier_outgoing *request, size_t *length);
int courier_outgoing_set_header(courier_outgoing *request, const char *name, const char *value);

/* Groups (OCNet's group queue): requests that run together through the shared queue (its width
 * still bounds them) and end with one completion. COURIER_GROUP_ALL_SETTLED waits for every
 * member; COURIER_GROUP_FAIL_FAST cancels the others at the first failure. The group does not own
 * its requests: keep them until the group has finished (a member freed while running ends as
 * COURIER_E_CANCELLED), then free them and the group. A request in a group must not be sent
 * otherwise; a group runs once. Thread safety: any thread. */
typedef struct courier_group courier_group;
#define COURIER_GROUP_ALL_SETTLED 0
#define COURIER_GROUP_FAIL_FAST   1
int courier_group_create(int mode, courier_group **out);
int courier_group_add(courier_group *group, courier_request *request);   /* COURIER_E_MISUSE once sent */
size_t courier_group_count(const courier_group *group);

/* Called once on the loop thread when every member has finished; `first_failure` is the index of
 * the first member (by time) that failed, or -1. */
typedef void (*courier_group_done_fn)(courier_group *group, int first_failure, void *user);
int courier_group_send(courier_group *group, courier_group_done_fn done, void *user);

/* Sends every member and waits (never from a callback): COURIER_OK when all succeeded, else the
 * code of the first failure. */
int courier_group_perform(courier_group *group);

/* After the group finished: member `index`'s code, and its response in `*response` (NULL when none
 * arrived; owned by the group, valid until courier_group_free). COURIER_E_INVALID_ARGUMENT for an
 * index out of range or a group still running. */
int courier_group_result(courier_group *group, size_t index, courier_response **response);

int courier_group_cancel(courier_group *group);   /* cancels every member still running */
void courier_group_free(courier_group *group);     /* NULL is fine */

/* Chains (OCNet's chain queue): requests that run one after another in the order added, each
 * through the shared queue once the previous one succeeded. The chain stops at the first failure.
 * Between steps, `next` (optional, on the loop thread: no blocking) gets the index of the step
 * that just succeeded, its response (borrowed) and the next request, not sent yet: it may change
 * it (headers, parameters, body: a token from a login's answer) and returns 0 to go on or non-zero
 * to stop the chain there. Like a group, a chain does not own its requests (keep them until it
 * finished, then free them and the chain) and runs once; courier_chain_cancel cancels the step
 * running and starts no other. Thread safety: any thread. */
typedef struct courier_chain courier_chain;
typedef int (*courier_chain_next_fn)(courier_chain *chain, size_t index, courier_response *previous, courier_request *next,
                                     void *user);
int courier_chain_create(courier_chain **out);
int courier_chain_add(courier_chain *chain, courier_request *request);   /* COURIER_E_MISUSE once sent */
int courier_chain_set_next(courier_chain *chain, courier_chain_next_fn next, void *user);
size_t courier_chain_count(const courier_chain *chain);
/* Called once on the loop thread when the chain ended: `failed_step` is the index of the step
 * that failed, or -1; `stopped_early` is 1 when `next` stopped it. */
typedef void (*courier_chain_done_fn)(courier_chain *chain, int failed_step, int stopped_early, void *user);
int courier_chain_send(courier_chain *chain, courier_chain_done_fn done, void *user);
/* Runs the chain and waits (never from a callback): COURIER_OK, or the failed step's code. */
int courier_chain_perform(courier_chain *chain);
/* How many steps ran (a step cancelled before it started counts, with COURIER_E_CANCELLED). */
size_t courier_chain_ran(const courier_chain *chain);
/* After the chain ended: step `index`'s code and its response in `*response` (NULL when none
 * arrived; owned by the chain, valid until courier_chain_free). COURIER_E_INVALID_ARGUMENT for a
 * step that did not run or a chain still running. */
int courier_chain_result(courier_chain *chain, size_t index, courier_response **response);
int courier_chain_cancel(courier_chain *chain);
void courier_chain_free(courier_chain *chain);     /* NULL is fine */

/* How many retries the request made before this response (0 when the first attempt answered). */
int courier_response_retries(const courier_response *response);

/* Why retry `index` (from 0) happened: the COURIER_E_* code of the failure, or 0 with `*status`
 * set to the retried response's status. -COURIER_E_INVALID_ARGUMENT for an index out of range. */
int courier_response_retry_reason(const courier_response *response, int index, int *status);

/* Where the response came from: one of COURIER_PHASE_* (-COURIER_E_MISUSE for a bad handle). */
int courier_response_cache_phase(const courier_response *response);

/* 1 for the first of the two deliveries of COURIER_CACHE_THEN_FRESH (the stored response; the
 * network's answer follows), else 0. */
int courier_response_is_preview(const courier_response *response);

/* curl's %{cache_status}: "hit", "miss", "revalidated", "stale" or "bypass" (static until the
 * response is freed); NULL for a bad handle. */
const char *courier_response_cache_status(const courier_response *response);

/* What else the response can tell (curl's CURLINFO_* role, as Swift's Response.metrics), all
 * since 0.2. Strings are NUL-terminated and valid until the response is freed.
 *   reason: the status line's reason phrase ("" when the server sent none; NULL for a bad handle).
 *   http_version: 10, 11 or 20 (0 when no head arrived).
 *   redirect_count: redirects followed before this response.
 *   history: the response of redirect `index` (0 is the first URL's 3xx), with its status,
 *     reason, URL and headers (no body); owned by `response` and freed with it (const: it is
 *     never passed to courier_response_free, where it would be a no-op); NULL past the end.
 *   bytes_sent: request bytes written, head and body, over every exchange; bytes_received: body
 *     bytes of the final response as they came off the wire (before decoding). -1 for a bad handle.
 *   remote_address: "ip:port" of the last connection ("[::1]:8080" for IPv6; "" when none).
 *   tls: for https, whether the last handshake resumed a session (*resumed 0/1) and OpenSSL's
 *     verification result (*verify_result, X509_V_OK = 0; curl's ssl_verify_result); returns
 *     COURIER_E_NOT_FOUND for plain http. Either pointer may be NULL.
 *   trailer_count / trailer_at: the trailer fields of a chunked response, in order. */
const char *courier_response_reason(const courier_response *response);
int courier_response_http_version(const courier_response *response);
int courier_response_redirect_count(const courier_response *response);
const courier_response *courier_response_history(const courier_response *response, size_t index);
int64_t courier_response_bytes_sent(const courier_response *response);
int64_t courier_response_bytes_received(const courier_response *response);
const char *courier_response_remote_address(const courier_response *response);
int courier_response_tls(const courier_response *response, int *resumed, long *verify_result);
size_t courier_response_trailer_count(const courier_response *response);
int courier_response_trailer_at(const courier_response *response, size_t index, const char **name, const char **value);

/* DESTRUCTOR. NULL is a no-op. Any thread. */
void courier_response_free(courier_response *response);

/* The network, as Courier's loop sees it: a netlink socket tells it of link, address and route
 * changes, and the default route's interface is classified from sysfs (wireless: wifi; wwan
 * devices, modem drivers, PPP: cellular; anything else: wired; no default route: none). The shared
 * queue's width follows it (6 on wifi and wired, 2 on cellular, 0 there in wifi-only mode) until
 * the application sets a width (courier_queue_set_width), and again after
 * courier_queue_follow_network. COURIER_NETWORK in the environment (wired, wifi, cellular, none)
 * forces a kind, as courier_network_set_override does (-1: back to what the system says). */
#define COURIER_NETWORK_NONE     0
#define COURIER_NETWORK_WIRED    1
#define COURIER_NETWORK_WIFI     2
#define COURIER_NETWORK_CELLULAR 3

/* The status now: its kind, and the interface (NUL-terminated, truncated to `capacity`; "" for
 * none). Blocks briefly (starts the loop if needed); COURIER_E_MISUSE on Courier's loop thread. */
int courier_network_status(int *kind, char *interface, size_t capacity);

/* Calls `callback` with each new status, on Courier's loop thread (keep it short; the interface
 * string is valid during the call), until courier_network_unwatch(*id); a watch outlives
 * courier_shutdown (the next loop reports to it). Any thread. */
typedef void (*courier_network_fn)(void *user, int kind, const char *interface);
int courier_network_watch(courier_network_fn callback, void *user, int *id);
void courier_network_unwatch(int id);
int courier_network_set_override(int kind);
int courier_queue_follow_network(int wifi, int wired, int cellular, int wifi_only);

/* The same changes through an engine's descriptor, for programs that poll rather than take
 * callbacks on Courier's thread: after courier_engine_watch_network(engine, 1) each new status is
 * queued on the engine (the latest 32 are kept) and courier_engine_fd is readable until they are
 * taken (along with finished requests: take both). courier_engine_watch_network(engine, 0) stops
 * and drops what was not taken; courier_engine_destroy stops it too. Any thread. */
int courier_engine_watch_network(courier_engine *engine, int enable);

/* Takes the oldest queued network change: COURIER_OK with its kind and interface (as
 * courier_network_status), COURIER_E_NOT_FOUND when none waits. Never blocks. Any thread. */
int courier_engine_next_network(courier_engine *engine, int *kind, char *interface, size_t capacity);

/* Per-host reachability: why a host can or cannot be reached now (append only). */
#define COURIER_REACH_CONNECTED      0  /* a connection to it succeeded since the network last changed */
#define COURIER_REACH_ROUTED         1  /* the kernel has a route to its address; no recent attempt failed */
#define COURIER_REACH_NO_ROUTE       2  /* no route to any of its addresses (no network, or none going there) */
#define COURIER_REACH_UNRESOLVABLE   3  /* its name does not resolve */
#define COURIER_REACH_CONNECT_FAILED 4  /* the latest connection attempt (within a minute) was refused */
#define COURIER_REACH_TIMED_OUT      5  /* the latest connection attempt (within a minute) timed out */

/* Whether `host` (a name or an IP literal) can be reached: the kernel's route to its addresses
 * (every routing table, as `ip route get`), then the latest connection attempt to it since the
 * network changed. Sets *reachable (1 for CONNECTED and ROUTED), *reason (COURIER_REACH_*) and the
 * route's interface (NUL-terminated, truncated to `capacity`; "" when none); any may be NULL. A
 * name is resolved first, so this blocks as long as a lookup may. COURIER_E_MISUSE for a NULL
 * host or on Courier's loop thread. Any other thread. */
int courier_network_reachability(const char *host, int *reachable, int *reason, char *interface, size_t capacity);

/* The outbox: freezable requests journaled on disk (one fsynced file each, in `path`) before
 * anything is sent, kept there while their host cannot be reached, sent again when the network
 * returns (or every `retry_ms`, 30000 for <= 0), and removed when their server answered (any
 * status) or the request is cancelled. Every attempt carries the entry's id as Idempotency-Key.
 * One owner per directory: COURIER_E_OUTBOX_LOCKED while another process (or handle) has it open;
 * damaged entries are set aside (renamed *.corrupt, counted by courier_outbox_set_aside_count);
 * COURIER_E_OUTBOX_FULL beyond 1000 entries or 64 MiB. The CLI's --outbox writes the same files. */
typedef struct courier_outbox courier_outbox;
int courier_outbox_open(const char *path, int64_t retry_ms, courier_outbox **outbox);
/* DESTRUCTOR: gives up the directory (entries stay for the next owner). NULL is a no-op. Close it
 * after the engines it is set on are destroyed. */
void courier_outbox_close(courier_outbox *outbox);
/* Entries waiting (negative: an error code). */
int courier_outbox_count(courier_outbox *outbox);
int courier_outbox_set_aside_count(courier_outbox *outbox);
/* Tries every waiting request again now. */
int courier_outbox_flush(courier_outbox *outbox);
/* Calls `callback` when a frozen request of `kind` ("" or NULL for the default kind) ends, in
 * this process or a later one (register before courier_engine_set_outbox, which replays what
 * earlier processes left): its id, kind, code (COURIER_OK when answered) and HTTP status (0
 * without a response). Runs on a thread of Courier's. */
typedef void (*courier_outbox_fn)(void *user, const char *id, const char *kind, int code, int status);
int courier_outbox_on_finished(courier_outbox *outbox, const char *kind, courier_outbox_fn callback, void *user);
/* Requests of the engine created afterwards may be frozen; entries left by earlier processes are
 * sent now, with the engine's options. NULL removes it. */
int courier_engine_set_outbox(courier_engine *engine, courier_outbox *outbox);
/* Makes the request freezable (before it is sent): journaled when sent, then as above; its
 * completion comes when its server answered. COURIER_E_MISUSE without an outbox on its engine;
 * a streamed or multipart body fails the request with COURIER_E_INVALID_ARGUMENT. */
int courier_request_freeze(courier_request *request, const char *kind);
/* The entry's id (its Idempotency-Key) once frozen, owned by the request; else NULL. */
const char *courier_request_outbox_id(const courier_request *request);

#ifdef __cplusplus
}
#endif

#endif /* COURIER_H */
