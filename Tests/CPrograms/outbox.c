/*
 * outbox: frozen requests and the network monitor from C, against
 * Tests/Servers/idempotency_server.py.
 *
 *   outbox checks BASE_URL DIR   the outbox's rules: one owner, a frozen POST answered and
 *                                removed, its key, the network status and override, NULL handles
 *   outbox wait URL DIR [RETRY_MS]  freezes a POST to URL (unreachable when it starts) and waits
 *                                for it to go out: when the network or the host returns (tried
 *                                again every RETRY_MS, default 300, and on each network change)
 *   outbox retry URL             with the link down: a POST to URL fails at once with
 *                                COURIER_E_CONNECT_NO_ROUTE (prints "unrouted"); then a keyed POST
 *                                with one retry 50 ms later waits for the network and prints
 *                                "retried STATUS RETRIES" once it is answered
 *   outbox network [wifi-only]   prints the network's kind (COURIER_NETWORK_*), interface and
 *                                the queue width that follows it (in wifi-only mode: 0 on cellular)
 *   outbox reach BASE_URL        per-host reachability (routes, refusals, names that do not
 *                                resolve, what a network change forgets), network changes read
 *                                from the engine's descriptor, idle connections dropped on a change
 *
 * Exits 0 when every check holds (wait: prints "delivered STATUS KEY").
 */
#include <courier.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "outbox.c:%d: ", __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* What the callbacks (on Courier's thread) saw, under one lock: the checks wait for the event
 * itself (a condition variable), up to a deadline that only a lost event reaches. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t seen_changed = PTHREAD_COND_INITIALIZER;
static int finished = 0;
static int finished_status = 0;
static char finished_id[64];
static int seen_kind = -1;

static void on_finished(void *user, const char *id, const char *kind, int code, int status) {
    (void)user;
    if (strcmp(kind, "note") == 0 && code == COURIER_OK) {
        pthread_mutex_lock(&seen_lock);
        snprintf(finished_id, sizeof finished_id, "%s", id);
        finished_status = status;
        finished = 1;
        pthread_cond_broadcast(&seen_changed);
        pthread_mutex_unlock(&seen_lock);
    }
}

static void on_network(void *user, int kind, const char *interface) {
    (void)user; (void)interface;
    pthread_mutex_lock(&seen_lock);
    seen_kind = kind;
    pthread_cond_broadcast(&seen_changed);
    pthread_mutex_unlock(&seen_lock);
}

/* Waits (up to 10 s) until `condition` holds for what the callbacks saw; called without the lock. */
static int wait_for(int (*condition)(void)) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&seen_lock);
    int error = 0;
    while (!condition() && error != ETIMEDOUT) error = pthread_cond_timedwait(&seen_changed, &seen_lock, &deadline);
    int held = condition();
    pthread_mutex_unlock(&seen_lock);
    return held;
}

static int finished_seen(void) { return finished; }
static int cellular_seen(void) { return seen_kind == COURIER_NETWORK_CELLULAR; }

