/*
 * curl_bench URL N C [--close] [--cacert FILE] [--no-resume] [--hold] [--output PATH]
 *
 * The libcurl peer of courier-bench: N GET requests with at most C in flight through one multi
 * handle, easy handles reused (so connections are kept alive and reused, libcurl's fast path),
 * every status and body size checked, one JSON line printed in courier-bench's format.
 * Build: cc -O2 curl_bench.c -lcurl -o curl_bench
 */
#include <curl/curl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static size_t bytes_total;
static FILE *output_file;

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    (void)user;
    bytes_total += size * count;
    if (output_file && fwrite(data, size, count, output_file) != count) return 0;
    return size * count;
}

/* Live memory: freed heap memory goes back to the system first, as in courier-bench. */
static long resident_kib(void) {
    long size = 0, resident = 0;
    malloc_trim(0);
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE) / 1024;
}

int main(int argc, char **argv) {
    const char *url = NULL, *cacert = NULL;
    long total = 0, concurrency = 0;
    int close_each = 0, hold = 0, positional = 0, no_resume = 0, http2 = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--close")) close_each = 1;
        else if (!strcmp(argv[i], "--hold")) hold = 1;
        else if (!strcmp(argv[i], "--no-resume")) no_resume = 1;
        else if (!strcmp(argv[i], "--http2")) http2 = 1;
        else if (!strcmp(argv[i], "--cacert") && i + 1 < argc) cacert = argv[++i];
        else if (!strcmp(argv[i], "--output") && i + 1 < argc) {
            output_file = fopen(argv[++i], "wb");
            if (!output_file) { perror(argv[i]); return 2; }
        }
        else if (positional == 0) { url = argv[i]; positional++; }
        else if (positional == 1) { total = atol(argv[i]); positional++; }
        else if (positional == 2) { concurrency = atol(argv[i]); positional++; }
    }
    if (!url || total <= 0 || concurrency <= 0) {
        fprintf(stderr, "usage: curl_bench URL N C [--close] [--cacert FILE] [--no-resume] [--hold] [--output PATH] [--http2]\n");
        return 2;
    }
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);

    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, concurrency);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, concurrency);
    long rss_before = resident_kib();

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long started = 0, finished = 0, ok = 0;
    long slots = concurrency < total ? concurrency : total;
    CURL **easy = calloc(slots, sizeof(CURL *));
    for (long i = 0; i < slots; i++) {
        easy[i] = curl_easy_init();
        curl_easy_setopt(easy[i], CURLOPT_URL, url);
        curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(easy[i], CURLOPT_PRIVATE, (void *)easy[i]);
        if (close_each) curl_easy_setopt(easy[i], CURLOPT_FORBID_REUSE, 1L);
        if (cacert) curl_easy_setopt(easy[i], CURLOPT_CAINFO, cacert);
        if (no_resume) curl_easy_setopt(easy[i], CURLOPT_SSL_SESSIONID_CACHE, 0L);
        /* HTTP/2 by ALPN, streams waiting for the first connection's answer (multiplexed on it). */
        if (http2) {
            curl_easy_setopt(easy[i], CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
            curl_easy_setopt(easy[i], CURLOPT_PIPEWAIT, 1L);
        }
        curl_multi_add_handle(multi, easy[i]);
        started++;
    }
    int running = 1;
    while (finished < total) {
        curl_multi_perform(multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(multi, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *handle = msg->easy_handle;
            long status = 0;
            curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
            if (msg->data.result == CURLE_OK && status == 200) ok++;
            else if (finished - ok < 3) fprintf(stderr, "curl_bench: %s (status %ld)\n", curl_easy_strerror(msg->data.result), status);
            finished++;
            curl_multi_remove_handle(multi, handle);
            if (started < total) {
                curl_multi_add_handle(multi, handle);
                started++;
            }
        }
        if (finished < total) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double wall = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    printf("{\"requests\":%ld,\"ok\":%ld,\"bytes\":%zu,\"wall_s\":%f", total, ok, bytes_total, wall);
    if (hold) printf(",\"rss_before_kib\":%ld,\"rss_idle_kib\":%ld", rss_before, resident_kib());
    printf("}\n");
    for (long i = 0; i < slots; i++) {
        curl_multi_remove_handle(multi, easy[i]);
        curl_easy_cleanup(easy[i]);
    }
    free(easy);
    curl_multi_cleanup(multi);
    curl_global_cleanup();
    if (output_file) fclose(output_file);
    return ok == total ? 0 : 1;
}
