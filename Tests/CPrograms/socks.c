/*
 * socks: requests through a SOCKS5 proxy (Tests/Servers/socks_proxy.py, which takes the login
 * "c:pw") from C: socks5h:// and socks5:// strings on an engine and a request, https inside with
 * the test CA, the login's refusal and the proxy's failures as their own codes; exits 0 when every
 * check holds.
 *
 *   socks PROXY_ADDRESS HTTP_URL HTTPS_URL CA_FILE     (PROXY_ADDRESS: 127.0.0.1:PORT)
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "socks.c:%d: ", __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* Performs a GET of `url` (relative to the engine's base when it has one) through `proxy` (NULL:
 * the engine's) and returns its code; *status gets the status (0 without one). */
static int get(courier_engine *engine, const char *url, const char *proxy, const char *ca, int *status) {
    courier_request *request = NULL;
    courier_response *response = NULL;
    int code = courier_request_create(engine, "GET", url, &request);
    if (code == COURIER_OK && proxy) code = courier_request_set_proxy(request, proxy, NULL);
    if (code == COURIER_OK && ca) code = courier_request_set_tls_ca(request, ca, NULL);
    if (code == COURIER_OK) code = courier_request_perform(request, &response);
    *status = response ? courier_response_status(response) : 0;
    if (code != COURIER_OK) fprintf(stderr, "  (%s: %s)\n", url, courier_request_errmsg(request));
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: socks PROXY_ADDRESS HTTP_URL HTTPS_URL CA_FILE\n");
        return 2;
    }
    const char *address = argv[1], *http = argv[2], *https = argv[3], *ca = argv[4];
    char remote[300], local[300], anonymous[300], url[600];
    snprintf(remote, sizeof remote, "socks5h://c:pw@%s", address);
    snprintf(local, sizeof local, "socks5://c:pw@%s", address);
    snprintf(anonymous, sizeof anonymous, "socks5h://%s", address);
    int status = 0;

    courier_engine *engine = NULL;
    CHECK(courier_engine_create(http, &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_proxy(engine, remote, NULL) == COURIER_OK, "the engine's proxy");
    CHECK(get(engine, "/small", NULL, NULL, &status) == COURIER_OK && status == 200, "http through socks5h: %d", status);
    snprintf(url, sizeof url, "%s/small", https);
    CHECK(get(engine, url, NULL, ca, &status) == COURIER_OK && status == 200, "https inside: %d", status);
    CHECK(get(engine, "/small", local, NULL, &status) == COURIER_OK && status == 200, "a request's socks5://: %d", status);
    CHECK(get(engine, "/small", anonymous, NULL, &status) == COURIER_E_PROXY_SOCKS_AUTH, "no login");
    CHECK(get(engine, "http://refused.test/", NULL, NULL, &status) == COURIER_E_PROXY_SOCKS_CONNECT, "refused by the proxy");
    CHECK(get(engine, "http://garbage.test/", NULL, NULL, &status) == COURIER_E_PROXY_SOCKS_HANDSHAKE, "not SOCKS5");
    CHECK(get(engine, "http://only.proxy.invalid/", local, NULL, &status) == COURIER_E_PROXY_SOCKS_CONNECT, "no address here");
    CHECK((COURIER_E_PROXY_SOCKS_AUTH & 0xff) == COURIER_E_PROXY, "in the proxy family");
    CHECK(strcmp(courier_strerror(COURIER_E_PROXY_SOCKS_AUTH), "the SOCKS5 proxy refused the authentication") == 0, "strerror");
    courier_engine_destroy(engine);

    if (failures) {
        fprintf(stderr, "socks: %d check(s) failed\n", failures);
        return 1;
    }
    printf("socks: all checks passed\n");
    return 0;
}
