/*
 * info: per-request user data and the response facts of courier.h 0.2 (reason, HTTP version,
 * redirect history, bytes, remote address, TLS, trailers) and COURIER_TIMEOUT_DEFAULT, against
 * Tests/Servers/scripted_server.py; exits 0 when every check holds. Run under valgrind too.
 *
 *   info SCRIPTED_BASE_URL [HTTPS_URL CA_FILE]
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "info.c:%d: ", __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

struct context {
    const char *name;
    int progress_calls_with_context;
};

/* Finds its context through the request, not through the callback's own pointer. */
static void on_progress(courier_request *request, int direction, uint64_t done, int64_t total, void *user) {
    (void)direction, (void)done, (void)total, (void)user;
    struct context *context = courier_request_user_data(request);
    if (context && strcmp(context->name, "mine") == 0) context->progress_calls_with_context++;
}

static void user_data(const char *base) {
    char url[512];
    snprintf(url, sizeof url, "%s/echo", base);
    courier_request *request = NULL;
    courier_response *response = NULL;
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_user_data(request) == NULL, "unset user data is NULL");
    struct context context = {"mine", 0};
    CHECK(courier_request_set_user_data(request, &context) == COURIER_OK, "set user data");
    CHECK(courier_request_user_data(request) == &context, "user data back");
    CHECK(courier_request_set_progress(request, on_progress, NULL) == COURIER_OK, "progress");
    CHECK(courier_request_perform(request, &response) == COURIER_OK, "perform: %s", courier_request_errmsg(request));
    CHECK(context.progress_calls_with_context > 0, "the callback found its context (%d calls)", context.progress_calls_with_context);
    /* Still there after the request ended, and changeable. */
    CHECK(courier_request_user_data(request) == &context, "user data after perform");
    CHECK(courier_request_set_user_data(request, NULL) == COURIER_OK && courier_request_user_data(request) == NULL, "cleared");
    CHECK(courier_request_set_user_data(NULL, &context) == COURIER_E_MISUSE, "NULL request");
    CHECK(courier_request_user_data(NULL) == NULL, "NULL request's user data");
    courier_response_free(response);
    courier_request_free(request);
}

static void facts(const char *base) {
    char url[512];
    /* Two redirects, then /chunked (a trailer). */
    snprintf(url, sizeof url, "%s/redirect?code=301&to=%%2Fredirect%%3Fcode%%3D307%%26to%%3D%%2Fchunked", base);
    courier_request *request = NULL;
    courier_response *response = NULL;
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_perform(request, &response) == COURIER_OK, "perform: %s", courier_request_errmsg(request));
    if (!response) {
        courier_request_free(request);
        return;
    }
    CHECK(courier_response_status(response) == 200, "status %d", courier_response_status(response));
    CHECK(strcmp(courier_response_reason(response), "OK") == 0, "reason '%s'", courier_response_reason(response));
    CHECK(courier_response_http_version(response) == 11, "version %d", courier_response_http_version(response));
    CHECK(courier_response_redirect_count(response) == 2, "redirects %d", courier_response_redirect_count(response));
    const courier_response *first = courier_response_history(response, 0);
    const courier_response *second = courier_response_history(response, 1);
    CHECK(first && courier_response_status(first) == 301, "first hop 301");
    CHECK(second && courier_response_status(second) == 307, "second hop 307");
    CHECK(courier_response_history(response, 2) == NULL, "past the end");
    if (first) {
        CHECK(strcmp(courier_response_url(first), url) == 0, "first hop's URL %s", courier_response_url(first));
        CHECK(strcmp(courier_response_reason(first), "Redirect") == 0, "first hop's reason");
        const char *location = courier_response_header(first, "Location");
        CHECK(location && strcmp(location, "/redirect?code=307&to=/chunked") == 0, "first hop's Location %s", location ? location : "(none)");
        size_t length = 1;
        courier_response_body(first, &length);
        CHECK(length == 0, "a hop has no body");
        courier_response_free((courier_response *)first); /* cast away: still a no-op, it belongs to `response` */
        CHECK(courier_response_status(first) == 301, "still there after a stray free");
    }
    CHECK(courier_response_bytes_received(response) == 13, "body bytes %lld", (long long)courier_response_bytes_received(response));
    CHECK(courier_response_bytes_sent(response) > 60, "bytes sent %lld", (long long)courier_response_bytes_sent(response));
    const char *remote = courier_response_remote_address(response);
    CHECK(remote && strncmp(remote, "127.0.0.1:", 10) == 0, "remote %s", remote ? remote : "(null)");
    int resumed = -1;
    long verify = -1;
    CHECK(courier_response_tls(response, &resumed, &verify) == COURIER_E_NOT_FOUND, "no TLS over http");
    CHECK(courier_response_trailer_count(response) == 1, "trailers %zu", courier_response_trailer_count(response));
    const char *name = NULL, *value = NULL;
    CHECK(courier_response_trailer_at(response, 0, &name, &value) == COURIER_OK && strcmp(name, "X-Check") == 0
              && strcmp(value, "yes") == 0, "trailer X-Check: yes");
    CHECK(courier_response_trailer_at(response, 1, &name, &value) == COURIER_E_NOT_FOUND, "trailer past the end");
    /* A request that answered at once has no history. */
    CHECK(courier_response_history(NULL, 0) == NULL && courier_response_redirect_count(NULL) < 0, "NULL response");
    CHECK(courier_response_reason(NULL) == NULL && courier_response_bytes_sent(NULL) == -1, "NULL response facts");
    courier_response_free(response);
    courier_request_free(request);
}

static void timeout_default(const char *base) {
    char url[512];
    snprintf(url, sizeof url, "%s/silence?s=3", base);
    courier_request *request = NULL;
    courier_response *response = NULL;
    CHECK(courier_request_create(NULL, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_FIRST_BYTE, 0) == COURIER_OK, "no limit");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_FIRST_BYTE, 200) == COURIER_OK, "200 ms");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_TOTAL, 300) == COURIER_OK, "total 300 ms");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_TOTAL, COURIER_TIMEOUT_DEFAULT) == COURIER_OK, "total back to none");
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_FIRST_BYTE, -2) == COURIER_E_INVALID_ARGUMENT, "-2 refused");
    int code = courier_request_perform(request, &response);
    CHECK(code == COURIER_E_TIMEOUT_FIRST_BYTE, "the first-byte limit held, the total one was lifted: %d", code);
    courier_response_free(response);
    courier_request_free(request);
}

static void tls(const char *https, const char *ca) {
    courier_request *request = NULL;
    courier_response *response = NULL;
    CHECK(courier_request_create(NULL, "GET", https, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_tls_ca(request, ca, NULL) == COURIER_OK, "ca");
    CHECK(courier_request_perform(request, &response) == COURIER_OK, "https: %s", courier_request_errmsg(request));
    int resumed = -1;
    long verify = -1;
    CHECK(courier_response_tls(response, &resumed, &verify) == COURIER_OK, "TLS facts");
    CHECK(verify == 0 && (resumed == 0 || resumed == 1), "verified (%ld), resumed %d", verify, resumed);
    CHECK(courier_response_tls(response, NULL, NULL) == COURIER_OK, "NULL out pointers");
    courier_response_free(response);
    courier_request_free(request);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: info SCRIPTED_BASE_URL [HTTPS_URL CA_FILE]\n");
        return 2;
    }
    user_data(argv[1]);
    facts(argv[1]);
    timeout_default(argv[1]);
    if (argc >= 4) tls(argv[2], argv[3]);
    courier_shutdown();
    return failures == 0 ? 0 : 1;
}
