/*
 * retry: the C ABI's retries against Tests/Servers/retry_server.py; exits 0 when every check
 * holds, printing what failed otherwise.
 *
 *   retry BASE_URL OTHER_URL   two private retry servers (retry budgets are per origin: the
 *                              checks on the second do not depend on what the first spent)
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "retry.c:%d: ", __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

static char url[512];

static const char *at(const char *base, const char *path) {
    snprintf(url, sizeof url, "%s%s", base, path);
    return url;
}

/* Stops at the second retry; counts what it was asked. */
struct seen {
    int calls;
    int last_retry;
    int last_status;
};

static int stop_at_second(courier_request *request, int retry, int code, int status, void *user) {
    (void)request;
    (void)code;
    struct seen *seen = user;
    seen->calls++;
    seen->last_retry = retry;
    seen->last_status = status;
    return retry < 2;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: retry BASE_URL OTHER_URL\n");
        return 2;
    }
    const char *base = argv[1];
    const int64_t intervals[] = {20, 40};
    courier_request *request = NULL;
    courier_response *response = NULL;

    /* Two 503s, then the answer: two retries, each reason the status. */
    CHECK(courier_request_create(NULL, "GET", at(base, "/flaky/c1?fail=2&mode=503"), &request) == COURIER_OK, "create");
    CHECK(courier_request_set_retry(request, 3, intervals, 2, 0) == COURIER_OK, "set_retry");
    int code = courier_request_perform(request, &response);
    CHECK(code == COURIER_OK, "perform: %s", courier_strerror(code));
    CHECK(courier_response_status(response) == 200, "status %d", courier_response_status(response));
    CHECK(courier_response_retries(response) == 2, "retries %d", courier_response_retries(response));
    int status = -1;
    CHECK(courier_response_retry_reason(response, 0, &status) == 0 && status == 503, "reason 0: status %d", status);
    CHECK(courier_response_retry_reason(response, 2, &status) == -COURIER_E_INVALID_ARGUMENT, "reason out of range");
    courier_response_free(response);
    courier_request_free(request);

    /* Resets before a response: retried; the reason is the failure's code. */
    CHECK(courier_request_create(NULL, "GET", at(base, "/flaky/c2?fail=1&mode=reset"), &request) == COURIER_OK, "create");
    CHECK(courier_request_set_retry(request, 1, intervals, 1, COURIER_RETRY_JITTER) == COURIER_OK, "set_retry");
    code = courier_request_perform(request, &response);
    CHECK(code == COURIER_OK, "reset: %s", courier_strerror(code));
    if (response && courier_response_retries(response) == 1) {
        int reason = courier_response_retry_reason(response, 0, &status);
        CHECK(reason != 0 && status == 0, "reset reason %d status %d", reason, status);
    }
    courier_response_free(response);
    courier_request_free(request);

    /* The callback stops at the second retry: the 503 is the result. */
    struct seen seen = {0, 0, 0};
    CHECK(courier_request_create(NULL, "GET", at(base, "/flaky/c3?fail=9&mode=503"), &request) == COURIER_OK, "create");
    CHECK(courier_request_set_retry(request, 5, intervals, 2, COURIER_RETRY_BACKOFF) == COURIER_OK, "set_retry");
    CHECK(courier_request_set_retry_callback(request, stop_at_second, &seen) == COURIER_OK, "callback");
    code = courier_request_perform(request, &response);
    CHECK(code == COURIER_E_HTTP_STATUS, "stopped: %s", courier_strerror(code));
    CHECK(seen.calls == 2 && seen.last_retry == 2 && seen.last_status == 503, "calls %d retry %d status %d", seen.calls,
          seen.last_retry, seen.last_status);
    CHECK(response && courier_response_status(response) == 503 && courier_response_retries(response) == 1, "the last response");
    courier_response_free(response);
    courier_request_free(request);

    /* A POST is not retried without an Idempotency-Key or the flag; with the flag it is. */
    base = argv[2];
    CHECK(courier_request_create(NULL, "POST", at(base, "/flaky/c4?fail=1&mode=503"), &request) == COURIER_OK, "create");
    CHECK(courier_request_set_retry(request, 2, NULL, 0, 0) == COURIER_OK, "set_retry");
    code = courier_request_perform(request, &response);
    CHECK(code == COURIER_E_HTTP_STATUS && courier_response_retries(response) == 0, "POST retried: %s", courier_strerror(code));
    courier_response_free(response);
    courier_request_free(request);
    CHECK(courier_request_create(NULL, "POST", at(base, "/flaky/c5?fail=1&mode=503"), &request) == COURIER_OK, "create");
    CHECK(courier_request_set_retry(request, 2, intervals, 1, COURIER_RETRY_NON_IDEMPOTENT) == COURIER_OK, "set_retry");
    code = courier_request_perform(request, &response);
    CHECK(code == COURIER_OK && courier_response_retries(response) == 1, "POST with the flag: %s", courier_strerror(code));
    courier_response_free(response);
    courier_request_free(request);

    /* Custom statuses and limits. */
    CHECK(courier_request_create(NULL, "GET", at(base, "/flaky/c6?fail=1&mode=500"), &request) == COURIER_OK, "create");
    CHECK(courier_request_set_retry(request, 1, intervals, 1, 0) == COURIER_OK, "set_retry");
    const int statuses[] = {500};
    CHECK(courier_request_set_retry_statuses(request, statuses, 1) == COURIER_OK, "statuses");
    CHECK(courier_request_set_retry_limits(request, 10000, 5000, 1000) == COURIER_OK, "limits");
    code = courier_request_perform(request, &response);
    CHECK(code == COURIER_OK && courier_response_retries(response) == 1, "500 retried: %s", courier_strerror(code));
    courier_response_free(response);
    courier_request_free(request);

    /* Bad arguments get errors, not crashes. */
    CHECK(courier_request_set_retry(NULL, 1, NULL, 0, 0) == COURIER_E_MISUSE, "NULL request");
    CHECK(courier_request_create(NULL, "GET", at(base, "/ok"), &request) == COURIER_OK, "create");
    CHECK(courier_request_set_retry(request, -1, NULL, 0, 0) == COURIER_E_INVALID_ARGUMENT, "negative count");
    CHECK(courier_request_set_retry(request, 1, NULL, 3, 0) == COURIER_E_INVALID_ARGUMENT, "NULL intervals");
    const int64_t negative[] = {-5};
    CHECK(courier_request_set_retry(request, 1, negative, 1, 0) == COURIER_E_INVALID_ARGUMENT, "negative interval");
    CHECK(courier_request_set_retry(request, 1, NULL, 0, 0x100) == COURIER_E_INVALID_ARGUMENT, "unknown flag");
    CHECK(courier_request_set_retry_limits(request, 1, 1, 1) == COURIER_E_INVALID_ARGUMENT, "limits without retries");
    const int bad[] = {42};
    CHECK(courier_request_set_retry(request, 1, NULL, 0, 0) == COURIER_OK, "set_retry");
    CHECK(courier_request_set_retry_statuses(request, bad, 1) == COURIER_E_INVALID_ARGUMENT, "status 42");
    CHECK(courier_request_set_retry_statuses(request, NULL, 2) == COURIER_E_INVALID_ARGUMENT, "NULL statuses");
    CHECK(courier_request_set_retry_callback(request, NULL, NULL) == COURIER_OK, "clearing the callback");
    courier_request_free(request);
    CHECK(courier_response_retries(NULL) == -COURIER_E_MISUSE, "NULL response");
    CHECK(courier_response_retry_reason(NULL, 0, NULL) == -COURIER_E_MISUSE, "NULL response");

    if (failures) {
        fprintf(stderr, "retry: %d check(s) failed\n", failures);
        return 1;
    }
    printf("retry: all checks passed\n");
    return 0;
}
