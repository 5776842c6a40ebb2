/*
 * timecond: curl's time conditions from C (courier_request_set_time_condition) against nginx:
 * If-Modified-Since at the file's own time answers 304, If-Unmodified-Since before it 412.
 * Exits 0 when every check holds.
 *
 *   timecond URL MTIME   a file nginx serves, and its modification time in epoch seconds
 */
#include <courier.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "timecond.c:%d: ", __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* The status of `url` under the condition. */
static int status_under(courier_engine *engine, const char *url, int condition, int64_t time) {
    courier_request *request = NULL;
    courier_response *response = NULL;
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_time_condition(request, condition, time) == COURIER_OK, "condition %d", condition);
    courier_request_perform(request, &response);
    int status = response ? courier_response_status(response) : -1;
    courier_response_free(response);
    courier_request_free(request);
    return status;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: timecond URL MTIME\n");
        return 2;
    }
    const char *url = argv[1];
    int64_t mtime = atoll(argv[2]);
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    courier_engine_set_accepted_status(engine, 0, 1000);
    CHECK(status_under(engine, url, COURIER_TIMECOND_IFMODSINCE, mtime) == 304, "not modified since its own time");
    CHECK(status_under(engine, url, COURIER_TIMECOND_IFMODSINCE, mtime - 3600) == 200, "modified since an hour before");
    CHECK(status_under(engine, url, COURIER_TIMECOND_IFUNMODSINCE, mtime - 3600) == 412, "modified since an hour before");
    CHECK(status_under(engine, url, COURIER_TIMECOND_IFUNMODSINCE, mtime) == 200, "not modified since its own time");
    CHECK(status_under(engine, url, COURIER_TIMECOND_NONE, 0) == 200, "no condition");
    courier_request *request = NULL;
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create");
    CHECK(courier_request_set_time_condition(request, 9, mtime) == COURIER_E_INVALID_ARGUMENT, "an unknown condition");
    CHECK(courier_request_set_time_condition(request, 1, INT64_MIN) == COURIER_E_INVALID_ARGUMENT, "a time no date names");
    CHECK(courier_request_set_time_condition(request, 2, INT64_MAX) == COURIER_E_INVALID_ARGUMENT, "a time no date names");
    courier_request_free(request);
    CHECK(courier_request_set_time_condition(NULL, 1, mtime) == COURIER_E_MISUSE, "NULL request");
    courier_engine_destroy(engine);
    if (failures) return 1;
    printf("timecond: all checks passed\n");
    return 0;
}
