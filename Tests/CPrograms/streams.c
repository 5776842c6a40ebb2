/*
 * streams: the C ABI's streamed bodies, one subcommand each; prints what it saw and exits 0 when
 * it is as courier.h promises.
 *
 *   streams slow URL BYTES         a write callback that pauses (resumed from another thread): every
 *                                  byte arrives, after the head callback, and the peak RSS stays low
 *   streams upload URL BYTES       a read callback of unknown length (chunked) that pauses too
 *   streams form URL FILE          a multipart form (field, bytes, file): the server's echo on stdout
 *   streams resume CUT_URL URL PATH    a download broken mid-body, continued by a second request from
 *                                  another URL; then one that continues itself (attempts)
 *   streams fanout URL PATH        an output file and a slow write callback get the same body
 *   streams destination URL DIR    the destination callback names the file from the head
 *   streams pull URL BYTES PATH    courier_request_read from this thread (a slow reader, a small
 *                                  buffer) beside an output file: the same bytes in the same order,
 *                                  AGAIN while nothing came (URL answers after a delay), the end
 *                                  read again, a low peak RSS; then a pull cancelled mid-body
 *                                  ends with CANCELLED; then reads that never wait, woken by the
 *                                  readable callback once per AGAIN, then by the readable
 *                                  descriptor (poll) once per AGAIN
 */
