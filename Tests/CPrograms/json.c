/*
 * json: OCNet's JSON pretty printer from C (courier_json_pretty): sizing, truncation, bad input.
 * Exits 0 when every check holds.
 */
#include <courier.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "json.c:%d: ", __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
            failures++;                                         \
        }                                                       \
    } while (0)

int main(void) {
    const char *json = "{\"name\":\"\\u5f20\\u4e09\",\"ids\":[12345678901234567890,1.50],\"none\":{}}";
    const char *expected = "{\n  \"name\": \"\xe5\xbc\xa0\xe4\xb8\x89\",\n  \"ids\": [\n    12345678901234567890,\n"
                           "    1.50\n  ],\n  \"none\": {}\n}";
    size_t needed = 0;
    /* Sized first, then written. */
    CHECK(courier_json_pretty(json, strlen(json), NULL, 0, &needed) == COURIER_OK, "size");
    CHECK(needed == strlen(expected), "needed %zu, expected %zu", needed, strlen(expected));
    char out[256];
    CHECK(courier_json_pretty(json, strlen(json), out, sizeof out, &needed) == COURIER_OK, "write");
    CHECK(strcmp(out, expected) == 0, "pretty:\n%s", out);
    /* A buffer too small: cut, still terminated, and the whole length said. */
    char small[8];
    CHECK(courier_json_pretty(json, strlen(json), small, sizeof small, &needed) == COURIER_OK, "small");
    CHECK(strlen(small) == 7 && strncmp(small, expected, 7) == 0 && needed == strlen(expected), "cut: %s", small);
    /* Bad input: not JSON (nothing written), NULLs. */
    strcpy(small, "kept");
    CHECK(courier_json_pretty("{\"a\":", 5, small, sizeof small, &needed) == COURIER_E_INVALID_JSON, "not JSON");
    CHECK(strcmp(small, "kept") == 0, "nothing written for bad input: %s", small);
    CHECK(courier_json_pretty("", 0, out, sizeof out, &needed) == COURIER_E_INVALID_JSON, "empty");
    CHECK(courier_json_pretty(NULL, 3, out, sizeof out, &needed) == COURIER_E_MISUSE, "NULL json");
    CHECK(courier_json_pretty(json, strlen(json), out, sizeof out, NULL) == COURIER_E_MISUSE, "NULL needed");
    CHECK(courier_json_pretty(json, strlen(json), NULL, 10, &needed) == COURIER_E_MISUSE, "NULL out with a capacity");
    if (failures) return 1;
    printf("json: all checks passed\n");
    return 0;
}
