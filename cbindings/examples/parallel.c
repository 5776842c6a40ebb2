/*
 * parallel: push style. Sends N requests for PATH through one engine with a completion callback,
 * watches the shared queue's activity, and destroys the engine from inside the last callback
 * (nothing waits, so nothing deadlocks). Prints "done N ok K peak P" and exits 0 when all K
 * succeeded.
 *
 *   ./parallel http://127.0.0.1:8080 100 /small [width]
 */
#include <courier.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static int remaining, succeeded, peak;
static courier_engine *engine;

static void on_activity(int running, int queued, void *user) {
    (void)queued;
    (void)user;
    pthread_mutex_lock(&mutex);
    if (running > peak) peak = running;
    pthread_mutex_unlock(&mutex);
}

/* Runs on Courier's loop thread: count, release, and wake main when the last one ends. */
static void on_done(courier_request *request, courier_response *response, int code, void *user) {
    (void)user;
    if (code == COURIER_OK && courier_response_status(response) == 200) {
        size_t length = 0;
        courier_response_body(response, &length);
        pthread_mutex_lock(&mutex);
        succeeded++;
        pthread_mutex_unlock(&mutex);
    } else {
        fprintf(stderr, "request failed: %s\n", courier_request_errmsg(request));
    }
    courier_response_free(response); /* NULL-safe */
    courier_request_free(request);   /* allowed from the request's own callback */
    pthread_mutex_lock(&mutex);
    int last = --remaining == 0;
    pthread_mutex_unlock(&mutex);
    if (last) {
        courier_engine_destroy(engine); /* from a callback: deferred work, no wait */
        engine = NULL;
        pthread_mutex_lock(&mutex);
        pthread_cond_signal(&finished);
        pthread_mutex_unlock(&mutex);
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s BASE N PATH [width]\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[2]);
    if (argc > 4) courier_queue_set_width(atoi(argv[4]));
    int rc = courier_engine_create(argv[1], &engine);
    if (rc != COURIER_OK) {
        fprintf(stderr, "engine: %s\n", courier_strerror(rc));
        return 1;
    }
    courier_engine_add_header(engine, "X-Client", "parallel.c");
    int token = 0;
    courier_queue_observe(on_activity, NULL, &token);

    remaining = n;
    for (int i = 0; i < n; i++) {
        courier_request *request;
        rc = courier_request_create(engine, "GET", argv[3], &request);
        if (rc == COURIER_OK) rc = courier_request_send(request, on_done, NULL);
        if (rc != COURIER_OK) {
            fprintf(stderr, "send: %s\n", courier_strerror(rc));
            return 1;
        }
    }
    pthread_mutex_lock(&mutex);
    while (remaining > 0) pthread_cond_wait(&finished, &mutex);
    pthread_mutex_unlock(&mutex);

    courier_queue_unobserve(token);
    courier_shutdown();
    printf("done %d ok %d peak %d\n", n, succeeded, peak);
    return succeeded == n ? 0 : 1;
}
