/*
 * hooks: an engine's hooks from C against the scripted server (/echo answers with the request
 * as JSON, /redirect?to= redirects): a request hook that signs, a response hook that fails a 200
 * carrying an error body, a redirect hook that refuses and rewrites, a metrics hook that counts
 * (a request refused before I/O is not counted; a refused redirect ends without a response, so
 * the response hook does not see it); and an urlencoded form body. Exits 0 when every check holds.
 *
 *   hooks BASE_URL
 */
#define _GNU_SOURCE  /* memmem */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "hooks.c:%d: ", __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

struct counts {
    int requests, responses, redirects, metrics, metrics_with_response;
};

static int sign(courier_outgoing *request, void *user) {
    struct counts *counts = user;
    counts->requests++;
    size_t length = 0;
    courier_outgoing_body(request, &length);
    char signature[256];
    snprintf(signature, sizeof signature, "%s %zu", courier_outgoing_method(request), length);
    if (courier_outgoing_set_header(request, "X-Signature", signature) != COURIER_OK) return 1;
    if (courier_outgoing_set_header(request, "X-Bad", "a\r\nb") != COURIER_E_INVALID_HEADER) return 1;
    if (courier_outgoing_header(request, "User-Agent") == NULL) return 1;
    return strstr(courier_outgoing_url(request), "reject=1") ? 7 : 0;
}

static int judge(courier_response *response, void *user) {
    ((struct counts *)user)->responses++;
    size_t length = 0;
    const void *body = courier_response_body(response, &length);
    return body && memmem(body, length, "fail me", 7) ? 42 : 0;
}

static int redirect(int status, const char *from, const char *to, char *rewrite, size_t capacity, void *user) {
    (void)status; (void)from;
    ((struct counts *)user)->redirects++;
    if (strstr(to, "/forbidden")) return COURIER_REDIRECT_REFUSE;
    if (strstr(to, "/old")) {
        snprintf(rewrite, capacity, "/echo?rewritten=1");
        return COURIER_REDIRECT_REWRITE;
    }
    return COURIER_REDIRECT_FOLLOW;
}

static void metrics(courier_request *request, courier_response *response, int code, void *user) {
    (void)request; (void)code;
    struct counts *counts = user;
    counts->metrics++;
    if (response && courier_response_timing(response, COURIER_TIMING_TOTAL) >= 0) counts->metrics_with_response++;
}

/* Performs a request of `engine` and returns its code; *body_has says whether the body contains `needle`. */
static int run(courier_engine *engine, const char *method, const char *path, const char *body, const char *needle, int *body_has) {
    courier_request *request = NULL;
    courier_response *response = NULL;
    if (courier_request_create(engine, method, path, &request) != COURIER_OK) return -1;
    if (body) courier_request_set_body(request, body, strlen(body));
    int code = courier_request_perform(request, &response);
    *body_has = 0;
    if (response && needle) {
        size_t length = 0;
        const void *bytes = courier_response_body(response, &length);
        *body_has = bytes && memmem(bytes, length, needle, strlen(needle)) != NULL;
    }
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: hooks BASE_URL\n");
        return 2;
    }
    struct counts counts = {0, 0, 0, 0, 0};
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(argv[1], &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_hooks(NULL, sign, NULL, NULL, NULL, NULL) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_engine_set_hooks(engine, sign, judge, redirect, metrics, &counts) == COURIER_OK, "hooks");
    int has = 0;
    CHECK(run(engine, "POST", "/echo", "hello", "[\"X-Signature\", \"POST 5\"]", &has) == COURIER_OK && has, "signed");
    CHECK(run(engine, "POST", "/echo?reject=1", "x", NULL, &has) == COURIER_E_REJECTED, "the request hook's refusal");
    CHECK(run(engine, "POST", "/echo", "fail me", "fail me", &has) == COURIER_E_REJECTED && has, "a 200 failed, its body kept");
    CHECK(run(engine, "GET", "/redirect?to=/forbidden", NULL, NULL, &has) == COURIER_E_REDIRECT_REFUSED, "refused");
    CHECK(run(engine, "GET", "/redirect?to=/old", NULL, "rewritten", &has) == COURIER_OK && has, "rewritten");
    CHECK(counts.requests == 5 && counts.responses == 3 && counts.redirects == 2, "%d %d %d", counts.requests, counts.responses,
          counts.redirects);
    CHECK(counts.metrics == 4 && counts.metrics_with_response == 3, "metrics %d (%d)", counts.metrics, counts.metrics_with_response);
    CHECK(courier_outgoing_set_header(NULL, "a", "b") == COURIER_E_MISUSE && courier_outgoing_url(NULL) == NULL, "NULL outgoing");
    CHECK(courier_engine_set_hooks(engine, NULL, NULL, NULL, NULL, NULL) == COURIER_OK, "removed");
    CHECK(run(engine, "POST", "/echo?reject=1", "x", NULL, &has) == COURIER_OK && counts.requests == 5, "no hooks any more");
    /* An urlencoded form: order and repeated names kept. */
    courier_request *form = NULL;
    courier_response *answer = NULL;
    CHECK(courier_request_create(engine, "POST", "/echo", &form) == COURIER_OK, "create");
    CHECK(courier_request_add_urlencoded_field(form, "tag", "b a") == COURIER_OK, "field");
    CHECK(courier_request_add_urlencoded_field(form, "tag", "c&d") == COURIER_OK, "field");
    CHECK(courier_request_add_urlencoded_field(form, NULL, "x") == COURIER_E_INVALID_ARGUMENT, "NULL name");
    CHECK(courier_request_perform(form, &answer) == COURIER_OK, "sent");
    if (answer) {
        size_t length = 0;
        const void *bytes = courier_response_body(answer, &length);
        const char *body = "\"body\": \"tag=b+a&tag=c%26d\"", *type = "application/x-www-form-urlencoded";
        CHECK(bytes && memmem(bytes, length, body, strlen(body)) != NULL, "the form body");
        CHECK(bytes && memmem(bytes, length, type, strlen(type)) != NULL, "its type");
    }
    courier_response_free(answer);
    courier_request_free(form);
    courier_engine_destroy(engine);

    if (failures) {
        fprintf(stderr, "hooks: %d check(s) failed\n", failures);
        return 1;
    }
    printf("hooks: all checks passed\n");
    return 0;
}
