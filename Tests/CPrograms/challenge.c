/*
 * challenge: an engine's authenticator from C against Tests/Servers/token_server.py: twenty
 * requests refused at once share one call of the challenge callback (which itself fetches a new
 * token with courier_request_perform, on the thread Courier runs it on), then all succeed; a
 * callback that declines lets the 401 be the result; one that hangs releases its requests at the
 * challenge timeout, and a request cancelled while it waits ends cancelled. Exits 0 when every
 * check holds.
 *
 *   challenge BASE_URL
 */
#include <courier.h>

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "challenge.c:%d: ", __LINE__);      \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

struct context {
    const char *base;
    int calls;
    int last_status;
    int saw_challenge;
};

/* Fetches /token and answers "Bearer <token>". */
static int refresh(void *user, int status, const char *url, const char *challenges, int is_proxy,
                   char *credentials, size_t capacity) {
    struct context *context = user;
    context->calls++;
    context->last_status = status;
    context->saw_challenge = strstr(challenges, "Bearer realm=\"test\"") != NULL && strstr(url, "/protected") != NULL && !is_proxy;
    char token_url[512];
    snprintf(token_url, sizeof token_url, "%s/token", context->base);
    courier_request *request = NULL;
    courier_response *response = NULL;
    int ok = 0;
    if (courier_request_create(NULL, "GET", token_url, &request) == COURIER_OK
        && courier_request_perform(request, &response) == COURIER_OK) {
        size_t length = 0;
        const char *token = (const char *)courier_response_body(response, &length);
        ok = snprintf(credentials, capacity, "Bearer %.*s", (int)length, token) < (int)capacity;
    }
    courier_response_free(response);
    courier_request_free(request);
    return ok;
}

static int decline(void *user, int status, const char *url, const char *challenges, int is_proxy,
                   char *credentials, size_t capacity) {
    (void)status; (void)url; (void)challenges; (void)is_proxy; (void)credentials; (void)capacity;
    ((struct context *)user)->calls++;
    return 0;
}

/* A token endpoint that hangs: blocks until released. The hangs in progress and those that
 * returned are counted under one lock, so each step waits for the event itself, not for time. */
static pthread_mutex_t hang_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_changed = PTHREAD_COND_INITIALIZER;
static int hangs_started = 0, hangs_returned = 0, released = 0;

static int hang(void *user, int status, const char *url, const char *challenges, int is_proxy,
                char *credentials, size_t capacity) {
    (void)user; (void)status; (void)url; (void)challenges; (void)is_proxy;
    pthread_mutex_lock(&hang_lock);
    hangs_started++;
    pthread_cond_broadcast(&hang_changed);
    while (!released) pthread_cond_wait(&hang_changed, &hang_lock);
    hangs_returned++;
    pthread_cond_broadcast(&hang_changed);
    pthread_mutex_unlock(&hang_lock);
    return snprintf(credentials, capacity, "Bearer late") < (int)capacity;
}

/* Lets every hang return and waits until `count` have. */
static void release_hangs(int count) {
    pthread_mutex_lock(&hang_lock);
    released = 1;
    pthread_cond_broadcast(&hang_changed);
    while (hangs_returned < count) pthread_cond_wait(&hang_changed, &hang_lock);
    released = 0;
    pthread_mutex_unlock(&hang_lock);
}

