/*
 * trust: the application's trust decision and report-only pins from C (courier_engine_set_trust,
 * courier_engine_set_tls_pin_mode), against the test suite's nginx TLS servers: one with a
 * certificate from the test CA, one self-signed. Exits 0 when every check holds.
 *
 *   trust VALID_URL CA_FILE SELFSIGNED_URL
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "trust.c:%d: ", __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

/* What the hooks saw, and what `evaluate` answers. */
struct seen {
    int answer, calls, verdict, pin_matched, leaf_is_der, mismatches;
    char host[64];
};

static int evaluate(const char *host, int port, int verdict, int pin_matched, const unsigned char *const *chain,
                    const size_t *lengths, size_t count, void *user) {
    struct seen *seen = user;
    (void)port;
    seen->calls++;
    seen->verdict = verdict;
    seen->pin_matched = pin_matched;
    seen->leaf_is_der = count > 0 && lengths[0] > 4 && chain[0][0] == 0x30;
    snprintf(seen->host, sizeof seen->host, "%s", host);
    return seen->answer;
}

static void mismatch(const char *host, int port, void *user) {
    (void)host;
    (void)port;
    ((struct seen *)user)->mismatches++;
}

static int get(courier_engine *engine, const char *url) {
    courier_request *request = NULL;
    courier_response *response = NULL;
    CHECK(courier_request_create(engine, "GET", url, &request) == COURIER_OK, "create");
    int code = courier_request_perform(request, &response);
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: trust VALID_URL CA_FILE SELFSIGNED_URL\n");
        return 2;
    }
    const char *valid = argv[1], *ca = argv[2], *selfsigned = argv[3];
    const char *bogus = "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

    /* A chain Courier accepts, refused by the hook. */
    struct seen refuse = {.answer = 0};
    courier_engine *engine = NULL;
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    courier_engine_set_tls_ca(engine, ca, NULL);
    CHECK(courier_engine_set_trust(engine, evaluate, NULL, &refuse) == COURIER_OK, "trust");
    int code = get(engine, valid);
    CHECK(code == COURIER_E_TLS_REJECTED, "refused by the hook: %d", code);
    CHECK(refuse.calls >= 1 && refuse.verdict == COURIER_OK && refuse.pin_matched == -1 && refuse.leaf_is_der
          && strcmp(refuse.host, "localhost") == 0, "what the hook saw: %d %d %d %d %s", refuse.calls, refuse.verdict,
          refuse.pin_matched, refuse.leaf_is_der, refuse.host);
    courier_engine_destroy(engine);

    /* A chain Courier rejects (self-signed), accepted by the hook. */
    struct seen accept = {.answer = 1};
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    CHECK(courier_engine_set_trust(engine, evaluate, NULL, &accept) == COURIER_OK, "trust");
    code = get(engine, selfsigned);
    CHECK(code == COURIER_OK, "accepted by the hook: %d", code);
    CHECK(accept.verdict == COURIER_E_TLS_UNTRUSTED, "Courier's own verdict: %d", accept.verdict);
    CHECK(courier_engine_set_trust(engine, NULL, NULL, NULL) == COURIER_OK, "no hook");
    code = get(engine, selfsigned);
    CHECK(code == COURIER_E_TLS_UNTRUSTED, "Courier's verdict again: %d", code);
    courier_engine_destroy(engine);

    /* Pins that do not match: reported only, or enforced (reported first). */
    struct seen pins = {.answer = 1};
    CHECK(courier_engine_create(NULL, &engine) == COURIER_OK, "engine");
    courier_engine_set_tls_ca(engine, ca, NULL);
    CHECK(courier_engine_set_tls_pins(engine, bogus) == COURIER_OK, "pins");
    CHECK(courier_engine_set_trust(engine, NULL, mismatch, &pins) == COURIER_OK, "report hook");
    CHECK(courier_engine_set_tls_pin_mode(engine, COURIER_PIN_REPORT_ONLY) == COURIER_OK, "report only");
    code = get(engine, valid);
    CHECK(code == COURIER_OK && pins.mismatches == 1, "report only: %d, %d reports", code, pins.mismatches);
    CHECK(courier_engine_set_tls_pin_mode(engine, COURIER_PIN_ENFORCE) == COURIER_OK, "enforce");
    code = get(engine, valid);
    CHECK(code == COURIER_E_TLS_PIN_MISMATCH && pins.mismatches == 2, "enforced: %d, %d reports", code, pins.mismatches);

    /* Bad input. */
    CHECK(courier_engine_set_tls_pin_mode(engine, 5) == COURIER_E_INVALID_ARGUMENT, "an unknown mode");
    CHECK(courier_engine_set_tls_pin_mode(NULL, 0) == COURIER_E_MISUSE, "NULL engine");
    CHECK(courier_engine_set_trust(NULL, evaluate, NULL, NULL) == COURIER_E_MISUSE, "NULL engine");
    courier_engine_destroy(engine);
    if (failures) return 1;
    printf("trust: all checks passed\n");
    return 0;
}
