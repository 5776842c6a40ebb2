/*
 * cancel: an engine's requests cancelled all at once and by a predicate, an engine invalidated
 * (its running request cancelled, new ones refused), and a request's curl command, from C, against Tests/Servers/scripted_server.py (its /silence holds an answer back).
 * Exits 0 when every check holds.
 *
 *   cancel BASE_URL
 */
#include <courier.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "cancel.c:%d: ", __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* How the requests ended, by the index each was sent with. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int codes[5], ended = 0;

static void done(courier_request *request, courier_response *response, int code, void *user) {
    (void)request;
    courier_response_free(response);
    pthread_mutex_lock(&lock);
    codes[(long)user] = code;
    ended++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void wait_for(int count) {
    pthread_mutex_lock(&lock);
    while (ended < count) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

/* Selects the URLs containing the text `user` points to; counts what it was asked. */
static int asked = 0;
static int containing(const char *method, const char *url, void *user) {
    asked++;
    return strcmp(method, "GET") == 0 && strstr(url, (const char *)user) != NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: cancel BASE_URL\n");
        return 2;
    }
    courier_engine *engine = NULL, *other = NULL;
    CHECK(courier_engine_create(argv[1], &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_create(argv[1], &other) == COURIER_OK, "other engine");
    const char *paths[] = {"/silence?s=30&drop=1", "/silence?s=30&keep=1", "/silence?s=30&drop=2"};
    courier_request *requests[4];
    for (long i = 0; i < 3; i++) {
        CHECK(courier_request_create(engine, "GET", paths[i], &requests[i]) == COURIER_OK, "create");
        CHECK(courier_request_send(requests[i], done, (void *)i) == COURIER_OK, "send");
    }
    /* Another engine's request is never selected, whatever its URL. */
    CHECK(courier_request_create(other, "GET", "/silence?s=30&drop=3", &requests[3]) == COURIER_OK, "create");
    CHECK(courier_request_send(requests[3], done, (void *)3L) == COURIER_OK, "send");

    /* The predicate is asked before the call returns: a stack buffer is enough. */
    char fragment[8];
    strcpy(fragment, "drop=");
    CHECK(courier_engine_cancel_where(engine, containing, fragment) == COURIER_OK, "cancel where");
    strcpy(fragment, "XXXXX");
    CHECK(asked == 3, "asked about the engine's 3 requests only: %d", asked);
    wait_for(2);
    CHECK(codes[0] == COURIER_E_CANCELLED && codes[2] == COURIER_E_CANCELLED, "the selected ones: %d %d", codes[0], codes[2]);
    pthread_mutex_lock(&lock);
    CHECK(ended == 2, "only the selected ones ended: %d", ended);
    pthread_mutex_unlock(&lock);
    CHECK(courier_engine_cancel_all(engine) == COURIER_OK, "cancel all");
    wait_for(3);
    CHECK(codes[1] == COURIER_E_CANCELLED, "the rest of the engine's: %d", codes[1]);
    CHECK(courier_engine_cancel_all(other) == COURIER_OK, "cancel the other");
    wait_for(4);
    CHECK(codes[3] == COURIER_E_CANCELLED, "the other engine's, by its own cancel: %d", codes[3]);
    for (int i = 0; i < 4; i++) courier_request_free(requests[i]);
    CHECK(courier_engine_cancel_all(NULL) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_engine_cancel_where(engine, NULL, NULL) == COURIER_E_MISUSE, "NULL select");

    /* The curl command: sized, then written; cut and terminated in a small buffer. */
    courier_request *post = NULL;
    CHECK(courier_request_create(engine, "POST", "/echo?a=1", &post) == COURIER_OK, "create");
    courier_request_add_header(post, "X-Trace", "it's 1");
    courier_request_set_body(post, "hello", 5);
    size_t needed = 0;
    CHECK(courier_request_curl_command(post, NULL, 0, &needed) == COURIER_OK && needed > 0, "size");
    char command[1024];
    CHECK(courier_request_curl_command(post, command, sizeof command, &needed) == COURIER_OK && strlen(command) == needed, "write");
    CHECK(strncmp(command, "curl -X POST ", 13) == 0 && strstr(command, "/echo?a=1") && strstr(command, "-H 'X-Trace: it'\\''s 1'")
          && strstr(command, "--data-binary hello"), "command: %s", command);
    char small[6];
    CHECK(courier_request_curl_command(post, small, sizeof small, &needed) == COURIER_OK && strcmp(small, "curl ") == 0, "cut: %s", small);
    CHECK(courier_request_curl_command(NULL, command, sizeof command, &needed) == COURIER_E_MISUSE, "NULL request");
    CHECK(courier_request_curl_command(post, command, sizeof command, NULL) == COURIER_E_MISUSE, "NULL needed");
    courier_request_free(post);

    /* Invalidation: the running request is cancelled, no new one is made, a second call does
     * nothing; requests made before stay usable handles. */
    courier_request *running = NULL;
    CHECK(courier_request_create(other, "GET", "/silence?s=30&inv=1", &running) == COURIER_OK, "create");
    CHECK(courier_request_send(running, done, (void *)4L) == COURIER_OK, "send");
    CHECK(courier_engine_invalidate(other, 1) == COURIER_OK, "invalidate and cancel");
    wait_for(5);
    CHECK(codes[4] == COURIER_E_CANCELLED, "the running request was cancelled: %d", codes[4]);
    courier_request_free(running);
    courier_request *late = NULL;
    CHECK(courier_request_create(other, "GET", "/small", &late) == COURIER_E_INVALIDATED && late == NULL, "refused afterwards");
    CHECK(courier_engine_invalidate(other, 0) == COURIER_OK, "once: the second call does nothing");
    CHECK(courier_engine_invalidate(NULL, 0) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_engine_invalidate(engine, 2) == COURIER_E_INVALID_ARGUMENT, "cancel_running 2");
    CHECK(strcmp(courier_strerror(COURIER_E_INVALIDATED), "the engine was invalidated") == 0, "strerror");
    courier_engine_destroy(engine);
    courier_engine_destroy(other);
    if (failures) return 1;
    printf("cancel: all checks passed\n");
    return 0;
}
