/*
 * group: the C ABI's request groups against Tests/Servers/scripted_server.py (/status, /slow);
 * exits 0 when every check holds.
 *
 *   group BASE_URL
 */
#include <courier.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "group.c:%d: ", __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

static courier_request *make(const char *base, const char *path) {
    char url[512];
    snprintf(url, sizeof url, "%s%s", base, path);
    courier_request *request = NULL;
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create %s", path);
    return request;
}

struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t done;
    int finished;
    int first_failure;
};

static void group_done(courier_group *group, int first_failure, void *user) {
    (void)group;
    struct waiter *w = user;
    pthread_mutex_lock(&w->lock);
    w->finished = 1;
    w->first_failure = first_failure;
    pthread_cond_signal(&w->done);
    pthread_mutex_unlock(&w->lock);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: group BASE_URL\n");
        return 2;
    }
    const char *base = argv[1];
    courier_request *requests[8];

    /* All settled: five members, one 500; results in order, responses kept by the group. */
    courier_group *group = NULL;
    CHECK(courier_group_create(COURIER_GROUP_ALL_SETTLED, &group) == COURIER_OK, "group_create");
    const char *paths[] = {"/status?body=0", "/status?body=1", "/status?code=500&body=2", "/status?body=3", "/status?body=4"};
    for (int i = 0; i < 5; i++) {
        requests[i] = make(base, paths[i]);
        CHECK(courier_group_add(group, requests[i]) == COURIER_OK, "add %d", i);
    }
    CHECK(courier_group_count(group) == 5, "count");
    int code = courier_group_perform(group);
    CHECK(code == COURIER_E_HTTP_STATUS, "perform: %s", courier_strerror(code));
    for (int i = 0; i < 5; i++) {
        courier_response *response = NULL;
        int member = courier_group_result(group, (size_t)i, &response);
        CHECK((i == 2) == (member == COURIER_E_HTTP_STATUS), "member %d: %s", i, courier_strerror(member));
        size_t length = 0;
        const void *body = response ? courier_response_body(response, &length) : NULL;
        CHECK(body && length == 1 && ((const char *)body)[0] == '0' + i, "member %d's body", i);
    }
    courier_response *none = NULL;
    CHECK(courier_group_result(group, 5, &none) == COURIER_E_INVALID_ARGUMENT && none == NULL, "index out of range");
    CHECK(courier_group_add(group, requests[0]) == COURIER_E_MISUSE, "add after send");
    CHECK(courier_group_perform(group) == COURIER_E_MISUSE, "a group runs once");
    courier_group_free(group);
    for (int i = 0; i < 5; i++) courier_request_free(requests[i]);

    /* Fail fast, with the callback: the 503 (first, so never queued behind them) cancels three
     * slow members long before they end (had they run to their end, they would be successes). */
    struct waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -2};
    CHECK(courier_group_create(COURIER_GROUP_FAIL_FAST, &group) == COURIER_OK, "group_create");
    requests[3] = make(base, "/status?code=503");
    courier_group_add(group, requests[3]);
    for (int i = 0; i < 3; i++) {
        requests[i] = make(base, "/slow?ms=5000");
        courier_group_add(group, requests[i]);
    }
    double started = now();
    CHECK(courier_group_send(group, group_done, &w) == COURIER_OK, "group_send");
    pthread_mutex_lock(&w.lock);
    while (!w.finished) pthread_cond_wait(&w.done, &w.lock);
    pthread_mutex_unlock(&w.lock);
    printf("group: fail-fast ended after %.2f s\n", now() - started);
    CHECK(w.first_failure == 0, "first failure %d", w.first_failure);
    for (int i = 1; i < 4; i++) {
        courier_response *response = NULL;
        CHECK(courier_group_result(group, (size_t)i, &response) == COURIER_E_CANCELLED, "slow member %d not cancelled", i);
    }
    courier_group_free(group);
    for (int i = 0; i < 4; i++) courier_request_free(requests[i]);

    /* An empty group finishes at once; cancel; bad handles. */
    CHECK(courier_group_create(COURIER_GROUP_ALL_SETTLED, &group) == COURIER_OK, "group_create");
    CHECK(courier_group_perform(group) == COURIER_OK, "empty group");
    CHECK(courier_group_cancel(group) == COURIER_OK, "cancel");
    courier_group_free(group);
    CHECK(courier_group_create(7, &group) == COURIER_E_INVALID_ARGUMENT && group == NULL, "bad mode");
    CHECK(courier_group_create(0, NULL) == COURIER_E_MISUSE, "NULL out");
    CHECK(courier_group_add(NULL, NULL) == COURIER_E_MISUSE, "NULL group");
    CHECK(courier_group_perform(NULL) == COURIER_E_MISUSE, "NULL perform");
    CHECK(courier_group_result(NULL, 0, NULL) == COURIER_E_MISUSE, "NULL result");
    CHECK(courier_group_count(NULL) == 0, "NULL count");
    courier_group_free(NULL);

    if (failures) {
        fprintf(stderr, "group: %d check(s) failed\n", failures);
        return 1;
    }
    printf("group: all checks passed\n");
    return 0;
}
