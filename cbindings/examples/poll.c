/*
 * poll: pull style, for programs with their own event loop. Enqueues N requests, waits on the
 * engine's descriptor with poll(2) and collects finished requests with courier_engine_next_done.
 * No callback ever runs in this program. Prints "done N ok K" and exits 0 when all succeeded.
 *
 *   ./poll http://127.0.0.1:8080 100 /small
 */
#include <courier.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s BASE N PATH\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[2]);
    courier_engine *engine;
    int rc = courier_engine_create(argv[1], &engine);
    if (rc != COURIER_OK) {
        fprintf(stderr, "engine: %s\n", courier_strerror(rc));
        return 1;
    }
    for (int i = 0; i < n; i++) {
        courier_request *request;
        rc = courier_request_create(engine, "GET", argv[3], &request);
        if (rc == COURIER_OK) rc = courier_request_add_param(request, "i", "1");
        if (rc == COURIER_OK) rc = courier_request_enqueue(request);
        if (rc != COURIER_OK) {
            fprintf(stderr, "enqueue: %s\n", courier_strerror(rc));
            return 1;
        }
    }
    struct pollfd pfd = {.fd = courier_engine_fd(engine), .events = POLLIN};
    int collected = 0, succeeded = 0;
    while (collected < n) {
        if (poll(&pfd, 1, 10000) <= 0) {
            fprintf(stderr, "poll: nothing finished within 10 s\n");
            return 1;
        }
        courier_request *request;
        courier_response *response;
        int code;
        while (courier_engine_next_done(engine, &request, &response, &code) == COURIER_OK) {
            collected++;
            if (code == COURIER_OK && courier_response_status(response) == 200) succeeded++;
            else fprintf(stderr, "failed: %s\n", courier_request_errmsg(request));
            courier_response_free(response);
            courier_request_free(request);
        }
    }
    /* Drained: the descriptor must read as idle again. */
    int idle = poll(&pfd, 1, 0) == 0;
    courier_engine_destroy(engine);
    courier_shutdown();
    printf("done %d ok %d idle %d\n", n, succeeded, idle);
    return succeeded == n && idle ? 0 : 1;
}
