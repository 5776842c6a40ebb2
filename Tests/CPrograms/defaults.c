/*
 * defaults: courier.h 0.2's engine defaults (timeouts, redirects, TLS), reusing a request handle
 * with courier_request_reset, and the debug callback, against Tests/Servers/scripted_server.py
 * (/echo, /slow?ms=, /silence, /redirect) and nginx's TLS port; exits 0 when every check holds.
 * Run under valgrind too.
 *
 *   defaults SCRIPTED_BASE_URL HTTPS_URL CA_FILE
 */
#define _GNU_SOURCE  /* memmem */
#include <courier.h>

#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <time.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "defaults.c:%d: ", __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* Sends `request` and returns its code; the response (if any) is freed, its status kept. */
static int perform(courier_request *request, int *status) {
    courier_response *response = NULL;
    int code = courier_request_perform(request, &response);
    *status = response ? courier_response_status(response) : 0;
    courier_response_free(response);
    return code;
}

static void engine_defaults(const char *base, const char *https, const char *ca) {
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(base, &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_timeout(engine, COURIER_TIMEOUT_FIRST_BYTE, 300) == COURIER_OK, "engine timeout");
    CHECK(courier_engine_set_timeout(engine, 99, 300) == COURIER_E_INVALID_ARGUMENT, "unknown timeout");
    CHECK(courier_engine_set_timeout(engine, COURIER_TIMEOUT_CONNECT, -5) == COURIER_E_INVALID_ARGUMENT, "negative timeout");
    CHECK(courier_engine_set_redirects(engine, 0, -1) == COURIER_OK, "engine redirects");
    CHECK(courier_engine_set_redirects(engine, 3, -1) == COURIER_E_INVALID_ARGUMENT, "follow 3");
    CHECK(courier_engine_set_tls_ca(engine, ca, NULL) == COURIER_OK, "engine CA");
    CHECK(courier_engine_set_tls_versions(engine, 0x0304, 0x0303) == COURIER_E_INVALID_ARGUMENT, "min above max");
    CHECK(courier_engine_set_timeout(NULL, COURIER_TIMEOUT_CONNECT, 1) == COURIER_E_MISUSE, "NULL engine");

    int status = 0;
    courier_request *request = NULL;
    /* The engine's first-byte limit applies to its requests. */
    CHECK(courier_request_create(engine, "GET", "slow?ms=1500", &request) == COURIER_OK, "create");
    int code = perform(request, &status);
    CHECK(code == COURIER_E_TIMEOUT_FIRST_BYTE, "the engine's 300 ms limit: got %d (%s)", code, courier_strerror(code));
    courier_request_free(request);

    /* A request's own setting overrides it; COURIER_TIMEOUT_DEFAULT returns to the engine's. */
    CHECK(courier_request_create(engine, "GET", "slow?ms=600", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_FIRST_BYTE, 0) == COURIER_OK, "no limit");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_FIRST_BYTE, COURIER_TIMEOUT_DEFAULT) == COURIER_OK, "default");
    code = perform(request, &status);
    CHECK(code == COURIER_E_TIMEOUT_FIRST_BYTE, "back to the engine's limit: got %d", code);
    courier_request_free(request);
    CHECK(courier_request_create(engine, "GET", "slow?ms=600", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_FIRST_BYTE, 0) == COURIER_OK, "no limit");
    code = perform(request, &status);
    CHECK(code == COURIER_OK && status == 200, "the request's own limit: got %d, status %d", code, status);
    courier_request_free(request);

    /* COURIER_TIMEOUT_DEFAULT on the engine: the library's 60 s again (the rest must not race
     * 300 ms under valgrind). */
    CHECK(courier_engine_set_timeout(engine, COURIER_TIMEOUT_FIRST_BYTE, COURIER_TIMEOUT_DEFAULT) == COURIER_OK, "engine default");
    CHECK(courier_request_create(engine, "GET", "slow?ms=600", &request) == COURIER_OK, "create");
    code = perform(request, &status);
    CHECK(code == COURIER_OK && status == 200, "the library's limit again: got %d, status %d", code, status);
    courier_request_free(request);

    /* Redirects are not followed: the 302 is the answer. */
    CHECK(courier_request_create(engine, "GET", "redirect?to=/echo", &request) == COURIER_OK, "create");
    code = perform(request, &status);
    CHECK(code == COURIER_OK && status == 302, "the engine does not follow: %d, status %d", code, status);
    courier_request_free(request);

    /* COURIER_FOLLOW_AUTO_REFERER on the request: followed, and the hop names where it came from. */
    CHECK(courier_request_create(engine, "GET", "redirect?to=/echo", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_redirects(request, COURIER_FOLLOW_AUTO_REFERER, -1) == COURIER_OK, "auto referer");
    {
        courier_response *response = NULL;
        code = courier_request_perform(request, &response);
        size_t length = 0;
        const uint8_t *body = response ? courier_response_body(response, &length) : NULL;
        char expected[600];
        size_t baseLength = strlen(base);
        while (baseLength > 0 && base[baseLength - 1] == '/') baseLength--;
        snprintf(expected, sizeof expected, "[\"Referer\", \"%.*s/redirect?to=/echo\"]", (int)baseLength, base);
        CHECK(code == COURIER_OK && response && courier_response_status(response) == 200 && body &&
              memmem(body, length, expected, strlen(expected)), "auto referer: %d, %.*s", code, (int)length, body ? (const char *)body : "");
        courier_response_free(response);
    }
    courier_request_free(request);

    /* The engine's CA verifies an absolute https URL sent through it. */
    char url[512];
    snprintf(url, sizeof url, "%s", https);
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create https");
    code = perform(request, &status);
    CHECK(code == COURIER_OK && status == 200, "the engine's CA: %d (%s)", code, courier_request_errmsg(request));
    courier_request_free(request);
    /* Without it, the same URL fails verification. */
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create https");
    code = perform(request, &status);
    CHECK((code & 0xff) == COURIER_E_TLS, "no CA: %d", code);
    courier_request_free(request);
    courier_engine_destroy(engine);
}

