/*
 * auth: Basic and Bearer authentication through the C ABI against the scripted server's /echo
 * (which answers with the request's headers as JSON); exits 0 when every check holds.
 *
 *   auth BASE_URL
 */
#define _GNU_SOURCE  /* memmem */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "auth.c:%d: ", __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* Sends `request` to /echo and says whether the echoed headers contain `expected`. */
static int echoes(courier_request *request, const char *expected) {
    courier_response *response = NULL;
    int code = courier_request_perform(request, &response);
    int found = 0;
    if (code == COURIER_OK && response) {
        size_t length = 0;
        const void *body = courier_response_body(response, &length);
        found = body && memmem(body, length, expected, strlen(expected)) != NULL;
    }
    courier_response_free(response);
    courier_request_free(request);
    return found;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: auth BASE_URL\n");
        return 2;
    }
    char url[512];
    snprintf(url, sizeof url, "%s/echo", argv[1]);
    courier_request *request = NULL;

    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_bearer(request, "c-token") == COURIER_OK, "set_bearer");
    CHECK(echoes(request, "[\"Authorization\", \"Bearer c-token\"]"), "the bearer field");

    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_basic_auth(request, "Aladdin", "open sesame") == COURIER_OK, "set_basic_auth");
    CHECK(echoes(request, "[\"Authorization\", \"Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\"]"), "the basic field");

    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_bearer(request, "line\r\nX-Injected: 1") == COURIER_E_INVALID_ARGUMENT, "a line break");
    CHECK(courier_request_set_bearer(request, "two words") == COURIER_E_INVALID_ARGUMENT, "a space");
    CHECK(courier_request_set_basic_auth(request, "a:b", "x") == COURIER_E_INVALID_ARGUMENT, "a colon in the user");
    CHECK(courier_request_set_basic_auth(request, NULL, "x") == COURIER_E_INVALID_ARGUMENT, "NULL user");
    CHECK(courier_request_set_bearer(request, "kept") == COURIER_OK && courier_request_set_bearer(request, NULL) == COURIER_OK,
          "NULL removes it");
    CHECK(!echoes(request, "Authorization"), "no field after removal");
    CHECK(courier_request_set_bearer(NULL, "x") == COURIER_E_MISUSE, "NULL request");

    if (failures) {
        fprintf(stderr, "auth: %d check(s) failed\n", failures);
        return 1;
    }
    printf("auth: all checks passed\n");
    return 0;
}
