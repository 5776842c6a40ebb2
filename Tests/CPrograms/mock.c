/*
 * mock: an engine whose requests a C callback answers inside the process: a GET with fields and
 * a body, a POST read back, a redirect followed and a cookie kept through Courier's own stack,
 * bad arguments; exits 0 when every check holds. No server is needed.
 *
 *   mock
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;
static int answered = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "mock.c:%d: ", __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

static void handler(void *user, const char *method, const char *target, const char *headers, const void *body,
                    size_t body_length, courier_mock_reply *reply) {
    (void)user;
    answered++;
    if (strcmp(target, "/moved") == 0) {
        courier_mock_reply_set_status(reply, 302);
        courier_mock_reply_add_header(reply, "Location", "/items");
    } else if (strcmp(target, "/login") == 0) {
        courier_mock_reply_add_header(reply, "Set-Cookie", "session=abc; Path=/");
    } else if (strcmp(target, "/whoami") == 0) {
        const char *cookie = strstr(headers, "Cookie: ");
        courier_mock_reply_set_body(reply, cookie ? cookie + 8 : "nobody", cookie ? strcspn(cookie + 8, "\r") : 6);
    } else if (strcmp(method, "POST") == 0) {
        courier_mock_reply_set_status(reply, 201);
        courier_mock_reply_set_body(reply, body, body_length);
    } else {
        courier_mock_reply_add_header(reply, "Content-Type", "application/json");
        courier_mock_reply_set_body(reply, "[1,2,3]", 7);
    }
    CHECK(courier_mock_reply_set_status(reply, 42) == COURIER_E_INVALID_ARGUMENT, "a status outside 100-999");
    CHECK(courier_mock_reply_add_header(reply, "Bad\nName", "x") == COURIER_E_INVALID_HEADER, "a bad field");
}

/* Performs `method` on `path`; its status, and its body in `out`. */
static int perform(courier_engine *engine, const char *method, const char *path, const char *body, char *out, size_t size) {
    courier_request *request = NULL;
    courier_response *response = NULL;
    int status = 0;
    out[0] = 0;
    if (courier_request_create(engine, method, path, &request) == COURIER_OK) {
        if (body) courier_request_set_body(request, body, strlen(body));
        if (courier_request_perform(request, &response) == COURIER_OK && response) {
            status = courier_response_status(response);
            size_t length = 0;
            const char *bytes = (const char *)courier_response_body(response, &length);
            if (length >= size) length = size - 1;
            memcpy(out, bytes, length);
            out[length] = 0;
        } else {
            fprintf(stderr, "  (%s)\n", courier_request_errmsg(request));
        }
    }
    courier_response_free(response);
    courier_request_free(request);
    return status;
}

int main(void) {
    char body[128];
    courier_engine *engine = NULL;
    CHECK(courier_engine_create("https://api.example.test", &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_mock(engine, handler, NULL) == COURIER_OK, "the mock");
    courier_cookiejar *jar = NULL;
    CHECK(courier_cookiejar_create(&jar) == COURIER_OK, "jar");
    CHECK(perform(engine, "GET", "/items", NULL, body, sizeof body) == 200 && strcmp(body, "[1,2,3]") == 0, "GET: %s", body);
    CHECK(perform(engine, "POST", "/echo", "hello", body, sizeof body) == 201 && strcmp(body, "hello") == 0, "POST: %s", body);
    courier_request *request = NULL;
    courier_response *response = NULL;
    CHECK(courier_request_create(engine, "GET", "/moved", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_redirects(request, 1, 5) == COURIER_OK, "follow");
    CHECK(courier_request_perform(request, &response) == COURIER_OK && courier_response_status(response) == 200, "redirected");
    courier_response_free(response);
    courier_request_free(request);
    for (int i = 0; i < 2; i++) {
        CHECK(courier_request_create(engine, "GET", i == 0 ? "/login" : "/whoami", &request) == COURIER_OK, "create");
        CHECK(courier_request_set_cookiejar(request, jar) == COURIER_OK, "jar");
        response = NULL;
        CHECK(courier_request_perform(request, &response) == COURIER_OK, "perform");
        if (i == 1) {
            size_t length = 0;
            const char *bytes = (const char *)courier_response_body(response, &length);
            CHECK(length == 11 && memcmp(bytes, "session=abc", 11) == 0, "the cookie came back: %.*s", (int)length, bytes);
        }
        courier_response_free(response);
        courier_request_free(request);
    }
    CHECK(answered == 6, "six requests answered: %d", answered);
    CHECK(courier_engine_set_mock(NULL, handler, NULL) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_mock_reply_set_status(NULL, 200) == COURIER_E_MISUSE, "NULL reply");
    CHECK(courier_engine_set_mock(engine, NULL, NULL) == COURIER_OK, "the network again");
    courier_cookiejar_free(jar);
    courier_engine_destroy(engine);

    if (failures) {
        fprintf(stderr, "mock: %d check(s) failed\n", failures);
        return 1;
    }
    printf("mock: all checks passed\n");
    return 0;
}