struct trace {
    int text, out, in;
    int connected, reused;
    char first_out[64];
    char last_in[64];
};

static void copy_prefix(char *into, size_t capacity, const char *data, size_t length) {
    size_t n = length < capacity - 1 ? length : capacity - 1;
    memcpy(into, data, n);
    into[n] = 0;
}

static void on_debug(courier_request *request, int kind, const char *data, size_t length, void *user) {
    (void)request;
    struct trace *trace = user;
    switch (kind) {
    case COURIER_DEBUG_TEXT:
        trace->text++;
        if (length > 0 && data[length - 1] == '\n' && memmem(data, length, "Connected to", 12)) trace->connected++;
        if (memmem(data, length, "Re-using existing connection", 28)) trace->reused++;
        break;
    case COURIER_DEBUG_HEADER_OUT:
        if (trace->out++ == 0) copy_prefix(trace->first_out, sizeof trace->first_out, data, length);
        /* The head ends with its empty line. */
        if (length < 4 || memcmp(data + length - 4, "\r\n\r\n", 4) != 0) trace->out += 1000;
        break;
    case COURIER_DEBUG_HEADER_IN:
        trace->in++;
        copy_prefix(trace->last_in, sizeof trace->last_in, data, length);
        break;
    default:
        trace->text += 1000;
    }
}

