/*
 * connection: curl's connection options from C (since 0.4): cipher lists, TLS 1.3 suites and
 * curves, ALPN off, minimum versions, the Happy Eyeballs delay, the 100-continue wait, the
 * response head's limits and an http URL through a proxy's CONNECT tunnel; the HTTP version
 * (since 0.6: HTTP/2 by ALPN against an nginx with http2, HTTP/1.1 when asked, a bad value
 * refused); the send limit apart from the idle one (since 0.6: a server that never reads the
 * body); a background upload pausing beside a foreground request (since 0.6); exits 0 when every
 * check holds.
 *
 *   connection SCRIPTED_URL HTTPS13_URL CA_FILE STREAM_URL PROXY_URL H2_URL
 */
#define _GNU_SOURCE  /* memmem */
#include <courier.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "connection.c:%d: ", __LINE__);     \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* Performs `request` (freed); returns its code, *status the status (0 without a response). */
static int perform(courier_request *request, int *status) {
    courier_response *response = NULL;
    int code = courier_request_perform(request, &response);
    *status = response ? courier_response_status(response) : 0;
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

/* The debug callback's text, collected (the connection lines: the handshake as -v shows it). */
static char debug_text[65536];
static size_t debug_length = 0;

static void collect(courier_request *request, int kind, const char *data, size_t length, void *user) {
    (void)request;
    (void)user;
    if (kind != COURIER_DEBUG_TEXT || debug_length + length >= sizeof debug_text) return;
    memcpy(debug_text + debug_length, data, length);
    debug_length += length;
    debug_text[debug_length] = 0;
}

static courier_request *tls_request(const char *url, const char *ca) {
    courier_request *request = NULL;
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create %s", url);
    CHECK(courier_request_set_tls_ca(request, ca, NULL) == COURIER_OK, "ca");
    debug_length = 0;
    debug_text[0] = 0;
    CHECK(courier_request_set_debug(request, collect, NULL) == COURIER_OK, "debug");
    return request;
}

/* Background work yields: a LOW upload of 32 MiB the server reads at 32 MB/s (about a second)
 * beside a request answered after 3 s is still running when that request ends (held while
 * it ran), then ends whole. */
static void background_yields(const char *stream) {
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    size_t large = 32u << 20;
    char *upload = calloc(1, large);
    char url[512];
    int status = 0, code = 0;
    courier_request *request = NULL;
    snprintf(url, sizeof url, "%s/upload?discard=1&slow=32000000", stream);
    courier_request *background = NULL;
    CHECK(courier_request_create(engine, "POST", url, &background) == COURIER_OK, "create");
    CHECK(courier_request_set_body(background, upload, large) == COURIER_OK, "body");
    CHECK(courier_request_set_priority(background, COURIER_PRIORITY_LOW) == COURIER_OK, "low");
    CHECK(courier_request_enqueue(background) == COURIER_OK, "enqueue");
    snprintf(url, sizeof url, "%s/blob/1000?delay=3000", stream);
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "the foreground request: %d", status);
    courier_request *finished = NULL;
    courier_response *response = NULL;
    CHECK(courier_engine_next_done(engine, &finished, &response, &code) == COURIER_E_NOT_FOUND,
          "the background upload ended while the foreground request ran");
    struct pollfd ready = {.fd = courier_engine_fd(engine), .events = POLLIN};
    while (courier_engine_next_done(engine, &finished, &response, &code) == COURIER_E_NOT_FOUND) {
        CHECK(poll(&ready, 1, 30000) == 1, "the upload never ended");
        if (failures) break;
    }
    size_t length = 0;
    const uint8_t *answer = response ? courier_response_body(response, &length) : NULL;
    CHECK(code == COURIER_OK && answer && memmem(answer, length, "\"length\": 33554432", 18), "the upload ended whole: %d %.*s",
          code, (int)length, answer ? (const char *)answer : "");
    courier_response_free(response);
    courier_request_free(finished);
    free(upload);
    courier_engine_destroy(engine);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: connection SCRIPTED_URL HTTPS13_URL CA_FILE STREAM_URL PROXY_URL H2_URL\n");
        return 2;
    }
    const char *scripted = argv[1], *https = argv[2], *ca = argv[3], *stream = argv[4], *proxy = argv[5], *h2 = argv[6];
    char url[512];
    int status = 0;
    courier_request *request = NULL;

    /* The response head: 256 KiB passes by default (curl's 300 KiB), a lower limit refuses it. */
    snprintf(url, sizeof url, "%s/big-head?kib=256", scripted);
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "a 256 KiB head: %d", status);
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_header_limits(request, 64 << 10, 0) == COURIER_OK, "limits");
    CHECK(perform(request, &status) == COURIER_E_HEADER_BYTES, "a 64 KiB limit");
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_header_limits(request, 0, 100) == COURIER_OK, "limits");
    CHECK(perform(request, &status) == COURIER_E_HEADER_COUNT, "a 100-field limit");

    /* TLS 1.3 suites and curves: what was asked is what the handshake used; a list that names
     * nothing usable fails before a byte is sent. */
    request = tls_request(https, ca);
    CHECK(courier_request_set_tls_ciphers(request, NULL, "TLS_AES_128_GCM_SHA256") == COURIER_OK, "suites");
    CHECK(courier_request_set_tls_curves(request, "P-384") == COURIER_OK, "curves");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "chosen suite: %d", status);
    CHECK(strstr(debug_text, "SSL connection using TLSv1.3 / TLS_AES_128_GCM_SHA256 / secp384r1") != NULL, "%s", debug_text);
    CHECK(strstr(debug_text, "TLS handshake, Client hello (1):") != NULL, "the handshake's messages: %s", debug_text);
    request = tls_request(https, ca);
    CHECK(courier_request_set_tls_ciphers(request, NULL, "TLS_NO_SUCH_SUITE") == COURIER_OK, "set");
    CHECK(perform(request, &status) == COURIER_E_TLS_CIPHER, "an unusable suite list");
    request = tls_request(https, ca);
    CHECK(courier_request_set_tls_ciphers(request, "NOT-A-CIPHER", NULL) == COURIER_OK, "set");
    CHECK(perform(request, &status) == COURIER_E_TLS_CIPHER, "an unusable cipher list");
    request = tls_request(https, ca);
    CHECK(courier_request_set_tls_curves(request, "no-curve") == COURIER_OK, "set");
    CHECK(perform(request, &status) == COURIER_E_TLS_CIPHER, "an unusable curve list");
    CHECK(strcmp(courier_strerror(COURIER_E_TLS_CIPHER), "no usable cipher, TLS 1.3 suite or curve in the list") == 0, "strerror");

    /* The system's roots: trusted beside the CA file by default; off, the file alone is (curl's
     * CURLOPT_CAINFO), and with neither nothing is. Per request and as an engine's default. */
    request = tls_request(https, ca);
    CHECK(courier_request_set_tls_system_roots(request, 0) == COURIER_OK, "system roots off");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "the CA file alone: %d", status);
    CHECK(courier_request_create(NULL, "GET", https, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_tls_system_roots(request, 2) == COURIER_E_INVALID_ARGUMENT, "2 is refused");
    CHECK(courier_request_set_tls_system_roots(request, 0) == COURIER_OK, "off");
    CHECK(perform(request, &status) == COURIER_E_TLS_UNTRUSTED, "nothing trusted");
    courier_engine *trusting = NULL;
    CHECK(courier_engine_create(NULL, &trusting) == COURIER_OK, "engine");
    CHECK(courier_engine_set_tls_system_roots(trusting, 0) == COURIER_OK && courier_engine_set_tls_system_roots(trusting, -1) == COURIER_E_INVALID_ARGUMENT,
          "the engine's default");
    CHECK(courier_request_create(trusting, "GET", https, &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_E_TLS_UNTRUSTED, "nothing trusted by the engine's default");
    CHECK(courier_engine_set_tls_ca(trusting, ca, NULL) == COURIER_OK, "the engine's CA file");
    CHECK(courier_request_create(trusting, "GET", https, &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "the engine's CA file alone: %d", status);
    courier_engine_destroy(trusting);

    /* ALPN off, and a minimum of TLS 1.0 (the newest both sides allow is still chosen). */
    request = tls_request(https, ca);
    CHECK(courier_request_set_tls_alpn(request, 0) == COURIER_OK, "alpn off");
    CHECK(courier_request_set_tls_versions(request, COURIER_TLS_1_0, 0) == COURIER_OK, "minimum 1.0");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "without ALPN: %d", status);
    CHECK(strstr(debug_text, "ALPN") == NULL && strstr(debug_text, "TLSv1.3") != NULL, "%s", debug_text);

    /* The 100-continue wait: a server that never says 100 gets the body after a short wait; a
     * wait longer than the total timeout fails the request. */
    static char body[1 << 20];
    memset(body, 'b', sizeof body);
    snprintf(url, sizeof url, "%s/upload?no100=1", stream);
    CHECK(courier_request_create(NULL, "PUT", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_body(request, body, sizeof body) == COURIER_OK, "body");
    CHECK(courier_request_set_expect_continue(request, COURIER_EXPECT_ALWAYS) == COURIER_OK, "expect");
    CHECK(courier_request_set_continue_timeout(request, 50) == COURIER_OK, "wait 50 ms");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "sent after the wait: %d", status);
    CHECK(courier_request_create(NULL, "PUT", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_body(request, body, sizeof body) == COURIER_OK, "body");
    CHECK(courier_request_set_expect_continue(request, COURIER_EXPECT_ALWAYS) == COURIER_OK, "expect");
    CHECK(courier_request_set_continue_timeout(request, 60000) == COURIER_OK, "wait a minute");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_TOTAL, 500) == COURIER_OK, "total");
    CHECK(perform(request, &status) == COURIER_E_TIMEOUT_TOTAL, "still waiting at the total deadline");

    /* The Happy Eyeballs delay is a setting (its effect: the CLI's --happy-eyeballs-timeout-ms test). */
    snprintf(url, sizeof url, "%s/echo", scripted);
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_happy_eyeballs(request, 100) == COURIER_OK, "delay");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "with a delay: %d", status);

    /* An http URL through the proxy's CONNECT tunnel: the proxy sees CONNECT, no GET. */
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(scripted, &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_proxy_tunnel(engine, 1) == COURIER_OK, "tunnel first");
    CHECK(courier_engine_set_proxy(engine, proxy, NULL) == COURIER_OK, "then the proxy");
    CHECK(courier_request_create(engine, "GET", "/echo", &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "through the tunnel: %d", status);
    courier_engine_destroy(engine);
    snprintf(url, sizeof url, "%s/log", proxy);
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "log");
    CHECK(courier_request_set_proxy(request, "", NULL) == COURIER_OK, "direct");
    courier_response *log = NULL;
    CHECK(courier_request_perform(request, &log) == COURIER_OK, "log");
    size_t length = 0;
    const char *text = log ? (const char *)courier_response_body(log, &length) : "";
    CHECK(memmem(text, length, "\"CONNECT 127.0.0.1:", 19) != NULL, "the proxy saw CONNECT");
    CHECK(memmem(text, length, "\"GET http://", 12) == NULL, "and no forwarded GET");
    courier_response_free(log);
    courier_request_free(request);

    /* The HTTP version: h2 by ALPN by default, 1.1 when asked, 20 / 11 in the response. */
    int versions[] = {COURIER_HTTP_VERSION_DEFAULT, COURIER_HTTP_VERSION_1_1, COURIER_HTTP_VERSION_2_ONLY};
    int expected[] = {20, 11, 20};
    for (int i = 0; i < 3; i++) {
        request = tls_request(h2, ca);
        CHECK(courier_request_set_http_version(request, versions[i]) == COURIER_OK, "http version %d", versions[i]);
        CHECK(courier_request_set_http2_ping_interval(request, 50) == COURIER_OK, "ping interval");
        courier_response *answer = NULL;
        CHECK(courier_request_perform(request, &answer) == COURIER_OK, "h2 request %d: %s", i, courier_request_errmsg(request));
        CHECK(answer && courier_response_http_version(answer) == expected[i], "version %d: %d", versions[i],
              answer ? courier_response_http_version(answer) : -1);
        courier_response_free(answer);
        courier_request_free(request);
    }
    CHECK(courier_request_create(NULL, "GET", h2, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_http_version(request, 9) == COURIER_E_INVALID_ARGUMENT, "a bad version is refused");
    CHECK(courier_request_set_http_version(NULL, COURIER_HTTP_VERSION_2) != COURIER_OK, "NULL is refused");
    CHECK(courier_request_set_http2_ping_interval(request, -1) == COURIER_E_INVALID_ARGUMENT, "a negative interval is refused");
    CHECK(courier_request_set_http2_ping_interval(NULL, 100) != COURIER_OK, "NULL is refused");
    courier_request_free(request);

    /* A server that never reads (the kernel accepts for it): the body stalls once the socket
     * buffers are full, and the send limit ends it, not the 30 s idle limit (the total, 10 s, is
     * the guard). An unknown kind is still refused. */
    int deaf = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t size = sizeof address;
    CHECK(deaf >= 0 && bind(deaf, (struct sockaddr *)&address, sizeof address) == 0 && listen(deaf, 1) == 0
          && getsockname(deaf, (struct sockaddr *)&address, &size) == 0, "a listening socket");
    snprintf(url, sizeof url, "http://127.0.0.1:%d/upload", ntohs(address.sin_port));
    size_t large = 64u << 20;
    char *upload = calloc(1, large);
    CHECK(courier_request_create(NULL, "PUT", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_body(request, upload, large) == COURIER_OK, "body");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_SEND, 300) == COURIER_OK, "send limit");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_IDLE, 30000) == COURIER_OK, "idle limit");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_TOTAL, 10000) == COURIER_OK, "total limit");
    CHECK(courier_request_set_timeout(request, 7, 300) == COURIER_E_INVALID_ARGUMENT, "an unknown kind is refused");
    int code = perform(request, &status);
    CHECK(code == COURIER_E_TIMEOUT_SEND, "the send limit ended it: %d", code);
    free(upload);
    close(deaf);

    background_yields(stream);

    if (failures) {
        fprintf(stderr, "connection: %d check(s) failed\n", failures);
        return 1;
    }
    printf("connection: all checks passed\n");
    return 0;
}
