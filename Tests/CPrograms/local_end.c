/*
 * local_end: where connections come from, from C (courier_*_set_local_address and _local_port,
 * curl's --interface and --local-port), against Tests/Servers/scripted_server.py, whose /echo
 * reports the peer it sees. Exits 0 when every check holds.
 *
 *   local_end BASE_URL
 */
#include <courier.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "local_end.c:%d: ", __LINE__);      \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* Performs `request` (freed here): its code, and the peer /echo saw in `peer` ("ADDRESS PORT"). */
static int perform(courier_request *request, char *peer, size_t capacity) {
    courier_response *response = NULL;
    int code = courier_request_perform(request, &response);
    peer[0] = 0;
    size_t length = 0;
    const char *body = response ? (const char *)courier_response_body(response, &length) : NULL;
    const char *at = body ? strstr(body, "\"peer\": [\"") : NULL;
    if (at) {
        char address[64] = "";
        int port = 0;
        if (sscanf(at + 10, "%63[^\"]\", %d", address, &port) == 2) snprintf(peer, capacity, "%s %d", address, port);
    }
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: local_end BASE_URL\n");
        return 2;
    }
    char url[512], peer[96];
    snprintf(url, sizeof url, "%s/echo", argv[1]);
    courier_engine *engine = NULL;
    courier_request *request = NULL;
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");

    /* A request from 127.0.0.2, from a port of 41200-41240. */
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_local_address(request, "127.0.0.2") == COURIER_OK, "address");
    CHECK(courier_request_set_local_port(request, 41200, 41240) == COURIER_OK, "ports");
    int code = perform(request, peer, sizeof peer);
    int port = atoi(strchr(peer, ' ') ? strchr(peer, ' ') + 1 : "0");
    CHECK(code == COURIER_OK && strncmp(peer, "127.0.0.2 ", 10) == 0 && port >= 41200 && port <= 41240, "seen as %s (%d)", peer, code);

    /* The engine's default: the loopback device (as root) or its address, in curl's syntax. */
    CHECK(courier_engine_set_local_address(engine, "if!lo") == COURIER_OK, "engine interface");
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create");
    code = perform(request, peer, sizeof peer);
    CHECK(code == COURIER_OK && strncmp(peer, "127.0.0.1 ", 10) == 0, "through lo: %s (%d)", peer, code);
    CHECK(courier_engine_set_local_address(engine, NULL) == COURIER_OK, "anywhere again");

    /* Refused by the kernel: an address not of this machine (curl's 45). */
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_local_address(request, "192.0.2.77") == COURIER_OK, "foreign address");
    code = perform(request, peer, sizeof peer);
    CHECK(code == COURIER_E_CONNECT_BIND, "a foreign address: %d", code);

    /* Bad input. */
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_local_address(request, "host!not-an-address") == COURIER_E_INVALID_ARGUMENT, "not an address");
    CHECK(courier_request_set_local_port(request, 9, 3) == COURIER_E_INVALID_ARGUMENT, "a backwards range");
    CHECK(courier_request_set_local_port(request, 0, 70000) == COURIER_E_INVALID_ARGUMENT, "out of range");
    courier_request_free(request);
    CHECK(courier_engine_set_local_port(NULL, 1, 2) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_request_set_local_address(NULL, "127.0.0.1") == COURIER_E_MISUSE, "NULL request");
    courier_engine_destroy(engine);

    if (failures) return 1;
    printf("local_end: all checks passed\n");
    return 0;
}
