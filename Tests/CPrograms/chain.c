/*
 * chain: chains from C against the scripted server: three steps in order where `next` passes a
 * value from one response into the next request; a failing step stops the chain; `next` may stop
 * it too; NULLs and misuse. Exits 0 when every check holds.
 *
 *   chain BASE_URL
 */
#define _GNU_SOURCE  /* memmem */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "chain.c:%d: ", __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

struct seen {
    int calls;
    size_t last_index;
    int stop_at;
};

/* Copies the previous step's status into a header of the next request. */
static int pass_on(courier_chain *chain, size_t index, courier_response *previous, courier_request *next, void *user) {
    (void)chain;
    struct seen *seen = user;
    seen->calls++;
    seen->last_index = index;
    char value[32];
    snprintf(value, sizeof value, "step%zu-%d", index, courier_response_status(previous));
    courier_request_add_header(next, "X-Previous", value);
    return seen->stop_at >= 0 && (int)index == seen->stop_at;
}

static int body_has(courier_chain *chain, size_t index, const char *needle) {
    courier_response *response = NULL;
    if (courier_chain_result(chain, index, &response) != COURIER_OK || !response) return 0;
    size_t length = 0;
    const void *body = courier_response_body(response, &length);
    return body && memmem(body, length, needle, strlen(needle)) != NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: chain BASE_URL\n");
        return 2;
    }
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(argv[1], &engine) == COURIER_OK, "engine");
    courier_request *steps[3] = {NULL, NULL, NULL};

    /* Three steps, each seeing what the previous one answered. */
    courier_chain *chain = NULL;
    CHECK(courier_chain_create(&chain) == COURIER_OK, "create");
    struct seen seen = {0, 0, -1};
    CHECK(courier_chain_set_next(chain, pass_on, &seen) == COURIER_OK, "next");
    for (int i = 0; i < 3; i++) {
        CHECK(courier_request_create(engine, "GET", "/echo", &steps[i]) == COURIER_OK, "request");
        CHECK(courier_chain_add(chain, steps[i]) == COURIER_OK, "add");
    }
    CHECK(courier_chain_count(chain) == 3, "count");
    CHECK(courier_chain_perform(chain) == COURIER_OK, "perform");
    CHECK(courier_chain_ran(chain) == 3 && seen.calls == 2 && seen.last_index == 1, "ran %zu, next %d", courier_chain_ran(chain), seen.calls);
    CHECK(body_has(chain, 1, "step0-200") && body_has(chain, 2, "step1-200"), "each step saw the previous answer");
    CHECK(courier_chain_add(chain, steps[0]) == COURIER_E_MISUSE && courier_chain_perform(chain) == COURIER_E_MISUSE, "runs once");
    courier_chain_free(chain);
    for (int i = 0; i < 3; i++) courier_request_free(steps[i]);

    /* A failing step stops it: the third never runs. */
    CHECK(courier_chain_create(&chain) == COURIER_OK, "create");
    const char *paths[3] = {"/echo", "/status?code=500", "/echo"};
    for (int i = 0; i < 3; i++) {
        CHECK(courier_request_create(engine, "GET", paths[i], &steps[i]) == COURIER_OK, "request");
        courier_chain_add(chain, steps[i]);
    }
    CHECK(courier_chain_perform(chain) == COURIER_E_HTTP_STATUS, "the failed step's code");
    CHECK(courier_chain_ran(chain) == 2, "stopped after the failure");
    courier_response *response = NULL;
    CHECK(courier_chain_result(chain, 1, &response) == COURIER_E_HTTP_STATUS && response && courier_response_status(response) == 500,
          "the failure's response");
    CHECK(courier_chain_result(chain, 2, &response) == COURIER_E_INVALID_ARGUMENT && response == NULL, "no third result");
    courier_chain_free(chain);
    for (int i = 0; i < 3; i++) courier_request_free(steps[i]);

    /* `next` stops it after the first step. */
    CHECK(courier_chain_create(&chain) == COURIER_OK, "create");
    struct seen stopper = {0, 0, 0};
    courier_chain_set_next(chain, pass_on, &stopper);
    for (int i = 0; i < 2; i++) {
        CHECK(courier_request_create(engine, "GET", "/echo", &steps[i]) == COURIER_OK, "request");
        courier_chain_add(chain, steps[i]);
    }
    CHECK(courier_chain_perform(chain) == COURIER_OK && courier_chain_ran(chain) == 1, "stopped by next");
    courier_chain_free(chain);
    for (int i = 0; i < 2; i++) courier_request_free(steps[i]);

    CHECK(courier_chain_create(NULL) == COURIER_E_MISUSE, "NULL out");
    CHECK(courier_chain_add(NULL, NULL) == COURIER_E_MISUSE && courier_chain_perform(NULL) == COURIER_E_MISUSE, "NULL chain");
    CHECK(courier_chain_count(NULL) == 0 && courier_chain_cancel(NULL) == COURIER_E_MISUSE, "NULL count and cancel");
    courier_chain_free(NULL);
    CHECK(courier_chain_create(&chain) == COURIER_OK && courier_chain_perform(chain) == COURIER_OK && courier_chain_ran(chain) == 0,
          "an empty chain ends at once");
    courier_chain_free(chain);
    courier_engine_destroy(engine);

    if (failures) {
        fprintf(stderr, "chain: %d check(s) failed\n", failures);
        return 1;
    }
    printf("chain: all checks passed\n");
    return 0;
}