#include <courier.h>

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what, int code) {
    fprintf(stderr, "streams: %s: %s (%d)\n", what, courier_strerror(code), code);
    return 1;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* The peak resident set of this process's own memory (VmHWM): getrusage's ru_maxrss inherits the
 * parent's high-water mark when the parent spawned us with vfork (posix_spawn). */
static long peak_rss_kib(void) {
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (status && fgets(line, sizeof line, status)) {
        if (strncmp(line, "VmHWM:", 6) == 0) kib = atol(line + 6);
    }
    if (status) fclose(status);
    return kib;
}

/* A consumer that refuses every other piece (COURIER_WRITEFUNC_PAUSE) and is resumed by another
 * thread a millisecond later: the refused piece must come again, nothing may be lost or doubled. */
/* What a callback that pauses shares with the thread that resumes it (the first member of each
 * scenario's state, so one resumer serves both). */
struct pauser {
    courier_request *request;
    atomic_int paused;
    atomic_int stop;
};

/* Resumes the request a millisecond after its callback paused it, until told to stop. */
static void *resumer(void *context) {
    struct pauser *p = context;
    while (!atomic_load(&p->stop)) {
        sleep_ms(1);
        if (atomic_exchange(&p->paused, 0)) courier_request_resume(p->request);
    }
    return NULL;
}

struct slow_reader {
    struct pauser pause;
    atomic_llong bytes;
    atomic_int calls;
    atomic_int head_seen;
    atomic_int head_before_body;
    int status;
};

static size_t slow_write(const void *data, size_t length, void *user) {
    struct slow_reader *r = user;
    (void)data;
    if (atomic_fetch_add(&r->calls, 1) % 2 == 0) {
        atomic_store(&r->pause.paused, 1);
        return COURIER_WRITEFUNC_PAUSE;
    }
    if (atomic_load(&r->bytes) == 0 && atomic_load(&r->head_seen)) atomic_store(&r->head_before_body, 1);
    atomic_fetch_add(&r->bytes, (long long)length);
    return length;
}

static void on_head(courier_request *request, const courier_response *head, void *user) {
    struct slow_reader *r = user;
    (void)request;
    r->status = courier_response_status(head);
    atomic_store(&r->head_seen, 1);
}

static int slow(const char *url, long long expected) {
    struct slow_reader r = {0};
    int rc = courier_request_create(NULL, "GET", url, &r.pause.request);
    if (rc != COURIER_OK) return fail("create", rc);
    courier_request_add_write_callback(r.pause.request, slow_write, &r);
    courier_request_set_head_callback(r.pause.request, on_head, &r);
    pthread_t thread;
    pthread_create(&thread, NULL, resumer, &r.pause);
    courier_response *response = NULL;
    rc = courier_request_perform(r.pause.request, &response);
    atomic_store(&r.pause.stop, 1);
    pthread_join(thread, NULL);
    printf("code %d status %d bytes %lld calls %d head-first %d kept %lld peak-rss-kib %ld\n", rc, r.status,
           (long long)atomic_load(&r.bytes), atomic_load(&r.calls), atomic_load(&r.head_before_body),
           (long long)courier_response_body_size(response), peak_rss_kib());
    if (rc != COURIER_OK) return fail("perform", rc);
    size_t kept = 0;
    courier_response_body(response, &kept);
    if (atomic_load(&r.bytes) != expected || r.status != 200 || !atomic_load(&r.head_before_body) || kept != 0) return 1;
    courier_response_free(response);
    courier_request_free(r.pause.request);
    return 0;
}

/* An upload of unknown length from a callback that pauses every fourth call. */
struct producer {
    struct pauser pause;
    long long left;
    long long made;
    int calls;
};

static int64_t produce(void *buffer, size_t capacity, void *user) {
    struct producer *p = user;
    if (p->calls++ % 4 == 1) {
        atomic_store(&p->pause.paused, 1);
        return COURIER_READFUNC_PAUSE;
    }
    if (p->left == 0) return 0;
    size_t n = capacity < (size_t)p->left ? capacity : (size_t)p->left;
    unsigned char *out = buffer;
    for (size_t i = 0; i < n; i++) out[i] = (unsigned char)((p->made + (long long)i) * 7);
    p->left -= (long long)n;
    p->made += (long long)n;
    return (int64_t)n;
}

static int upload(const char *url, long long bytes) {
    struct producer p = {0};
    p.left = bytes;
    int rc = courier_request_create(NULL, "POST", url, &p.pause.request);
    if (rc != COURIER_OK) return fail("create", rc);
    rc = courier_request_set_body_callback(p.pause.request, produce, -1, &p);
    if (rc != COURIER_OK) return fail("body callback", rc);
    pthread_t thread;
    pthread_create(&thread, NULL, resumer, &p.pause);
    courier_response *response = NULL;
    rc = courier_request_perform(p.pause.request, &response);
    atomic_store(&p.pause.stop, 1);
    pthread_join(thread, NULL);
    if (rc != COURIER_OK) return fail("perform", rc);
    size_t length = 0;
    const uint8_t *body = courier_response_body(response, &length);
    printf("%.*s\n", (int)length, (const char *)body);
    courier_response_free(response);
    courier_request_free(p.pause.request);

    /* A callback that aborts fails the request with COURIER_E_BODY_SOURCE. */
    courier_request *aborting = NULL;
    courier_request_create(NULL, "POST", url, &aborting);
    struct producer none = {0};
    none.left = -1;
    rc = courier_request_set_body_callback(aborting, NULL, -1, &none);
    if (rc != COURIER_E_INVALID_ARGUMENT) return fail("NULL read callback accepted", rc);
    courier_request_free(aborting);
    return 0;
}

static int form(const char *url, const char *file) {
    courier_request *request = NULL;
    int rc = courier_request_create(NULL, "POST", url, &request);
    if (rc != COURIER_OK) return fail("create", rc);
    const unsigned char bytes[] = {0, 1, 2, 255};
    if ((rc = courier_request_add_form_field(request, "title", "a \"quoted\" value")) != COURIER_OK) return fail("field", rc);
    if ((rc = courier_request_add_form_data(request, "blob", bytes, sizeof bytes, NULL, "blob.bin")) != COURIER_OK) return fail("data", rc);
    if ((rc = courier_request_add_form_file(request, "upload", file, "text/plain", NULL)) != COURIER_OK) return fail("file", rc);
    if (courier_request_add_form_file(request, NULL, file, NULL, NULL) != COURIER_E_INVALID_ARGUMENT) return fail("NULL name accepted", 0);
    courier_response *response = NULL;
    rc = courier_request_perform(request, &response);
    if (rc != COURIER_OK) return fail("perform", rc);
    size_t length = 0;
    const uint8_t *body = courier_response_body(response, &length);
    fwrite(body, 1, length, stdout);
    courier_response_free(response);
    courier_request_free(request);
    return 0;
}

static long long file_size(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 ? (long long)info.st_size : -1;
}

static int download_once(const char *url, const char *path, int attempts) {
    courier_request *request = NULL;
    int rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return rc;
    courier_request_set_resume_file(request, path, attempts);
    courier_response *response = NULL;
    rc = courier_request_perform(request, &response);
    if (response) courier_response_free(response);
    courier_request_free(request);
    return rc;
}

static int resume(const char *cut_url, const char *url, const char *path) {
    char partial[4096];
    snprintf(partial, sizeof partial, "%s.courier-partial", path);
    int rc = download_once(cut_url, path, 0);
    printf("broken %d partial %lld final %lld\n", rc, file_size(partial), file_size(path));
    if (rc != COURIER_E_TRUNCATED_BODY || file_size(partial) <= 0 || file_size(path) != -1) return 1;
    rc = download_once(url, path, 0);
    printf("continued %d partial %lld final %lld\n", rc, file_size(partial), file_size(path));
    if (rc != COURIER_OK || file_size(partial) != -1) return 1;
    unlink(path);
    return 0;
}

static size_t slow_count(const void *data, size_t length, void *user) {
    (void)data;
    *(long long *)user += (long long)length;
    sleep_ms(1);
    return length;
}

static int fanout(const char *url, const char *path) {
    courier_request *request = NULL;
    int rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return fail("create", rc);
    long long counted = 0;
    courier_request_set_output_file(request, path);
    courier_request_add_write_callback(request, slow_count, &counted);
    courier_response *response = NULL;
    rc = courier_request_perform(request, &response);
    printf("code %d file %lld callback %lld\n", rc, file_size(path), counted);
    if (rc != COURIER_OK || counted != file_size(path) || counted <= 0) return 1;
    courier_response_free(response);
    courier_request_free(request);
    return 0;
}

static const char *choose(courier_request *request, const courier_response *head, void *user) {
    static char path[4096];
    (void)request;
    const char *etag = courier_response_header((courier_response *)head, "ETag");
    snprintf(path, sizeof path, "%s/status-%d-%s", (const char *)user, courier_response_status(head), etag && etag[0] ? "tagged" : "plain");
    return path;
}

static int destination(const char *url, const char *directory) {
    courier_request *request = NULL;
    int rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return fail("create", rc);
    courier_request_set_destination(request, choose, (void *)directory);
    courier_response *response = NULL;
    rc = courier_request_perform(request, &response);
    char expected[4096];
    snprintf(expected, sizeof expected, "%s/status-200-tagged", directory);
    printf("code %d file %lld\n", rc, file_size(expected));
    if (rc != COURIER_OK || file_size(expected) <= 0) return 1;
    courier_response_free(response);
    courier_request_free(request);
    return 0;
}

/* What the done callback of a pulled request saw. */
struct pulled {
    atomic_int done;
    int code;
};

static void on_pulled(courier_request *request, courier_response *response, int code, void *user) {
    struct pulled *p = user;
    (void)request;
    p->code = code;
    if (response) courier_response_free(response);
    atomic_store(&p->done, 1);
}

/* FNV-1a over a run of bytes, continued from `hash`. */
static unsigned long long fnv1a(unsigned long long hash, const unsigned char *bytes, size_t n) {
    for (size_t i = 0; i < n; i++) hash = (hash ^ bytes[i]) * 1099511628211ULL;
    return hash;
}

static unsigned long long fnv1a_file(const char *path) {
    unsigned long long hash = 14695981039346656037ULL;
    unsigned char block[65536];
    FILE *f = fopen(path, "rb");
    size_t n;
    while (f && (n = fread(block, 1, sizeof block, f)) > 0) hash = fnv1a(hash, block, n);
    if (f) fclose(f);
    return hash;
}

/* The readable callback's side of a reader that never waits in courier_request_read. */
struct readiness {
    atomic_int flag;
    atomic_int calls;
};

static void on_readable(courier_request *request, void *user) {
    struct readiness *r = user;
    (void)request;
    atomic_fetch_add(&r->calls, 1);
    atomic_store(&r->flag, 1);
}

static int pull(const char *url, long long expected, const char *path) {
    courier_request *request = NULL;
    int rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return fail("create", rc);
    unsigned char buffer[10000];
    size_t got = 7;
    /* Misuse the header promises an error for: before a reader is set, before sending. */
    if (courier_request_read(request, buffer, sizeof buffer, &got, 0) != COURIER_E_MISUSE || got != 0) return fail("read without a reader", 0);
    if (courier_request_read(NULL, buffer, sizeof buffer, &got, 0) != COURIER_E_MISUSE) return fail("read of NULL", 0);
    if (courier_request_set_body_reader(request, (size_t)1 << 40, NULL, NULL) != COURIER_E_INVALID_ARGUMENT) return fail("a 1 TiB buffer", 0);
    if (courier_request_set_body_reader(request, (size_t)-1, NULL, NULL) != COURIER_E_INVALID_ARGUMENT) return fail("a SIZE_MAX buffer", 0);
    if ((rc = courier_request_set_body_reader(request, 64 * 1024, NULL, NULL)) != COURIER_OK) return fail("set_body_reader", rc);
    if (courier_request_set_body_reader(request, 0, NULL, NULL) != COURIER_E_INVALID_ARGUMENT) return fail("a second reader", 0);
    if (courier_request_read(request, buffer, sizeof buffer, &got, 0) != COURIER_E_MISUSE) return fail("read before sending", 0);
    courier_request_set_output_file(request, path);
    struct pulled done = {0};
    if ((rc = courier_request_send(request, on_pulled, &done)) != COURIER_OK) return fail("send", rc);
    if (courier_request_read(request, NULL, 10, &got, 0) != COURIER_E_INVALID_ARGUMENT) return fail("read into NULL", 0);
    if (courier_request_read(request, buffer, sizeof buffer, NULL, 0) != COURIER_E_MISUSE) return fail("read without a count", 0);
    /* The server waits before answering (URL has ?delay=): nothing yet, with or without a wait. */
    int first_again = courier_request_read(request, buffer, sizeof buffer, &got, 0) == COURIER_E_AGAIN && got == 0
                      && courier_request_read(request, buffer, sizeof buffer, &got, 20) == COURIER_E_AGAIN && got == 0;
    unsigned long long hash = 14695981039346656037ULL;
    long long total = 0;
    int reads = 0, agains = 0;
    for (;;) {
        rc = courier_request_read(request, buffer, sizeof buffer, &got, 50);
        if (rc == COURIER_E_AGAIN) { agains++; continue; }
        if (rc != COURIER_OK) return fail("read", rc);
        if (got == 0) break;
        if (got > sizeof buffer) return fail("read more than the capacity", 0);
        hash = fnv1a(hash, buffer, got);
        total += (long long)got;
        if (++reads % 64 == 0) sleep_ms(1);  /* slower than the server */
    }
    /* Reading on after the end: the end again. */
    int end_again = courier_request_read(request, buffer, sizeof buffer, &got, 0) == COURIER_OK && got == 0;
    while (!atomic_load(&done.done)) sleep_ms(1);
    unsigned long long file_hash = fnv1a_file(path);
    printf("code %d bytes %lld reads %d agains %d first-again %d end-again %d same-as-file %d peak-rss-kib %ld\n", done.code, total, reads,
           agains, first_again, end_again, hash == file_hash, peak_rss_kib());
    courier_request_free(request);
    unlink(path);
    if (done.code != COURIER_OK || total != expected || !first_again || !end_again || hash != file_hash) return 1;

    /* The reader alone, blocking: a long body's reads are lent to this thread (nothing else takes
     * the pieces). The same bytes as the file had, and the end after them. */
    rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return fail("create", rc);
    courier_request_set_body_reader(request, 0, NULL, NULL);
    struct pulled alone = {0};
    courier_request_send(request, on_pulled, &alone);
    unsigned long long alone_hash = 14695981039346656037ULL;
    long long alone_bytes = 0;
    while ((rc = courier_request_read(request, buffer, sizeof buffer, &got, -1)) == COURIER_OK && got > 0) {
        alone_hash = fnv1a(alone_hash, buffer, got);
        alone_bytes += (long long)got;
    }
    while (!atomic_load(&alone.done)) sleep_ms(1);
    printf("alone: read %d, %lld bytes, same-as-file %d, done %d\n", rc, alone_bytes, alone_hash == file_hash, alone.code);
    courier_request_free(request);
    if (rc != COURIER_OK || alone.code != COURIER_OK || alone_bytes != expected || alone_hash != file_hash) return 1;

    /* Cancelled while the reader reads: the reader hears CANCELLED, not a short "end" (after the
     * bytes already buffered: only a body well beyond the buffer and the socket's is still running then). */
    if (expected <= 4 * 1024 * 1024) return 0;
    rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return fail("create", rc);
    courier_request_set_body_reader(request, 0, NULL, NULL);
    struct pulled cancelled = {0};
    courier_request_send(request, on_pulled, &cancelled);
    long long before = 0;
    while ((rc = courier_request_read(request, buffer, sizeof buffer, &got, -1)) == COURIER_OK && got > 0) {
        before += (long long)got;
        if (before >= 100000 && before - (long long)got < 100000) courier_request_cancel(request);
    }
    while (!atomic_load(&cancelled.done)) sleep_ms(1);
    printf("cancelled: read %d after %lld bytes, done %d\n", rc, before, cancelled.code);
    courier_request_free(request);
    if (rc != COURIER_E_CANCELLED || cancelled.code != COURIER_E_CANCELLED || before >= expected) return 1;

    /* An event loop's way: never wait in the read (timeout 0); after each AGAIN, wait for the
     * readable callback, which comes once per AGAIN. */
    rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return fail("create", rc);
    struct readiness ready = {0};
    courier_request_set_body_reader(request, 0, on_readable, &ready);
    struct pulled polled = {0};
    courier_request_send(request, on_pulled, &polled);
    long long polled_bytes = 0;
    int polled_agains = 0;
    for (;;) {
        atomic_store(&ready.flag, 0);
        rc = courier_request_read(request, buffer, sizeof buffer, &got, 0);
        if (rc == COURIER_E_AGAIN) {
            polled_agains++;
            while (!atomic_load(&ready.flag)) sleep_ms(1);
            continue;
        }
        if (rc != COURIER_OK || got == 0) break;
        polled_bytes += (long long)got;
    }
    while (!atomic_load(&polled.done)) sleep_ms(1);
    printf("polled: read %d, %lld bytes, %d agains, %d readable calls\n", rc, polled_bytes, polled_agains, atomic_load(&ready.calls));
    courier_request_free(request);
    if (rc != COURIER_OK || polled_bytes != expected || polled_agains < 1 || atomic_load(&ready.calls) != polled_agains) return 1;

    /* The same with the readable descriptor in poll() instead of a callback (never read: the
     * read clears it). A long body's socket joins it: the reads that never wait read it. */
    rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return fail("create", rc);
    int fd = 7, again_fd = -1;
    if (courier_request_get_readable_fd(request, &fd) != COURIER_E_MISUSE || fd != -1) return fail("a descriptor without a reader", 0);
    courier_request_set_body_reader(request, 0, NULL, NULL);
    if (courier_request_get_readable_fd(request, NULL) != COURIER_E_INVALID_ARGUMENT) return fail("a descriptor into NULL", 0);
    if (courier_request_get_readable_fd(NULL, &fd) != COURIER_E_MISUSE) return fail("a descriptor of NULL", 0);
    if ((rc = courier_request_get_readable_fd(request, &fd)) != COURIER_OK || fd < 0) return fail("get_readable_fd", rc);
    if (courier_request_get_readable_fd(request, &again_fd) != COURIER_OK || again_fd != fd) return fail("the same descriptor again", 0);
    struct pulled fd_polled = {0};
    courier_request_send(request, on_pulled, &fd_polled);
    if (courier_request_get_readable_fd(request, &again_fd) != COURIER_E_MISUSE) return fail("a descriptor once sent", 0);
    long long fd_bytes = 0;
    int fd_agains = 0, poll_failed = 0;
    for (;;) {
        rc = courier_request_read(request, buffer, sizeof buffer, &got, 0);
        if (rc == COURIER_E_AGAIN) {
            fd_agains++;
            struct pollfd ask = {.fd = fd, .events = POLLIN};
            if (poll(&ask, 1, 10000) != 1) { poll_failed = 1; break; }
            continue;
        }
        if (rc != COURIER_OK || got == 0) break;
        fd_bytes += (long long)got;
    }
    while (!atomic_load(&fd_polled.done)) sleep_ms(1);
    /* Polled once more after the end: nothing is left to say, so nothing wakes it. */
    struct pollfd after = {.fd = fd, .events = POLLIN};
    int quiet_after = poll(&after, 1, 100) == 0;
    printf("descriptor: read %d, %lld bytes, %d agains, poll failed %d, quiet after %d\n", rc, fd_bytes, fd_agains, poll_failed, quiet_after);
    courier_request_free(request);
    return rc == COURIER_OK && !poll_failed && quiet_after && fd_bytes == expected && fd_agains >= 1 ? 0 : 1;
}

int main(int argc, char **argv) {
    int rc = 2;
    if (argc >= 4 && strcmp(argv[1], "slow") == 0) rc = slow(argv[2], atoll(argv[3]));
    else if (argc >= 4 && strcmp(argv[1], "upload") == 0) rc = upload(argv[2], atoll(argv[3]));
    else if (argc >= 4 && strcmp(argv[1], "form") == 0) rc = form(argv[2], argv[3]);
    else if (argc >= 5 && strcmp(argv[1], "resume") == 0) rc = resume(argv[2], argv[3], argv[4]);
    else if (argc >= 4 && strcmp(argv[1], "fanout") == 0) rc = fanout(argv[2], argv[3]);
    else if (argc >= 4 && strcmp(argv[1], "destination") == 0) rc = destination(argv[2], argv[3]);
    else if (argc >= 5 && strcmp(argv[1], "pull") == 0) rc = pull(argv[2], atoll(argv[3]), argv[4]);
    else fprintf(stderr, "usage: streams slow|upload|form|resume|fanout|destination|pull ...\n");
    courier_shutdown();
    return rc;
}