static int checks(const char *base, const char *directory) {
    courier_outbox *outbox = NULL, *second = NULL;
    CHECK(courier_outbox_open(directory, 0, &outbox) == COURIER_OK, "open");
    CHECK(courier_outbox_open(directory, 0, &second) == COURIER_E_OUTBOX_LOCKED && second == NULL, "one owner");
    CHECK(courier_outbox_open(NULL, 0, &second) == COURIER_E_INVALID_ARGUMENT, "NULL path");
    CHECK(courier_outbox_count(NULL) == COURIER_E_MISUSE, "NULL outbox");
    CHECK(courier_outbox_on_finished(outbox, "note", on_finished, NULL) == COURIER_OK, "handler");

    courier_engine *engine = NULL;
    CHECK(courier_engine_create(base, &engine) == COURIER_OK, "engine");
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "POST", "/submit", &request) == COURIER_OK, "create");
    CHECK(courier_request_freeze(request, "note") == COURIER_E_MISUSE, "no outbox on the engine yet");
    courier_request_free(request);

    CHECK(courier_engine_set_outbox(engine, outbox) == COURIER_OK, "set outbox");
    CHECK(courier_request_create(engine, "POST", "/submit", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_body(request, "from C", 6) == COURIER_OK, "body");
    CHECK(courier_request_freeze(request, "note") == COURIER_OK, "freeze");
    const char *id = courier_request_outbox_id(request);
    CHECK(id != NULL && strlen(id) == 32, "an id");
    courier_response *response = NULL;
    CHECK(courier_request_perform(request, &response) == COURIER_OK, "perform: %s", courier_request_errmsg(request));
    CHECK(courier_response_status(response) == 201, "created: %d", courier_response_status(response));
    size_t length = 0;
    const char *body = (const char *)courier_response_body(response, &length);
    char expected[64];
    snprintf(expected, sizeof expected, "created %s", id ? id : "");
    CHECK(length == strlen(expected) && memcmp(body, expected, length) == 0, "the server saw the key");
    CHECK(wait_for(finished_seen) && finished_status == 201 && id && strcmp(finished_id, id) == 0, "the outbox's handler");
    CHECK(courier_outbox_count(outbox) == 0, "answered: removed");
    courier_response_free(response);
    courier_request_free(request);

    int kind = -1;
    char interface[64] = "x";
    CHECK(courier_network_status(&kind, interface, sizeof interface) == COURIER_OK, "status");
    CHECK(kind >= COURIER_NETWORK_NONE && kind <= COURIER_NETWORK_CELLULAR, "a kind: %d", kind);
    /* A watch outlives a shutdown: the next loop's monitor reports to it. */
    int watch = 0;
    CHECK(courier_network_watch(on_network, NULL, &watch) == COURIER_OK, "watch");
    courier_shutdown();
    CHECK(courier_network_set_override(COURIER_NETWORK_CELLULAR) == COURIER_OK, "override");
    CHECK(wait_for(cellular_seen), "the watch heard of the change after a shutdown: %d", seen_kind);
    courier_network_unwatch(watch);
    CHECK(courier_network_status(&kind, interface, sizeof interface) == COURIER_OK && kind == COURIER_NETWORK_CELLULAR, "forced");
    CHECK(courier_queue_width() == 2, "the width follows: %d", courier_queue_width());
    CHECK(courier_network_set_override(-1) == COURIER_OK, "back");
    CHECK(courier_network_set_override(9) == COURIER_E_INVALID_ARGUMENT, "bad kind");
    CHECK(courier_queue_follow_network(-1, 6, 2, 0) == COURIER_E_INVALID_ARGUMENT, "bad width");
    courier_queue_set_width(4);
    CHECK(courier_network_set_override(COURIER_NETWORK_WIFI) == COURIER_OK && courier_queue_width() == 4, "an application's width stays");

    courier_engine_destroy(engine);
    courier_outbox_close(outbox);
    CHECK(courier_outbox_open(directory, 0, &outbox) == COURIER_OK, "reopened once closed");
    courier_outbox_close(outbox);
    return failures;
}

/* wait's debug callback: says on stderr when the request begins to wait in the outbox (a test
 * brings the network back only then). */
static void on_debug(courier_request *request, int kind, const char *data, size_t length, void *user) {
    (void)request; (void)user;
    static const char waiting[] = "Waiting in the outbox";
    if (kind == COURIER_DEBUG_TEXT && length >= sizeof waiting - 1 && memcmp(data, waiting, sizeof waiting - 1) == 0) {
        fprintf(stderr, "held: %.*s", (int)length, data);
        fflush(stderr);
    }
}

static int wait_for_network(const char *url, const char *directory, long retry_ms) {
    courier_outbox *outbox = NULL;
    CHECK(courier_outbox_open(directory, retry_ms, &outbox) == COURIER_OK, "open");
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_outbox(engine, outbox) == COURIER_OK, "set outbox");
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "POST", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_debug(request, on_debug, NULL) == COURIER_OK, "debug");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_CONNECT, 1000) == COURIER_OK, "timeout");
    courier_request_set_body(request, "waited", 6);
    CHECK(courier_request_freeze(request, "note") == COURIER_OK, "freeze");
    courier_response *response = NULL;
    int code = courier_request_perform(request, &response);
    CHECK(code == COURIER_OK, "perform: %s", courier_request_errmsg(request));
    if (code == COURIER_OK) printf("delivered %d %s\n", courier_response_status(response), courier_request_outbox_id(request));
    CHECK(courier_outbox_count(outbox) == 0, "removed once answered");
    courier_response_free(response);
    courier_request_free(request);
    courier_engine_destroy(engine);
    courier_outbox_close(outbox);
    return failures;
}

