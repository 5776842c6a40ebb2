/*
 * proxy: requests through an HTTP proxy (Tests/Servers/http_proxy.py) from C: an engine's proxy,
 * a request's own, "" for none, no_proxy, https through CONNECT verified with the test CA, and
 * the proxy's failures as their own codes; exits 0 when every check holds.
 *
 *   proxy PROXY_URL HTTP_URL HTTPS_URL CA_FILE
 */
#define _GNU_SOURCE  /* memmem */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "proxy.c:%d: ", __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* Performs `request` (freed) and returns its code; *status gets the status (0 without one). */
static int perform(courier_request *request, int *status) {
    courier_response *response = NULL;
    int code = courier_request_perform(request, &response);
    *status = response ? courier_response_status(response) : 0;
    if (code != COURIER_OK) fprintf(stderr, "  (%s)\n", courier_request_errmsg(request));
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

/* How many times the proxy's log (asked directly) mentions `needle`. */
static int logged(const char *proxy, const char *needle) {
    char url[512];
    snprintf(url, sizeof url, "%s/log", proxy);
    courier_request *request = NULL;
    courier_response *response = NULL;
    int count = 0;
    if (courier_request_create(NULL, "GET", url, &request) == COURIER_OK && courier_request_set_proxy(request, "", NULL) == COURIER_OK
        && courier_request_perform(request, &response) == COURIER_OK) {
        size_t length = 0;
        const char *body = (const char *)courier_response_body(response, &length);
        const char *end = body + length;
        for (const char *at = body; at && at < end; at++) {
            at = memmem(at, (size_t)(end - at), needle, strlen(needle));
            if (!at) break;
            count++;
        }
    }
    courier_response_free(response);
    courier_request_free(request);
    return count;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: proxy PROXY_URL HTTP_URL HTTPS_URL CA_FILE\n");
        return 2;
    }
    const char *proxy = argv[1], *http = argv[2], *https = argv[3], *ca = argv[4];
    char line[600];
    snprintf(line, sizeof line, "\"GET %s/small\"", http);
    int status = 0;

    courier_engine *engine = NULL;
    CHECK(courier_engine_create(http, &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_proxy(engine, proxy, NULL) == COURIER_OK, "engine proxy");
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "through the engine's proxy: %d", status);
    CHECK(logged(proxy, line) == 1, "the proxy saw the absolute-form request");

    CHECK(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_proxy(request, "", NULL) == COURIER_OK, "\"\" for none");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "direct");
    CHECK(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_proxy(request, proxy, "127.0.0.0/8") == COURIER_OK, "no_proxy");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "direct by no_proxy");
    CHECK(logged(proxy, line) == 1, "neither went through the proxy");

    char url[512];
    snprintf(url, sizeof url, "%s/small", https);
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create https");
    CHECK(courier_request_set_tls_ca(request, ca, NULL) == COURIER_OK, "ca");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "https through the tunnel: %d", status);
    CHECK(logged(proxy, "\"CONNECT localhost:") == 1, "one CONNECT");

    CHECK(courier_request_create(engine, "GET", "https://refused.test/", &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_E_PROXY_REFUSED, "a refused tunnel");
    CHECK(courier_request_create(engine, "GET", "https://garbage.test/", &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_E_PROXY_HANDSHAKE, "a non-HTTP answer");
    CHECK(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_proxy(request, "127.0.0.1:1", NULL) == COURIER_OK, "an unreachable proxy");
    CHECK(perform(request, &status) == COURIER_E_CONNECT_PROXY, "its own connect code");
    CHECK((COURIER_E_CONNECT_PROXY & 0xff) == COURIER_E_CONNECT, "in the connect family");

    CHECK(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_proxy(request, "socks4://127.0.0.1:1080", NULL) == COURIER_E_PROXY_UNSUPPORTED, "socks4");
    CHECK(courier_request_set_proxy(request, "host:notaport", NULL) == COURIER_E_INVALID_ARGUMENT, "a bad port");
    CHECK(courier_request_set_proxy(request, NULL, NULL) == COURIER_OK, "NULL: the environment");
    courier_request_free(request);
    CHECK(courier_engine_set_proxy(NULL, proxy, NULL) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_request_set_proxy(NULL, proxy, NULL) == COURIER_E_MISUSE, "NULL request");
    CHECK(strcmp(courier_strerror(COURIER_E_PROXY_REFUSED), "the proxy refused the CONNECT tunnel") == 0, "strerror");
    courier_engine_destroy(engine);

    if (failures) {
        fprintf(stderr, "proxy: %d check(s) failed\n", failures);
        return 1;
    }
    printf("proxy: all checks passed\n");
    return 0;
}
