/*
 * digest: logins from C against Tests/Servers/digest_server.py (user ann, password s3cret):
 * Digest authentication (an engine's login and a request's own, a body sent again, a wrong
 * password's 401, NULL removing the login, bad arguments) and .netrc files (the entry for the
 * request's host as Basic, a missing file, a malformed one); exits 0 when every check holds.
 *
 *   digest SERVER_URL
 */
#include <courier.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "digest.c:%d: ", __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* Performs `request` (freed); its status, and the body in `body` (NUL-terminated, cut to size). */
static int perform(courier_request *request, char *body, size_t size) {
    courier_response *response = NULL;
    int code = courier_request_perform(request, &response);
    int status = response ? courier_response_status(response) : 0;
    if (code != COURIER_OK && code != COURIER_E_HTTP_STATUS) fprintf(stderr, "  (%s)\n", courier_request_errmsg(request));
    body[0] = 0;
    if (response) {
        size_t length = 0;
        const char *bytes = (const char *)courier_response_body(response, &length);
        if (length >= size) length = size - 1;
        memcpy(body, bytes, length);
        body[length] = 0;
    }
    courier_response_free(response);
    courier_request_free(request);
    return status;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: digest SERVER_URL\n");
        return 2;
    }
    char body[256];
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(argv[1], &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_accepted_status(engine, 200, 600) == COURIER_OK, "every status is a response");
    CHECK(courier_engine_set_digest_auth(engine, "ann", "s3cret") == COURIER_OK, "the engine's login");
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "GET", "/sha256/c", &request) == COURIER_OK, "create");
    CHECK(perform(request, body, sizeof body) == 200 && strcmp(body, "GET /sha256/c 0") == 0, "SHA-256: %s", body);
    CHECK(courier_request_create(engine, "POST", "/md5sess/c", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_body(request, "hello", 5) == COURIER_OK, "body");
    CHECK(perform(request, body, sizeof body) == 200 && strcmp(body, "POST /md5sess/c 5") == 0, "a body sent again: %s", body);
    CHECK(courier_request_create(engine, "GET", "/sha256/c", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_digest_auth(request, "ann", "wrong") == COURIER_OK, "a request's own login");
    CHECK(perform(request, body, sizeof body) == 401, "a wrong password gets the 401");
    CHECK(courier_request_create(engine, "GET", "/sha256/c", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_digest_auth(request, NULL, NULL) == COURIER_OK, "NULL: none");
    CHECK(perform(request, body, sizeof body) == 401, "without a login");
    CHECK(courier_request_create(engine, "GET", "/sha256/c", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_digest_auth(request, "a\nb", "x") == COURIER_E_INVALID_ARGUMENT, "a line break in the user");
    CHECK(courier_request_set_digest_auth(NULL, "a", "b") == COURIER_E_MISUSE, "NULL request");
    courier_request_free(request);
    CHECK(courier_engine_set_digest_auth(NULL, "a", "b") == COURIER_E_MISUSE, "NULL engine");

    /* .netrc: the server's /log records the Authorization each request carried. */
    char path[] = "/tmp/courier-netrc-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    const char *entries = "machine 127.0.0.1 login bob password \"s p\"\n";
    CHECK(write(fd, entries, strlen(entries)) == (ssize_t)strlen(entries), "write");
    close(fd);
    CHECK(courier_request_create(engine, "GET", "/log?clear=1", &request) == COURIER_OK, "create");
    CHECK(perform(request, body, sizeof body) == 200, "the log cleared");
    CHECK(courier_request_create(engine, "GET", "/sha256/netrc", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_digest_auth(request, NULL, NULL) == COURIER_OK, "no Digest");
    CHECK(courier_request_set_netrc(request, path) == COURIER_OK, "netrc");
    CHECK(perform(request, body, sizeof body) == 401, "Basic, which this server refuses");
    CHECK(courier_request_create(engine, "GET", "/log", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_digest_auth(request, NULL, NULL) == COURIER_OK, "no Digest");
    CHECK(courier_request_set_netrc(request, "/nonexistent/.netrc") == COURIER_OK, "a missing file is no error");
    CHECK(perform(request, body, sizeof body) == 200 && strstr(body, "Basic Ym9iOnMgcA==") != NULL, "the log: %s", body);
    fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && write(fd, "machine h login \"open", 22) == 22, "rewrite");
    close(fd);
    CHECK(courier_request_create(engine, "GET", "/log", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_netrc(request, path) == COURIER_E_NETRC, "a malformed file");
    CHECK(courier_request_set_netrc(NULL, path) == COURIER_E_MISUSE, "NULL request");
    courier_request_free(request);
    unlink(path);
    courier_engine_destroy(engine);

    if (failures) {
        fprintf(stderr, "digest: %d check(s) failed\n", failures);
        return 1;
    }
    printf("digest: all checks passed\n");
    return 0;
}