static int retry_after_outage(const char *url) {
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    courier_request *request = NULL;
    courier_response *response = NULL;
    CHECK(courier_request_create(engine, "POST", url, &request) == COURIER_OK, "create");
    courier_request_add_header(request, "Idempotency-Key", "unrouted-1");
    int code = courier_request_perform(request, &response);
    CHECK(code == COURIER_E_CONNECT_NO_ROUTE, "no route: %d %s", code, courier_request_errmsg(request));
    printf("unrouted\n");
    fflush(stdout);
    courier_response_free(response);
    courier_request_free(request);

    const long interval_ms = 50;
    CHECK(courier_request_create(engine, "POST", url, &request) == COURIER_OK, "create");
    courier_request_add_header(request, "Idempotency-Key", "retried-1");
    courier_request_set_body(request, "retried", 7);
    CHECK(courier_request_set_retry(request, 1, &interval_ms, 1, 0) == COURIER_OK, "retry");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_TOTAL, 60000) == COURIER_OK, "timeout");
    response = NULL;
    code = courier_request_perform(request, &response);
    CHECK(code == COURIER_OK, "the retry waited for the network: %s", courier_request_errmsg(request));
    if (code == COURIER_OK) printf("retried %d %d\n", courier_response_status(response), courier_response_retries(response));
    courier_response_free(response);
    courier_request_free(request);
    courier_engine_destroy(engine);
    return failures;
}

/* The reachability of `host`: its reason (COURIER_REACH_*), and the interface in `interface`. */
static int reach(const char *host, int *reachable, char *interface, size_t capacity) {
    int reason = -1;
    CHECK(courier_network_reachability(host, reachable, &reason, interface, capacity) == COURIER_OK, "reachability of %s", host);
    return reason;
}

static int readable(int fd, int ms) {
    struct pollfd entry = { .fd = fd, .events = POLLIN };
    return poll(&entry, 1, ms) == 1 && (entry.revents & POLLIN);
}

