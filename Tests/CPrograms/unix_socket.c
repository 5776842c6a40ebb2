/*
 * unix_socket: requests over a Unix domain socket from C, against Tests/Servers/uds_server.py
 * listening on a socket file and on an abstract name; exits 0 when every check holds.
 *
 *   unix_socket PATH NAME   the socket file's path, the abstract name (without its '@')
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "unix_socket.c:%d: ", __LINE__);    \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* Performs `request` (freed here); its code, and its body in `body` (NUL-terminated). */
static int perform(courier_request *request, char *body, size_t capacity) {
    courier_response *response = NULL;
    int code = courier_request_perform(request, &response);
    body[0] = 0;
    if (response) {
        size_t length = 0;
        const uint8_t *bytes = courier_response_body(response, &length);
        if (length >= capacity) length = capacity - 1;
        if (bytes) memcpy(body, bytes, length);
        body[length] = 0;
    }
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: unix_socket PATH NAME\n");
        return 2;
    }
    char body[512];
    courier_engine *docker = NULL;
    courier_request *request = NULL;

    /* The Docker Engine's habit: the engine's connections all go to the socket file. */
    CHECK(courier_engine_create("http://localhost", &docker) == COURIER_OK, "engine");
    CHECK(courier_engine_set_unix_socket(docker, argv[1], 0) == COURIER_OK, "set the socket");
    CHECK(courier_request_create(docker, "GET", "/_ping", &request) == COURIER_OK, "create");
    int code = perform(request, body, sizeof body);
    CHECK(code == COURIER_OK && strcmp(body, "OK") == 0, "ping: %d %s", code, body);
    CHECK(courier_request_create(docker, "GET", "/v1.43/containers/json", &request) == COURIER_OK, "create");
    code = perform(request, body, sizeof body);
    CHECK(code == COURIER_OK && strstr(body, "\"c0ffee\"") != NULL, "containers: %d %s", code, body);

    /* One request to the abstract name instead; NULL takes the socket away again (TCP to a port
     * nobody listens on: refused). */
    CHECK(courier_request_create(docker, "POST", "/echo", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_unix_socket(request, argv[2], 1) == COURIER_OK, "abstract");
    courier_request_set_body(request, "abstract", 8);
    code = perform(request, body, sizeof body);
    CHECK(code == COURIER_OK && strcmp(body, "abstract") == 0, "echo: %d %s", code, body);
    CHECK(courier_request_create(docker, "GET", "http://127.0.0.1:1/", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_unix_socket(request, NULL, 0) == COURIER_OK, "back to TCP");
    code = perform(request, body, sizeof body);
    CHECK(code == COURIER_E_CONNECT, "over TCP again: %d", code);

    /* Bad input: a missing socket, a path too long for a socket address, an empty one, NULLs. */
    CHECK(courier_request_create(docker, "GET", "/_ping", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_unix_socket(request, "/nonexistent/courier.sock", 0) == COURIER_OK, "missing");
    code = perform(request, body, sizeof body);
    CHECK(code == COURIER_E_CONNECT, "a missing socket: %d", code);
    char longer[300];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    CHECK(courier_engine_set_unix_socket(docker, longer, 0) == COURIER_E_INVALID_ARGUMENT, "too long");
    CHECK(courier_engine_set_unix_socket(docker, "", 0) == COURIER_E_INVALID_ARGUMENT, "empty");
    CHECK(courier_engine_set_unix_socket(NULL, argv[1], 0) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_request_set_unix_socket(NULL, argv[1], 0) == COURIER_E_MISUSE, "NULL request");
    /* (The refused settings left the engine's socket as it was.) */
    CHECK(courier_request_create(docker, "GET", "/_ping", &request) == COURIER_OK, "create");
    code = perform(request, body, sizeof body);
    CHECK(code == COURIER_OK && strcmp(body, "OK") == 0, "still the socket: %d %s", code, body);
    courier_engine_destroy(docker);

    if (failures) return 1;
    printf("unix_socket: all checks passed\n");
    return 0;
}
