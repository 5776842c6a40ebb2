/*
 * https_proxy: requests through an HTTPS proxy (Tests/Servers/http_proxy.py behind tls_front.py)
 * from C: courier_*_set_proxy_tls for the proxy's certificate (kept across set_proxy calls), http
 * forwarded and https tunnelled inside TLS with the proxy; exits 0 when every check holds.
 *
 *   https_proxy HTTPS_PROXY_URL PLAIN_PROXY_URL HTTP_URL HTTPS_URL CA_FILE
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "https_proxy.c:%d: ", __LINE__);    \
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

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: https_proxy HTTPS_PROXY_URL PLAIN_PROXY_URL HTTP_URL HTTPS_URL CA_FILE\n");
        return 2;
    }
    const char *proxy = argv[1], *http = argv[3], *https = argv[4], *ca = argv[5];
    (void)argv[2];
    char url[600];
    int status = 0;

    courier_engine *engine = NULL;
    CHECK(courier_engine_create(http, &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_proxy_tls(engine, ca, NULL, 1) == COURIER_OK, "the proxy's CA");
    CHECK(courier_engine_set_proxy(engine, proxy, NULL) == COURIER_OK, "the proxy, after its TLS");
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "http forwarded inside TLS: %d", status);
    snprintf(url, sizeof url, "%s/small", https);
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create https");
    CHECK(courier_request_set_tls_ca(request, ca, NULL) == COURIER_OK, "the origin's CA");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "https: TLS inside TLS: %d", status);

    CHECK(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_proxy_tls(request, NULL, NULL, 1) == COURIER_OK, "the system's roots only");
    CHECK(perform(request, &status) == COURIER_E_TLS_UNTRUSTED, "the proxy's certificate is not trusted");
    CHECK(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_proxy_tls(request, NULL, NULL, 0) == COURIER_OK, "verify 0");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "any certificate accepted: %d", status);
    CHECK(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_proxy_tls(request, NULL, NULL, 2) == COURIER_E_INVALID_ARGUMENT, "verify 2");
    CHECK(courier_request_set_proxy_tls(NULL, NULL, NULL, 1) == COURIER_E_MISUSE, "NULL request");
    courier_request_free(request);
    CHECK(courier_engine_set_proxy_tls(NULL, ca, NULL, 1) == COURIER_E_MISUSE, "NULL engine");
    courier_engine_destroy(engine);

    if (failures) {
        fprintf(stderr, "https_proxy: %d check(s) failed\n", failures);
        return 1;
    }
    printf("https_proxy: all checks passed\n");
    return 0;
}