/* Cancels the request once the second hang began (the request is waiting for it). */
static void *cancel_when_hanging(void *request) {
    pthread_mutex_lock(&hang_lock);
    while (hangs_started < 2) pthread_cond_wait(&hang_changed, &hang_lock);
    pthread_mutex_unlock(&hang_lock);
    courier_request_cancel(request);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: challenge BASE_URL\n");
        return 2;
    }
    struct context context = {argv[1], 0, 0, 0};
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(argv[1], &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_authenticator(engine, "Nonsense", refresh, &context) == COURIER_E_INVALID_ARGUMENT, "bad initial");
    CHECK(courier_engine_set_authenticator(engine, "Bearer expired", refresh, &context) == COURIER_OK, "authenticator");
    CHECK(courier_engine_set_authenticator(NULL, NULL, refresh, NULL) == COURIER_E_MISUSE, "NULL engine");

    enum { COUNT = 20 };
    for (int i = 0; i < COUNT; i++) {
        courier_request *request = NULL;
        CHECK(courier_request_create(engine, i % 2 ? "POST" : "GET", "/protected", &request) == COURIER_OK, "create");
        if (i % 2) courier_request_set_body(request, "data", 4);
        CHECK(courier_request_enqueue(request) == COURIER_OK, "enqueue");
    }
    struct pollfd pfd = {courier_engine_fd(engine), POLLIN, 0};
    int done = 0, succeeded = 0;
    while (done < COUNT && poll(&pfd, 1, 20000) > 0) {
        courier_request *request = NULL;
        courier_response *response = NULL;
        int code = 0;
        while (courier_engine_next_done(engine, &request, &response, &code) == COURIER_OK) {
            if (code == COURIER_OK && courier_response_status(response) == 200) succeeded++;
            else fprintf(stderr, "  request: %d %s\n", code, courier_request_errmsg(request));
            courier_response_free(response);
            courier_request_free(request);
            done++;
        }
    }
    CHECK(done == COUNT && succeeded == COUNT, "%d of %d done, %d succeeded", done, COUNT, succeeded);
    CHECK(context.calls == 1, "one refresh for all of them, not %d", context.calls);
    CHECK(context.last_status == 401 && context.saw_challenge, "the challenge's status, URL and WWW-Authenticate");

    /* Declined: the 401 is the result, without a replay. */
    courier_engine *other = NULL;
    struct context declined = {argv[1], 0, 0, 0};
    CHECK(courier_engine_create(argv[1], &other) == COURIER_OK, "engine");
    CHECK(courier_engine_set_authenticator(other, NULL, decline, &declined) == COURIER_OK, "authenticator");
    courier_request *request = NULL;
    courier_response *response = NULL;
    CHECK(courier_request_create(other, "GET", "/protected", &request) == COURIER_OK, "create");
    CHECK(courier_request_perform(request, &response) == COURIER_E_HTTP_STATUS && courier_response_status(response) == 401, "the 401");
    CHECK(declined.calls == 1, "asked once");
    courier_response_free(response);
    courier_request_free(request);
    courier_engine_destroy(other);

    /* A callback that hangs: the request gets its 401 at the timeout; the late answer is kept. */
    courier_engine *stuck = NULL;
    CHECK(courier_engine_create(argv[1], &stuck) == COURIER_OK, "engine");
    CHECK(courier_engine_set_challenge_timeout(stuck, 0) == COURIER_E_INVALID_ARGUMENT, "a timeout of 0");
    CHECK(courier_engine_set_challenge_timeout(NULL, 100) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_engine_set_authenticator(stuck, "Bearer expired", hang, NULL) == COURIER_OK, "authenticator");
    CHECK(courier_engine_set_challenge_timeout(stuck, 200) == COURIER_OK, "timeout");
    CHECK(courier_request_create(stuck, "GET", "/protected", &request) == COURIER_OK, "create");
    CHECK(courier_request_perform(request, &response) == COURIER_E_HTTP_STATUS && courier_response_status(response) == 401,
          "the 401 at the timeout: %s", courier_request_errmsg(request));
    courier_response_free(response);
    courier_request_free(request);

    /* Cancelled while it waits (now with a timeout it would never reach): cancelled at once. */
    release_hangs(1);  /* the hung call returns before the next one begins */
    courier_engine *waiting = NULL;
    CHECK(courier_engine_create(argv[1], &waiting) == COURIER_OK, "engine");
    CHECK(courier_engine_set_challenge_timeout(waiting, 3600 * 1000) == COURIER_OK, "timeout");
    CHECK(courier_engine_set_authenticator(waiting, "Bearer expired", hang, NULL) == COURIER_OK, "authenticator");
    CHECK(courier_request_create(waiting, "GET", "/protected", &request) == COURIER_OK, "create");
    pthread_t canceller;
    pthread_create(&canceller, NULL, cancel_when_hanging, request);
    response = NULL;
    CHECK(courier_request_perform(request, &response) == COURIER_E_CANCELLED && response == NULL,
          "cancelled while waiting: %s", courier_request_errmsg(request));
    pthread_join(canceller, NULL);
    release_hangs(2);
    courier_request_free(request);
    courier_engine_destroy(waiting);
    courier_engine_destroy(stuck);
    courier_engine_destroy(engine);

    if (failures) {
        fprintf(stderr, "challenge: %d check(s) failed\n", failures);
        return 1;
    }
    printf("challenge: all checks passed\n");
    return 0;
}