static void reset_and_debug(const char *base) {
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(base, &engine) == COURIER_OK, "engine");
    struct trace engine_trace = {0};
    CHECK(courier_engine_set_debug(engine, on_debug, &engine_trace) == COURIER_OK, "engine debug");

    int status = 0, marker = 7;
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "GET", "redirect?to=/echo", &request) == COURIER_OK, "create");
    CHECK(courier_request_set_user_data(request, &marker) == COURIER_OK, "user data");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "redirected GET");
    /* Two exchanges: the 302 and the /echo, each with its heads. */
    CHECK(engine_trace.out == 2 && engine_trace.in == 2, "heads shown: %d out, %d in", engine_trace.out, engine_trace.in);
    CHECK(strncmp(engine_trace.first_out, "GET /redirect?to=/echo HTTP/1.1\r\n", 33) == 0, "request head: %s", engine_trace.first_out);
    CHECK(strncmp(engine_trace.last_in, "HTTP/1.1 200", 12) == 0, "response head: %s", engine_trace.last_in);
    /* (The first may reuse a connection of the first part: the pool is the process's.) */
    CHECK(engine_trace.connected + engine_trace.reused == 2 && engine_trace.reused >= 1, "connection lines: %d connected, %d re-used",
          engine_trace.connected, engine_trace.reused);

    /* Sent already: setters refuse until it is reset. */
    CHECK(courier_request_add_header(request, "X-A", "1") == COURIER_E_MISUSE, "frozen after send");
    CHECK(courier_request_reset(request, "POST", "http://") == COURIER_E_INVALID_URL, "refused URL");
    CHECK(courier_request_reset(request, "BAD METHOD", "echo") == COURIER_E_INVALID_ARGUMENT, "refused method");
    CHECK(courier_request_reset(request, "POST", "echo") == COURIER_OK, "reset: %s", courier_request_errmsg(request));
    CHECK(courier_request_user_data(request) == &marker, "user data kept");
    CHECK(strcmp(courier_request_errmsg(request), courier_strerror(COURIER_OK)) == 0, "message cleared: %s", courier_request_errmsg(request));
    /* The engine's debug callback is the reset request's again; a request's own replaces it. */
    struct trace own = {0};
    CHECK(courier_request_set_debug(request, on_debug, &own) == COURIER_OK, "own debug");
    CHECK(courier_request_set_body(request, "hello", 5) == COURIER_OK, "body");
    courier_response *response = NULL;
    CHECK(courier_request_perform(request, &response) == COURIER_OK, "second send: %s", courier_request_errmsg(request));
    size_t length = 0;
    const char *body = (const char *)courier_response_body(response, &length);
    CHECK(body && memmem(body, length, "\"method\": \"POST\"", 16) && memmem(body, length, "\"body\": \"hello\"", 15),
          "POST with its body: %.*s", (int)length, body ? body : "");
    courier_response_free(response);
    CHECK(own.out == 1 && own.in == 1 && strncmp(own.first_out, "POST /echo HTTP/1.1\r\n", 21) == 0, "own debug: %s", own.first_out);
    CHECK(engine_trace.out == 2, "the engine's callback did not see it");

    /* Reset drops the callback set before: the third send shows nothing to `own`. */
    CHECK(courier_request_reset(request, NULL, "echo") == COURIER_OK, "reset again");
    CHECK(courier_request_set_debug(request, NULL, NULL) == COURIER_OK, "no debug");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "third send");
    CHECK(own.out == 1 && engine_trace.out == 2, "no callback: %d, %d", own.out, engine_trace.out);

    /* In flight: reset is refused and the request goes on. */
    CHECK(courier_request_reset(request, NULL, "slow?ms=300") == COURIER_OK, "reset to slow");
    CHECK(courier_request_enqueue(request) == COURIER_OK, "enqueue");
    CHECK(courier_request_reset(request, NULL, "echo") == COURIER_E_MISUSE, "in-flight reset refused");
    /* Finished but still in the completion queue: the queue holds the handle, so still refused. */
    struct pollfd ready = {courier_engine_fd(engine), POLLIN, 0};
    CHECK(poll(&ready, 1, 5000) == 1, "the completion queue became readable");
    CHECK(courier_request_reset(request, NULL, "echo") == COURIER_E_MISUSE, "reset refused before next_done took it");
    courier_request *done = NULL;
    int code = -1;
    for (int i = 0; i < 500 && courier_engine_next_done(engine, &done, &response, &code) == COURIER_E_NOT_FOUND; i++) {
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    CHECK(done == request && code == COURIER_OK, "the slow request finished: %d", code);
    CHECK(response && courier_response_status(response) == 200, "slow status");
    courier_response_free(response);
    CHECK(courier_request_reset(request, NULL, "echo") == COURIER_OK, "reset once taken");
    CHECK(courier_request_reset(NULL, NULL, "echo") == COURIER_E_MISUSE, "NULL request");
    courier_request_free(request);
    courier_engine_destroy(engine);
}

/* A response from the cache shows no request head, only a line saying so and the stored head. */
static void debug_of_a_cache_hit(const char *https, const char *ca) {
    courier_engine *engine = NULL;
    courier_cache *cache = NULL;
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    CHECK(courier_cache_create(NULL, -1, 0, &cache) == COURIER_OK, "cache");
    CHECK(courier_engine_set_cache(engine, cache) == COURIER_OK, "set cache");
    CHECK(courier_engine_set_tls_ca(engine, ca, NULL) == COURIER_OK, "CA");
    int status = 0;
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "GET", https, &request) == COURIER_OK, "create");
    CHECK(perform(request, &status) == COURIER_OK && status == 200, "stored");
    struct trace hit = {0};
    CHECK(courier_request_reset(request, NULL, https) == COURIER_OK, "reset");
    CHECK(courier_request_set_cache_policy(request, COURIER_CACHE_RETURN_CACHE_ELSE_LOAD) == COURIER_OK, "policy");
    CHECK(courier_request_set_debug(request, on_debug, &hit) == COURIER_OK, "debug");
    courier_response *response = NULL;
    CHECK(courier_request_perform(request, &response) == COURIER_OK, "hit: %s", courier_request_errmsg(request));
    CHECK(response && courier_response_cache_phase(response) != COURIER_PHASE_FRESH, "from the cache");
    courier_response_free(response);
    CHECK(hit.out == 0 && hit.in == 1 && hit.text == 1 && hit.connected == 0, "a hit: %d out, %d in, %d text", hit.out, hit.in, hit.text);
    CHECK(strncmp(hit.last_in, "HTTP/1.1 200", 12) == 0, "the stored head: %s", hit.last_in);
    courier_request_free(request);
    courier_engine_destroy(engine);
    courier_cache_destroy(cache);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: defaults SCRIPTED_BASE_URL HTTPS_URL CA_FILE\n");
        return 2;
    }
    engine_defaults(argv[1], argv[2], argv[3]);
    reset_and_debug(argv[1]);
    debug_of_a_cache_hit(argv[2], argv[3]);
    courier_shutdown();
    if (failures) fprintf(stderr, "defaults: %d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
