/*
 * get: the blocking convenience call. Fetches one URL, prints the status line and headers to
 * stderr and the body to stdout; exits with the primary result code (0 on success).
 *
 *   cc get.c $(pkg-config --cflags --libs courier) -o get && ./get http://127.0.0.1:8080/
 */
#include <courier.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL [Name:value ...]\n", argv[0]);
        return 2;
    }
    courier_request *request = NULL;
    int rc = courier_request_create(NULL, "GET", argv[1], &request);
    if (rc != COURIER_OK) {
        fprintf(stderr, "get: %s (%d)\n", courier_strerror(rc), rc);
        return rc & 0xff;
    }
    for (int i = 2; i < argc; i++) {
        /* "Name:value" -> a header (split at the first colon). */
        char name[256];
        const char *colon = argv[i];
        size_t n = 0;
        while (*colon && *colon != ':' && n < sizeof name - 1) name[n++] = *colon++;
        name[n] = 0;
        rc = courier_request_add_header(request, name, *colon ? colon + 1 : "");
        if (rc != COURIER_OK) {
            fprintf(stderr, "get: header %s: %s\n", argv[i], courier_request_errmsg(request));
            courier_request_free(request);
            return rc & 0xff;
        }
    }

    courier_response *response = NULL;
    rc = courier_request_perform(request, &response);
    if (response) {
        fprintf(stderr, "status %d from %s\n", courier_response_status(response), courier_response_url(response));
        size_t count = courier_response_header_count(response);
        for (size_t i = 0; i < count; i++) {
            const char *name, *value;
            size_t name_length, value_length;
            courier_response_header_at(response, i, &name, &name_length, &value, &value_length);
            fprintf(stderr, "%.*s: %.*s\n", (int)name_length, name, (int)value_length, value);
        }
        size_t length = 0;
        const uint8_t *body = courier_response_body(response, &length);
        fwrite(body, 1, length, stdout);
        fprintf(stderr, "total %.6f s, reused %d\n", courier_response_timing(response, COURIER_TIMING_TOTAL),
                courier_response_reused_connection(response));
        courier_response_free(response);
    }
    if (rc != COURIER_OK) fprintf(stderr, "get: %s\n", courier_request_errmsg(request));
    courier_request_free(request);
    courier_shutdown(); /* joins the loop thread: nothing left for valgrind to report */
    return rc & 0xff;
}
