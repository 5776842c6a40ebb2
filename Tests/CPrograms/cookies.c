/*
 * cookies: the C ABI's cookie jars against Tests/Servers/cookie_server.py; exits 0 when every
 * check holds.
 *
 *   cookies BASE_URL FILE     FILE: where the jar is saved and read back
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "cookies.c:%d: ", __LINE__);        \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* GETs BASE+path with `jar`; copies the body (NUL-terminated) into `out`. */
static int get(const char *base, const char *path, courier_cookiejar *jar, char *out, size_t size) {
    char url[512];
    snprintf(url, sizeof url, "%s%s", base, path);
    courier_request *request = NULL;
    courier_response *response = NULL;
    int code = courier_request_create(NULL, "GET", url, &request);
    if (code == COURIER_OK) code = courier_request_set_cookiejar(request, jar);
    if (code == COURIER_OK) code = courier_request_perform(request, &response);
    out[0] = 0;
    if (response) {
        size_t length = 0;
        const void *body = courier_response_body(response, &length);
        if (length >= size) length = size - 1;
        memcpy(out, body, length);
        out[length] = 0;
        courier_response_free(response);
    }
    courier_request_free(request);
    return code;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: cookies BASE_URL FILE\n");
        return 2;
    }
    const char *base = argv[1], *file = argv[2];
    char body[1024];
    courier_cookiejar *jar = NULL;
    CHECK(courier_cookiejar_create(&jar) == COURIER_OK, "create");
    CHECK(get(base, "/set?c=a%3D1&c=b%3D2%3B%20Max-Age%3D600", jar, body, sizeof body) == COURIER_OK, "set");
    CHECK(courier_cookiejar_count(jar) == 2, "count %zu", courier_cookiejar_count(jar));
    CHECK(get(base, "/echo", jar, body, sizeof body) == COURIER_OK && strcmp(body, "a=1; b=2") == 0, "echo: '%s'", body);
    CHECK(get(base, "/echo", NULL, body, sizeof body) == COURIER_OK && body[0] == 0, "without a jar: '%s'", body);
    CHECK(courier_cookiejar_save(jar, file) == COURIER_OK, "save");

    courier_cookiejar *again = NULL;
    CHECK(courier_cookiejar_create(&again) == COURIER_OK, "create");
    CHECK(courier_cookiejar_load(again, file) == COURIER_OK, "load");
    CHECK(get(base, "/echo", again, body, sizeof body) == COURIER_OK && strstr(body, "a=1") && strstr(body, "b=2"), "reloaded: '%s'", body);
    CHECK(courier_cookiejar_clear(again) == COURIER_OK && courier_cookiejar_count(again) == 0, "clear");
    CHECK(courier_cookiejar_load(again, "/nonexistent/cookies.txt") == COURIER_OK, "a missing file is an empty jar");
    CHECK(courier_cookiejar_save(again, "/nonexistent-dir/cookies.txt") == COURIER_E_FILE_WRITE, "unwritable");

    CHECK(courier_cookiejar_create(NULL) == COURIER_E_MISUSE, "NULL out");
    CHECK(courier_cookiejar_load(NULL, file) == COURIER_E_MISUSE, "NULL jar");
    CHECK(courier_cookiejar_load(jar, NULL) == COURIER_E_INVALID_ARGUMENT, "NULL path");
    CHECK(courier_cookiejar_count(NULL) == 0, "NULL count");
    courier_request *request = NULL;
    CHECK(courier_request_create(NULL, "GET", base, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_cookiejar(request, (courier_cookiejar *)request) == COURIER_E_MISUSE, "not a jar");
    courier_request_free(request);
    courier_cookiejar_free(jar);
    courier_cookiejar_free(again);
    courier_cookiejar_free(NULL);

    if (failures) {
        fprintf(stderr, "cookies: %d check(s) failed\n", failures);
        return 1;
    }
    printf("cookies: all checks passed\n");
    return 0;
}
