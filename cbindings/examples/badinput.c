/*
 * badinput: every kind of bad input the ABI promises to survive, checked for its exact result
 * code. Run under valgrind by the test suite (no invalid access, no leak). With --unsafe it also
 * frees a request twice, which is detected from the handle's tag while its memory is not reused
 * (that read of freed memory is why it stays out of the valgrind run).
 *
 *   ./badinput http://127.0.0.1:8080 [--unsafe]
 */
#include <courier.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(expression, expected)                                                             \
    do {                                                                                        \
        int got_ = (expression);                                                                \
        if (got_ != (expected)) {                                                               \
            fprintf(stderr, "%s:%d: %s = %d (%s), expected %d\n", __FILE__, __LINE__, #expression, \
                    got_, courier_strerror(got_), (int)(expected));                             \
            failures++;                                                                         \
        }                                                                                       \
    } while (0)

#define TRUE(condition)                                                                         \
    do {                                                                                        \
        if (!(condition)) {                                                                     \
            fprintf(stderr, "%s:%d: %s is false\n", __FILE__, __LINE__, #condition);           \
            failures++;                                                                         \
        }                                                                                       \
    } while (0)

static void never_called(courier_request *r, courier_response *s, int code, void *user) {
    (void)r, (void)s, (void)code, (void)user;
    fprintf(stderr, "a callback ran for a call that returned an error\n");
    failures++;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s BASE [--unsafe]\n", argv[0]);
        return 2;
    }
    const char *base = argv[1];
    int unsafe = argc > 2 && strcmp(argv[2], "--unsafe") == 0;

    /* Library. */
    CHECK(courier_version_number(), COURIER_VERSION_NUM);
    TRUE(strcmp(courier_version(), "0.5.0") == 0);
    TRUE(strcmp(courier_strerror(COURIER_OK), "no error") == 0);
    TRUE(courier_strerror(12345) != NULL && courier_strerror(-7) != NULL);
    TRUE(strcmp(courier_strerror(COURIER_E_TIMEOUT_CONNECT), courier_strerror(COURIER_E_TIMEOUT)) != 0);
    CHECK(courier_queue_set_width(-1), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_queue_set_host_limit(NULL, 0), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_queue_set_host_limit("", 3), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_queue_observe(NULL, NULL, NULL), COURIER_E_MISUSE);
    CHECK(courier_queue_activity(NULL, NULL), COURIER_OK);

    /* Engines. */
    courier_engine *engine = (courier_engine *)0x1;
    CHECK(courier_engine_create(base, NULL), COURIER_E_MISUSE);
    CHECK(courier_engine_create("ftp://example.com/", &engine), COURIER_E_UNSUPPORTED_SCHEME);
    TRUE(engine == NULL);
    CHECK(courier_engine_create("http://", &engine), COURIER_E_INVALID_URL);
    CHECK(courier_engine_create("http://exa mple.com/", &engine), COURIER_E_INVALID_URL);
    CHECK(courier_engine_create(base, &engine), COURIER_OK);
    CHECK(courier_engine_add_header(NULL, "X-A", "1"), COURIER_E_MISUSE);
    CHECK(courier_engine_add_header(engine, "X-A", "1\r\nX-Injected: yes"), COURIER_E_INVALID_HEADER);
    CHECK(courier_engine_add_header(engine, "X-A", "1\nX-Injected: yes"), COURIER_E_INVALID_HEADER);
    CHECK(courier_engine_add_header(engine, "Bad Name", "1"), COURIER_E_INVALID_HEADER);
    CHECK(courier_engine_add_header(engine, "X-Colon:", "1"), COURIER_E_INVALID_HEADER);
    CHECK(courier_engine_add_header(engine, NULL, "1"), COURIER_E_INVALID_HEADER);
    CHECK(courier_engine_add_header(engine, "X-A", NULL), COURIER_E_INVALID_HEADER);
    CHECK(courier_engine_set_accepted_status(engine, 500, 200), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_engine_set_accepted_status(NULL, 200, 300), COURIER_E_MISUSE);
    CHECK(courier_engine_fd(NULL), -COURIER_E_MISUSE);
    TRUE(courier_engine_fd(engine) >= 0);
    courier_request *done_request;
    CHECK(courier_engine_next_done(engine, &done_request, NULL, NULL), COURIER_E_NOT_FOUND);
    TRUE(done_request == NULL);
    CHECK(courier_engine_next_done(engine, NULL, NULL, NULL), COURIER_E_MISUSE);

    /* Request construction. */
    courier_request *request = (courier_request *)0x1;
    CHECK(courier_request_create(engine, "GET", NULL, &request), COURIER_E_INVALID_URL);
    TRUE(request == NULL);
    CHECK(courier_request_create(engine, "GET", "/x", NULL), COURIER_E_MISUSE);
    CHECK(courier_request_create(engine, "GE T", "/x", &request), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_create(engine, "GET\r\n", "/x", &request), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_create(engine, "GET", "http://[::1/", &request), COURIER_E_INVALID_URL);
    CHECK(courier_request_create(engine, "GET", "gopher://example.com/", &request), COURIER_E_UNSUPPORTED_SCHEME);
    CHECK(courier_request_create(NULL, "GET", "relative/path", &request), COURIER_E_INVALID_URL);
    CHECK(courier_request_create((courier_engine *)&failures, "GET", "/x", &request), COURIER_E_MISUSE);

    /* Setters on NULL and with unknown values. */
    CHECK(courier_request_add_header(NULL, "X-A", "1"), COURIER_E_MISUSE);
    CHECK(courier_request_set_priority(NULL, COURIER_PRIORITY_HIGH), COURIER_E_MISUSE);
    CHECK(courier_request_send(NULL, never_called, NULL), COURIER_E_MISUSE);
    CHECK(courier_request_enqueue(NULL), COURIER_E_MISUSE);
    CHECK(courier_request_perform(NULL, NULL), COURIER_E_MISUSE);
    CHECK(courier_request_cancel(NULL), COURIER_E_MISUSE);
    TRUE(courier_request_errmsg(NULL) != NULL);
    courier_request_free(NULL);
    courier_response_free(NULL);
    courier_engine_destroy(NULL);
    TRUE(courier_response_status(NULL) == 0);
    TRUE(courier_response_header_count(NULL) == 0);
    TRUE(courier_response_header(NULL, "Server") == NULL);
    TRUE(courier_response_timing(NULL, COURIER_TIMING_TOTAL) == -1);
    size_t length = 99;
    TRUE(courier_response_body(NULL, &length) == NULL && length == 0);
    TRUE(courier_response_body_size(NULL) == -1);

    CHECK(courier_request_create(engine, "GET", "/small", &request), COURIER_OK);
    TRUE(strcmp(courier_request_errmsg(request), "no error") == 0);
    CHECK(courier_request_add_header(request, "X-A", "1\r\n\r\nGET /smuggled HTTP/1.1"), COURIER_E_INVALID_HEADER);
    TRUE(strstr(courier_request_errmsg(request), "header") != NULL);
    CHECK(courier_request_add_header(request, "", "1"), COURIER_E_INVALID_HEADER);
    CHECK(courier_request_set_priority(request, 5), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_priority(request, -1), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_timeout(request, 42, 10), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_timeout(request, COURIER_TIMEOUT_TOTAL, -5), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_param_encoding(request, 7), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_redirects(request, 3, 0), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_decompress(request, -1), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_max_body(request, -1), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_body(request, NULL, 5), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_body_file(request, NULL), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_output_file(request, ""), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_tls_verify(request, 3), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_tls_versions(request, 0x0305, 0), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_tls_alpn(request, 2), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_happy_eyeballs(request, -1), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_continue_timeout(request, -1), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_header_limits(request, -1, 0), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_header_limits(request, 0, -1), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_proxy_tunnel(request, 2), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_tls_ciphers(NULL, "x", NULL), COURIER_E_MISUSE);
    CHECK(courier_engine_set_tls_curves(NULL, "x"), COURIER_E_MISUSE);
    CHECK(courier_request_set_tls_versions(request, COURIER_TLS_1_3, COURIER_TLS_1_2), COURIER_E_INVALID_ARGUMENT);
    TRUE(courier_request_set_tls_pins(request, "md5//AAAA") != COURIER_OK);
    CHECK(courier_request_set_tls_pins(request, NULL), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_set_tls_client_certificate(request, NULL, NULL, NULL), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_add_param(request, NULL, "v"), COURIER_E_INVALID_ARGUMENT);
    CHECK(courier_request_send(request, NULL, NULL), COURIER_E_MISUSE);

    /* A request still works after all those refusals. */
    courier_response *response = NULL;
    CHECK(courier_request_add_param(request, "q", "a b&c"), COURIER_OK);
    CHECK(courier_request_perform(request, &response), COURIER_OK);
    CHECK(courier_response_status(response), 200);
    TRUE(courier_response_header(response, "content-length") != NULL);
    TRUE(courier_response_header(response, "X-Absent") == NULL);
    const char *name;
    size_t name_length;
    CHECK(courier_response_header_at(response, 100000, &name, &name_length, NULL, NULL), COURIER_E_NOT_FOUND);
    TRUE(strstr(courier_response_url(response), "q=a%20b%26c") != NULL);
    TRUE(courier_response_timing(response, 99) == -1);
    /* Sent once: frozen. */
    CHECK(courier_request_set_priority(request, COURIER_PRIORITY_HIGH), COURIER_E_MISUSE);
    CHECK(courier_request_send(request, never_called, NULL), COURIER_E_MISUSE);
    CHECK(courier_request_perform(request, NULL), COURIER_E_MISUSE);
    courier_response_free(response);
    courier_request_free(request);

    /* A path with unsafe bytes is escaped, as Swift's Engine.operation(path:) does: no CR/LF or
     * space ever reaches the request line. */
    CHECK(courier_request_create(engine, "GET", "/small?x=a b\r\nInjected: 1", &request), COURIER_OK);
    CHECK(courier_request_perform(request, &response), COURIER_OK);
    TRUE(strstr(courier_response_url(response), "x=a%20b%0D%0AInjected:%201") != NULL);
    courier_response_free(response);
    courier_request_free(request);

    /* Enqueue needs an engine to poll. */
    CHECK(courier_request_create(NULL, "GET", base, &request), COURIER_OK);
    CHECK(courier_request_enqueue(request), COURIER_E_MISUSE);
    courier_request_free(request);

    /* A body file that does not exist fails the request with a file error, through the callback
     * machinery, not inside the call. */
    CHECK(courier_request_create(engine, "POST", "/small", &request), COURIER_OK);
    CHECK(courier_request_set_body_file(request, "/nonexistent/courier/body"), COURIER_OK);
    CHECK(courier_request_perform(request, NULL) & 0xff, COURIER_E_FILE);
    courier_request_free(request);

    /* An unreachable port: a connect error, not a hang. */
    CHECK(courier_request_create(engine, "GET", "http://127.0.0.1:1/", &request), COURIER_OK);
    CHECK(courier_request_perform(request, NULL), COURIER_E_CONNECT);
    courier_request_free(request);

    /* Cancelled before it could run (width 0 holds it in the queue). */
    int width = courier_queue_width();
    CHECK(courier_queue_set_width(0), COURIER_OK);
    CHECK(courier_request_create(engine, "GET", "/small", &request), COURIER_OK);
    CHECK(courier_request_enqueue(request), COURIER_OK);
    CHECK(courier_request_cancel(request), COURIER_OK);
    courier_request *finished = NULL;
    int code = 0;
    for (int i = 0; i < 200 && courier_engine_next_done(engine, &finished, NULL, &code) == COURIER_E_NOT_FOUND; i++) usleep(10000);
    TRUE(finished == request);
    CHECK(code, COURIER_E_CANCELLED);
    courier_request_free(request);
    CHECK(courier_queue_set_width(width), COURIER_OK);

    /* A request freed while queued never reports. */
    CHECK(courier_request_create(engine, "GET", "/small", &request), COURIER_OK);
    CHECK(courier_request_send(request, never_called, NULL), COURIER_OK);
    courier_request_free(request);

    /* Destroyed engines: a second destroy is ignored, and the handle is refused afterwards. */
    courier_engine_destroy(engine);
    courier_engine_destroy(engine);
    CHECK(courier_engine_add_header(engine, "X-A", "1"), COURIER_E_MISUSE);
    CHECK(courier_request_create(engine, "GET", "/small", &request), COURIER_E_MISUSE);
    CHECK(courier_engine_next_done(engine, &finished, NULL, NULL), COURIER_E_MISUSE);

    if (unsafe) {
        CHECK(courier_request_create(NULL, "GET", base, &request), COURIER_OK);
        courier_request_free(request);
        courier_request_free(request);
        CHECK(courier_request_set_priority(request, COURIER_PRIORITY_LOW), COURIER_E_MISUSE);
    }

    CHECK(courier_shutdown(), COURIER_OK);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("ok\n");
    return failures ? 1 : 0;
}
