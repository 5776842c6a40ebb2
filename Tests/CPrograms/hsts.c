/*
 * hsts: HSTS from C against nginx (/hsts sends Strict-Transport-Security): a store noted over
 * https, an http:// request then sent over https, the store saved in curl's format and read
 * again, NULLs; exits 0 when every check holds.
 *
 *   hsts HTTPS_ORIGIN HTTP_URL_OF_THE_SAME_PORT CA_FILE STORE_FILE
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "hsts.c:%d: ", __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* GETs `url` with the engine's settings; its status (0 without one). */
static int get(courier_engine *engine, const char *url) {
    courier_request *request = NULL;
    courier_response *response = NULL;
    int status = 0;
    if (courier_request_create(engine, "GET", url, &request) == COURIER_OK
        && courier_request_perform(request, &response) != COURIER_E_MISUSE && response) {
        status = courier_response_status(response);
    }
    courier_response_free(response);
    courier_request_free(request);
    return status;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: hsts HTTPS_ORIGIN HTTP_ORIGIN_OF_THE_SAME_PORT CA_FILE STORE_FILE\n");
        return 2;
    }
    char noted[512], plain[512];
    snprintf(noted, sizeof noted, "%s/hsts", argv[1]);
    snprintf(plain, sizeof plain, "%s/small", argv[2]);
    courier_hsts *store = NULL;
    CHECK(courier_hsts_create(argv[4], &store) == COURIER_OK, "a store from a file not there yet");
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_accepted_status(engine, 200, 600) == COURIER_OK, "every status");
    CHECK(courier_engine_set_tls_ca(engine, argv[3], NULL) == COURIER_OK, "the test CA");
    CHECK(courier_engine_set_hsts(engine, store) == COURIER_OK, "the store");
    CHECK(get(engine, plain) == 400, "before: plain HTTP to the TLS port");
    CHECK(get(engine, noted) == 200 && courier_hsts_requires_https(store, "localhost") == 1, "noted");
    CHECK(get(engine, plain) == 200, "after: upgraded to https");
    CHECK(courier_hsts_save(store) == COURIER_OK, "saved");
    courier_hsts *again = NULL;
    CHECK(courier_hsts_create(argv[4], &again) == COURIER_OK && courier_hsts_requires_https(again, "sub.localhost") == 1,
          "read back, with its subdomains");
    courier_hsts_free(again);
    courier_hsts *memory = NULL;
    CHECK(courier_hsts_create(NULL, &memory) == COURIER_OK && courier_hsts_save(memory) == COURIER_OK, "memory only");
    CHECK(courier_hsts_requires_https(memory, "localhost") == 0, "empty");
    CHECK(courier_hsts_create("/tmp", &again) == COURIER_E_FILE_READ && again == NULL, "a directory");
    CHECK(courier_hsts_create(NULL, NULL) == COURIER_E_MISUSE, "NULL out");
    CHECK(courier_hsts_save(NULL) == COURIER_E_MISUSE && courier_hsts_requires_https(NULL, "h") == 0, "NULL store");
    CHECK(courier_engine_set_hsts(engine, NULL) == COURIER_OK, "NULL: none");
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "GET", plain, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_hsts(request, (courier_hsts *)engine) == COURIER_E_MISUSE, "not a store");
    courier_request_free(request);
    courier_hsts_free(memory);
    courier_engine_destroy(engine);
    courier_hsts_free(store);
    courier_hsts_free(NULL);

    if (failures) {
        fprintf(stderr, "hsts: %d check(s) failed\n", failures);
        return 1;
    }
    printf("hsts: all checks passed\n");
    return 0;
}