/* A GET to `url` on `engine`: its code, and whether it went over a reused connection. */
static int get(courier_engine *engine, const char *url, int *reused) {
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create %s", url);
    courier_request_set_timeout(request, COURIER_TIMEOUT_CONNECT, 2000);
    courier_response *response = NULL;
    int code = courier_request_perform(request, &response);
    if (reused) *reused = response ? courier_response_reused_connection(response) : -1;
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

static int reachability_checks(const char *base) {
    int reachable = -1;
    char interface[64] = "x", url[256];
    CHECK(courier_network_reachability(NULL, &reachable, NULL, NULL, 0) == COURIER_E_MISUSE, "NULL host");
    /* Before any attempt: the kernel's route decides (127.0.0.0/8 leaves through lo). */
    CHECK(reach("127.0.0.9", &reachable, interface, sizeof interface) == COURIER_REACH_ROUTED && reachable == 1
          && strcmp(interface, "lo") == 0, "routed through lo: %d %s", reachable, interface);
    CHECK(reach("no-such-host.invalid", &reachable, interface, sizeof interface) == COURIER_REACH_UNRESOLVABLE
          && reachable == 0 && interface[0] == 0, "a name that does not resolve");

    courier_engine *engine = NULL;
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    /* A refusal makes a routed host unreachable; a success makes one "connected". */
    CHECK(get(engine, "http://127.0.0.9:1/", NULL) == COURIER_E_CONNECT, "refused");
    CHECK(reach("127.0.0.9", &reachable, interface, sizeof interface) == COURIER_REACH_CONNECT_FAILED && reachable == 0,
          "refused a moment ago: unreachable (%d)", reachable);
    int reused = -1;
    snprintf(url, sizeof url, "%s/keys", base);
    CHECK(get(engine, url, &reused) == COURIER_OK && reused == 0, "answered on a new connection");
    CHECK(reach("127.0.0.1", &reachable, interface, sizeof interface) == COURIER_REACH_CONNECTED && reachable == 1,
          "connected: %d", reachable);
    CHECK(get(engine, url, &reused) == COURIER_OK && reused == 1, "the idle connection is reused while nothing changes");

    /* Network changes through the engine's descriptor. */
    CHECK(courier_engine_watch_network(NULL, 1) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_engine_next_network(NULL, NULL, NULL, 0) == COURIER_E_MISUSE, "NULL engine");
    int fd = courier_engine_fd(engine), kind = -1;
    CHECK(courier_engine_watch_network(engine, 1) == COURIER_OK, "watch through the descriptor");
    CHECK(!readable(fd, 0), "idle before a change");
    CHECK(courier_engine_next_network(engine, &kind, interface, sizeof interface) == COURIER_E_NOT_FOUND, "nothing yet");
    CHECK(courier_network_set_override(COURIER_NETWORK_CELLULAR) == COURIER_OK, "override");
    CHECK(readable(fd, 5000), "readable after a change");
    CHECK(courier_engine_next_network(engine, &kind, interface, sizeof interface) == COURIER_OK
          && kind == COURIER_NETWORK_CELLULAR && strcmp(interface, "override") == 0, "the change: %d %s", kind, interface);
    CHECK(courier_engine_next_network(engine, &kind, interface, sizeof interface) == COURIER_E_NOT_FOUND, "taken");
    CHECK(!readable(fd, 0), "idle again once taken");

    /* The change dropped the idle connection and what was learned of hosts on the old network. */
    CHECK(get(engine, url, &reused) == COURIER_OK && reused == 0, "a new connection after the change: reused %d", reused);
    CHECK(reach("127.0.0.9", &reachable, interface, sizeof interface) == COURIER_REACH_ROUTED && reachable == 1,
          "the refusal belonged to the old network");

    /* Stopped: changes no longer queue. */
    CHECK(courier_engine_watch_network(engine, 0) == COURIER_OK, "unwatch");
    CHECK(courier_network_set_override(-1) == COURIER_OK, "back");
    /* The loop runs its jobs in order: once it answered this, it has applied the override. */
    CHECK(courier_network_status(&kind, interface, sizeof interface) == COURIER_OK, "status after the change");
    CHECK(!readable(fd, 0) && courier_engine_next_network(engine, &kind, NULL, 0) == COURIER_E_NOT_FOUND, "not watched");
    /* Watching again, then destroying the engine with a change queued: nothing leaks or hangs. */
    CHECK(courier_engine_watch_network(engine, 1) == COURIER_OK, "watch again");
    CHECK(courier_network_set_override(COURIER_NETWORK_WIFI) == COURIER_OK, "another change");
    CHECK(readable(fd, 5000), "queued");
    courier_engine_destroy(engine);
    CHECK(courier_network_set_override(-1) == COURIER_OK, "back");
    return failures;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "checks") == 0) {
        if (checks(argv[2], argv[3])) return 1;
    } else if ((argc == 4 || argc == 5) && strcmp(argv[1], "wait") == 0) {
        if (wait_for_network(argv[2], argv[3], argc == 5 ? atol(argv[4]) : 300)) return 1;
    } else if (argc == 3 && strcmp(argv[1], "reach") == 0) {
        if (reachability_checks(argv[2])) return 1;
    } else if (argc == 3 && strcmp(argv[1], "retry") == 0) {
        if (retry_after_outage(argv[2])) return 1;
    } else if ((argc == 2 || (argc == 3 && strcmp(argv[2], "wifi-only") == 0)) && strcmp(argv[1], "network") == 0) {
        if (argc == 3) CHECK(courier_queue_follow_network(6, 6, 2, 1) == COURIER_OK, "wifi-only");
        int kind = -1;
        char interface[64] = "";
        CHECK(courier_network_status(&kind, interface, sizeof interface) == COURIER_OK, "status");
        printf("%d %s %d\n", kind, interface[0] ? interface : "-", courier_queue_width());
        return failures ? 1 : 0;
    } else {
        fprintf(stderr, "usage: outbox checks BASE_URL DIR | outbox wait URL DIR [RETRY_MS] | outbox reach BASE_URL | outbox retry URL | outbox network [wifi-only]\n");
        return 2;
    }
    fflush(stdout);
    printf("outbox: all checks passed\n");
    return 0;
}
