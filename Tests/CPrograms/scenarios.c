/*
 * scenarios: C ABI behaviours that need a process of their own or several threads, one per
 * subcommand. Each prints what it saw and exits 0 when it is as courier.h promises.
 *
 *   scenarios loopfail URL              the system refuses the loop's descriptors: an error, not an abort
 *   scenarios cancel SLOW_URL           courier_request_cancel from another thread ends a perform
 *   scenarios download OK_URL 404_URL DIR   staged downloads: a failed one leaves the file untouched
 *   scenarios tls URL CA CERT KEY PINS  https through the C ABI: CA, client certificate, pins
 *   scenarios cache BASE FRESH STALE SLOW DIR [RANGED]   the HTTP cache: hits, phases,
 *                                       cached-then-fresh, a generated 504, statistics, memory
 *                                       drop, coalescing, byte ranges kept and combined
 *   scenarios codings BASE              br and zstd bodies decoded, an unknown coding refused,
 *                                       decoding off leaves the body as sent
 *   scenarios routes PORT               --resolve, --connect-to and -6 as request options (the
 *                                       scripted server on 127.0.0.1:PORT)
 *   scenarios width SLOW_URL            the queue's width bounds the whole process: ten requests
 *                                       from two engines with width 2 (the server counts them)
 */
#include <courier.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

static int fail(const char *what, int code) {
    fprintf(stderr, "scenarios: %s: %s (%d)\n", what, courier_strerror(code), code);
    return 1;
}

/* The loop cannot get a descriptor: perform returns COURIER_E_LOOP_UNAVAILABLE and the process
 * lives on; with descriptors back, the next perform works. */
static int loopfail(const char *url) {
    courier_request *request = NULL;
    int rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return fail("create", rc);
    struct rlimit saved;
    getrlimit(RLIMIT_NOFILE, &saved);
    /* Every descriptor below the lowest free one is in use: with that as the limit, no new
     * descriptor can be made. */
    int lowest = dup(0);
    close(lowest);
    struct rlimit tight = saved;
    tight.rlim_cur = (rlim_t)lowest;
    if (setrlimit(RLIMIT_NOFILE, &tight) != 0) {
        perror("setrlimit");
        return 1;
    }
    courier_response *response = NULL;
    rc = courier_request_perform(request, &response);
    setrlimit(RLIMIT_NOFILE, &saved);
    printf("starved %d\n", rc);
    if (rc != COURIER_E_LOOP_UNAVAILABLE || response != NULL) return fail("perform without descriptors", rc);
    courier_request_free(request);

    rc = courier_request_create(NULL, "GET", url, &request);
    if (rc != COURIER_OK) return fail("create again", rc);
    rc = courier_request_perform(request, &response);
    printf("again %d status %d\n", rc, courier_response_status(response));
    if (rc != COURIER_OK) return fail("perform with descriptors back", rc);
    courier_response_free(response);
    courier_request_free(request);
    courier_shutdown();
    return 0;
}

struct perform_job {
    courier_request *request;
    int code;
    atomic_int done;  /* read by the cancelling thread while the other performs */
};

static void *perform_thread(void *context) {
    struct perform_job *job = context;
    courier_response *response = NULL;
    job->code = courier_request_perform(job->request, &response);
    courier_response_free(response);
    atomic_store(&job->done, 1);
    return NULL;
}

static void sleep_ms(long ms) {
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

/* One thread waits in perform, another cancels: perform returns COURIER_E_CANCELLED at once
 * (the server would not answer for seconds). A request cancelled before it is sent ends as
 * cancelled when it is. */
static int cancel(const char *slow_url) {
    struct perform_job job = {0};
    int rc = courier_request_create(NULL, "GET", slow_url, &job.request);
    if (rc != COURIER_OK) return fail("create", rc);
    pthread_t thread;
    pthread_create(&thread, NULL, perform_thread, &job);
    /* Cancel repeatedly until perform returns: the first cancel may come before the send, and
     * one that comes after it must end it. Bounded: 5 s. */
    for (int i = 0; i < 500 && !atomic_load(&job.done); i++) {
        courier_request_cancel(job.request);
        sleep_ms(10);
    }
    pthread_join(thread, NULL);
    printf("perform %d\n", job.code);
    if (job.code != COURIER_E_CANCELLED) return fail("perform after a cancel from another thread", job.code);
    courier_request_free(job.request);

    courier_request *early = NULL;
    courier_request_create(NULL, "GET", slow_url, &early);
    courier_request_cancel(early);
    courier_response *response = NULL;
    rc = courier_request_perform(early, &response);
    printf("early %d\n", rc);
    if (rc != COURIER_E_CANCELLED || response != NULL) return fail("perform of a request cancelled before it was sent", rc);
    courier_request_free(early);
    courier_shutdown();
    return 0;
}

static int read_file(const char *path, char *out, size_t size) {
    FILE *file = fopen(path, "rb");
    if (!file) return -1;
    size_t n = fread(out, 1, size - 1, file);
    out[n] = 0;
    fclose(file);
    return (int)n;
}

static int count_entries(const char *directory) {
    char command[4096];
    snprintf(command, sizeof command, "ls -A '%s' | wc -l", directory);
    FILE *pipe = popen(command, "r");
    int count = -1;
    if (pipe && fscanf(pipe, "%d", &count) != 1) count = -1;
    if (pipe) pclose(pipe);
    return count;
}

/* Downloads are staged: the destination holds the old content after a failure and the whole new
 * body after success, and no temporary file is left behind either way. */
static int download(const char *ok_url, const char *missing_url, const char *directory) {
    char path[4096];
    snprintf(path, sizeof path, "%s/target.bin", directory);
    FILE *file = fopen(path, "wb");
    fputs("previous content", file);
    fclose(file);

    courier_request *request = NULL;
    courier_request_create(NULL, "GET", missing_url, &request);
    courier_request_set_output_file(request, path);
    courier_response *response = NULL;
    int rc = courier_request_perform(request, &response);
    courier_response_free(response);
    courier_request_free(request);
    char content[256];
    read_file(path, content, sizeof content);
    printf("404 %d content \"%s\" entries %d\n", rc, content, count_entries(directory));
    if (rc != COURIER_E_HTTP_STATUS || strcmp(content, "previous content") != 0 || count_entries(directory) != 1)
        return fail("a failed download changed the destination", rc);

    courier_request_create(NULL, "GET", ok_url, &request);
    courier_request_set_output_file(request, path);
    rc = courier_request_perform(request, &response);
    int64_t size = courier_response_body_size(response);
    courier_response_free(response);
    courier_request_free(request);
    int length = read_file(path, content, sizeof content);
    printf("200 %d size %lld file %d entries %d\n", rc, (long long)size, length, count_entries(directory));
    if (rc != COURIER_OK || length != (int)size || strcmp(content, "previous content") == 0 || count_entries(directory) != 1)
        return fail("a successful download did not replace the destination", rc);
    courier_shutdown();
    return 0;
}

/* https through the ABI against a real handshake: the test CA, a client certificate the server
 * demands, and pins (one right, then only a wrong one). */
static int tls(const char *url, const char *ca, const char *cert, const char *key, const char *pins) {
    courier_request *request = NULL;
    courier_response *response = NULL;
    courier_request_create(NULL, "GET", url, &request);
    courier_request_set_tls_ca(request, ca, NULL);
    courier_request_set_tls_client_certificate(request, cert, key, NULL);
    courier_request_set_tls_pins(request, pins);
    int rc = courier_request_perform(request, &response);
    printf("trusted %d status %d\n", rc, courier_response_status(response));
    courier_response_free(response);
    courier_request_free(request);
    if (rc != COURIER_OK) return fail("https with CA, client certificate and pins", rc);

    courier_request_create(NULL, "GET", url, &request);
    courier_request_set_tls_client_certificate(request, cert, key, NULL);
    rc = courier_request_perform(request, &response);
    printf("untrusted %d\n", rc);
    courier_response_free(response);
    courier_request_free(request);
    if (rc != COURIER_E_TLS_UNTRUSTED) return fail("https without the test CA", rc);

    courier_request_create(NULL, "GET", url, &request);
    courier_request_set_tls_ca(request, ca, NULL);
    courier_request_set_tls_client_certificate(request, cert, key, NULL);
    courier_request_set_tls_pins(request, "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    rc = courier_request_perform(request, &response);
    printf("mispinned %d\n", rc);
    courier_response_free(response);
    courier_request_free(request);
    if (rc != COURIER_E_TLS_PIN_MISMATCH) return fail("https with a wrong pin", rc);

    courier_request_create(NULL, "GET", url, &request);
    courier_request_set_tls_ca(request, ca, NULL);
    rc = courier_request_perform(request, &response);
    printf("no client certificate %d\n", rc);
    courier_response_free(response);
    courier_request_free(request);
    if (rc == COURIER_OK) return fail("a server that demands a client certificate answered without one", rc);
    courier_shutdown();
    return 0;
}

/* ---- cache ---- */

static int64_t stat_of(courier_cache *cache, int which) {
    int64_t value = -1;
    courier_cache_stat(cache, which, &value);
    return value;
}

static int perform_phase(courier_engine *engine, const char *path, int policy, const char *header, int *status) {
    courier_request *request = NULL;
    if (courier_request_create(engine, "GET", path, &request) != COURIER_OK) return -100;
    if (policy >= 0) courier_request_set_cache_policy(request, policy);
    if (header) courier_request_add_header(request, "Cache-Control", header);
    courier_response *response = NULL;
    int rc = courier_request_perform(request, &response);
    int phase = courier_response_cache_phase(response);
    *status = courier_response_status(response);
    if (rc != COURIER_OK && rc != COURIER_E_HTTP_STATUS) phase = -rc;
    courier_response_free(response);
    courier_request_free(request);
    return phase;
}

struct deliveries {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int count;
    int phases[4];
    int previews[4];
    int codes[4];
};

static void on_delivery(courier_request *request, courier_response *response, int code, void *user) {
    (void)request;
    struct deliveries *d = user;
    pthread_mutex_lock(&d->lock);
    if (d->count < 4) {
        d->phases[d->count] = courier_response_cache_phase(response);
        d->previews[d->count] = courier_response_is_preview(response);
        d->codes[d->count] = code;
    }
    d->count++;
    pthread_cond_broadcast(&d->changed);
    pthread_mutex_unlock(&d->lock);
    courier_response_free(response);
}

/* Waits until the counter `count`, guarded by `lock` and signalled on `changed`, reaches `target`
 * (at most `seconds`); what it reached. */
static int wait_count(pthread_mutex_t *lock, pthread_cond_t *changed, const int *count, int target, int seconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    pthread_mutex_lock(lock);
    while (*count < target) {
        if (pthread_cond_timedwait(changed, lock, &deadline) != 0) break;
    }
    int seen = *count;
    pthread_mutex_unlock(lock);
    return seen;
}

/* Waits until `count` deliveries arrived (at most 10 s). */
static int wait_deliveries(struct deliveries *d, int count) {
    return wait_count(&d->lock, &d->changed, &d->count, count, 10);
}

/* GET `path` with `range` ("bytes=..."): the phase, and the status, body and Content-Range seen. */
static int perform_range(courier_engine *engine, const char *path, const char *range, int *status, char *body, size_t size,
                         char *content_range, size_t range_size) {
    courier_request *request = NULL;
    if (courier_request_create(engine, "GET", path, &request) != COURIER_OK) return -100;
    if (range) courier_request_add_header(request, "Range", range);
    courier_response *response = NULL;
    int rc = courier_request_perform(request, &response);
    int phase = rc == COURIER_OK ? courier_response_cache_phase(response) : -rc;
    *status = courier_response_status(response);
    size_t length = 0;
    const uint8_t *bytes = courier_response_body(response, &length);
    snprintf(body, size, "%.*s", (int)length, bytes ? (const char *)bytes : "");
    const char *field = courier_response_header(response, "Content-Range");
    snprintf(content_range, range_size, "%s", field ? field : "");
    courier_response_free(response);
    courier_request_free(request);
    return phase;
}

/* Byte ranges (RFC 9111 sections 3.3, 3.4): two parts from the origin, a range across both and the
 * whole from storage. `path` answers ranges of "0123456789abcdefghij". */
static int ranges(courier_engine *engine, const char *path) {
    char body[64], field[64];
    int status = 0;
    int head = perform_range(engine, path, "bytes=0-9", &status, body, sizeof body, field, sizeof field);
    if (head != COURIER_PHASE_FRESH || status != 206 || strcmp(body, "0123456789") != 0) return fail("the first part", head);
    int tail = perform_range(engine, path, "bytes=10-", &status, body, sizeof body, field, sizeof field);
    if (tail != COURIER_PHASE_FRESH || status != 206 || strcmp(body, "abcdefghij") != 0) return fail("the second part", tail);
    int middle = perform_range(engine, path, "bytes=5-14", &status, body, sizeof body, field, sizeof field);
    printf("range across both parts: phase %d status %d body %s Content-Range %s\n", middle, status, body, field);
    if (middle != COURIER_PHASE_CACHED || status != 206 || strcmp(body, "56789abcde") != 0 || strcmp(field, "bytes 5-14/20") != 0) {
        return fail("a range from the stored parts", middle);
    }
    int whole = perform_range(engine, path, NULL, &status, body, sizeof body, field, sizeof field);
    if (whole != COURIER_PHASE_CACHED || status != 200 || strcmp(body, "0123456789abcdefghij") != 0) return fail("the combined whole", whole);
    return 0;
}

static int cache(const char *base, const char *fresh, const char *stale, const char *slow, const char *release,
                 const char *directory, const char *ranged) {
    courier_cache *bad = NULL;
    int rc = courier_cache_create("/proc/courier/no", -1, 0, &bad);
    if (rc != COURIER_E_FILE_WRITE || bad != NULL) return fail("a cache in an impossible directory", rc);
    if (courier_cache_stat(NULL, COURIER_CACHE_STAT_HITS, NULL) != COURIER_E_MISUSE) return fail("stat of NULL", 0);
    if (courier_engine_set_cache(NULL, NULL) != COURIER_E_MISUSE) return fail("set_cache on NULL", 0);
    courier_cache_destroy(NULL);

    courier_cache *c = NULL;
    rc = courier_cache_create(directory, 1 << 20, 1 << 24, &c);
    if (rc != COURIER_OK) return fail("cache_create", rc);
    int64_t unknown = 0;
    if (courier_cache_stat(c, 999, &unknown) != COURIER_E_INVALID_ARGUMENT) return fail("an unknown statistic", 0);
    courier_engine *engine = NULL;
    rc = courier_engine_create(base, &engine);
    if (rc != COURIER_OK) return fail("engine_create", rc);
    courier_engine_set_accepted_status(engine, 0, 1000);
    if (courier_engine_set_cache(engine, c) != COURIER_OK) return fail("engine_set_cache", 0);
    /* The engine keeps the cache alive after the handle goes; stats need the handle, so keep it. */

    int status = 0;
    int first = perform_phase(engine, fresh, -1, NULL, &status);
    int second = perform_phase(engine, fresh, -1, NULL, &status);
    printf("fresh %d then %d\n", first, second);
    if (first != COURIER_PHASE_FRESH || second != COURIER_PHASE_CACHED) return fail("a fresh response from memory", first * 10 + second);

    int generated = perform_phase(engine, "/res/never-configured", -1, "only-if-cached", &status);
    printf("only-if-cached %d status %d\n", generated, status);
    if (generated != COURIER_PHASE_GENERATED || status != 504) return fail("a generated 504", generated);

    courier_cache_flush(c);
    courier_cache_drop_memory(c);
    if (stat_of(c, COURIER_CACHE_STAT_MEMORY_ENTRIES) != 0) return fail("drop_memory", 0);
    int from_disk = perform_phase(engine, fresh, -1, NULL, &status);
    printf("after drop %d disk hits %lld\n", from_disk, (long long)stat_of(c, COURIER_CACHE_STAT_DISK_HITS));
    if (from_disk != COURIER_PHASE_CACHED || stat_of(c, COURIER_CACHE_STAT_DISK_HITS) != 1) return fail("a disk hit", from_disk);

    /* cached-then-fresh on a stale response: two callbacks, the preview first. */
    perform_phase(engine, stale, -1, NULL, &status);
    struct deliveries d = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, {0}, {0}};
    courier_request *request = NULL;
    courier_request_create(engine, "GET", stale, &request);
    courier_request_set_cache_policy(request, COURIER_CACHE_THEN_FRESH);
    rc = courier_request_send(request, on_delivery, &d);
    if (rc != COURIER_OK) return fail("send", rc);
    int seen = wait_deliveries(&d, 2);
    printf("then-fresh %d deliveries: %d/%d, %d/%d\n", seen, d.phases[0], d.previews[0], d.phases[1], d.previews[1]);
    if (seen != 2 || d.phases[0] != COURIER_PHASE_CACHED_STALE || d.previews[0] != 1 || d.previews[1] != 0
        || d.phases[1] != COURIER_PHASE_NOT_MODIFIED || d.codes[0] != COURIER_OK || d.codes[1] != COURIER_OK) {
        return fail("cached-then-fresh", seen);
    }
    courier_request_free(request);
    /* MKNetworkKit's cached-then-network on a fresh response: the stored copy, and the network
     * asked all the same. */
    struct deliveries n = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, {0}, {0}};
    courier_request_create(engine, "GET", fresh, &request);
    courier_request_set_cache_policy(request, COURIER_CACHE_THEN_NETWORK);
    rc = courier_request_send(request, on_delivery, &n);
    if (rc != COURIER_OK) return fail("send", rc);
    seen = wait_deliveries(&n, 2);
    printf("then-network %d deliveries: %d/%d, %d/%d\n", seen, n.phases[0], n.previews[0], n.phases[1], n.previews[1]);
    if (seen != 2 || n.phases[0] != COURIER_PHASE_CACHED || n.previews[0] != 1 || n.previews[1] != 0
        || (n.phases[1] != COURIER_PHASE_FRESH && n.phases[1] != COURIER_PHASE_NOT_MODIFIED) || n.codes[1] != COURIER_OK) {
        return fail("cached-then-network", seen);
    }
    courier_request_free(request);
    if (courier_request_create(engine, "GET", stale, &request) != COURIER_OK) return 1;
    if (courier_request_set_cache_policy(request, 42) != COURIER_E_INVALID_ARGUMENT) return fail("a bad policy", 0);
    if (courier_request_set_coalescing(request, 7) != COURIER_E_INVALID_ARGUMENT) return fail("a bad coalescing mode", 0);
    courier_request_free(request);

    /* Twenty identical GETs of a held resource at once: one network request (the test counts).
     * The server holds its answer until `release` is posted, which happens only after all twenty
     * were sent (the loop takes jobs in order), so no machine is too slow for them to meet. */
    struct deliveries crowd = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, {0}, {0}};
    courier_request *requests[20];
    for (int i = 0; i < 20; i++) {
        courier_request_create(engine, "GET", slow, &requests[i]);
        courier_request_send(requests[i], on_delivery, &crowd);
    }
    courier_request *opener = NULL;
    courier_response *opened = NULL;
    courier_request_create(engine, "POST", release, &opener);
    rc = courier_request_perform(opener, &opened);
    if (rc != COURIER_OK) return fail("releasing the held resource", rc);
    courier_response_free(opened);
    courier_request_free(opener);
    if (wait_deliveries(&crowd, 20) != 20) return fail("coalesced requests", crowd.count);
    for (int i = 0; i < 20; i++) courier_request_free(requests[i]);
    printf("hits %lld misses %lld revalidations %lld not-modified %lld\n", (long long)stat_of(c, COURIER_CACHE_STAT_HITS),
           (long long)stat_of(c, COURIER_CACHE_STAT_MISSES), (long long)stat_of(c, COURIER_CACHE_STAT_REVALIDATIONS),
           (long long)stat_of(c, COURIER_CACHE_STAT_NOT_MODIFIED));
    if (ranged && ranges(engine, ranged) != 0) return 1;
    courier_engine_destroy(engine);
    courier_cache_destroy(c);
    courier_shutdown();
    return 0;
}

/* Open descriptors of this process (/proc/self/fd, minus the one reading it). */
static int count_descriptors(void) {
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return -1;
    int count = 0;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(dir);
    return count - 1;
}

/* The highest descriptor open now (not counting the directory read to find it). */
static int highest_descriptor(void) {
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return -1;
    int own = dirfd(dir), highest = -1;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
        int fd = entry->d_name[0] == '.' ? -1 : atoi(entry->d_name);
        if (fd != own && fd > highest) highest = fd;
    }
    closedir(dir);
    return highest;
}

/* Leaves exactly `spare` descriptors to open: every free number below the highest open one is
 * taken (by /dev/null, kept in `fillers`), and the limit is set just above. Counting open
 * descriptors instead left the gaps between them free too: how many depended on what had been
 * opened and closed before (a loaded run had enough for all sixteen). */
static int fillers[4096];
static int filler_count = 0;
static int leave_spare(int spare) {
    int highest = highest_descriptor();
    if (highest < 0) return -1;
    for (int fd; filler_count < (int)(sizeof fillers / sizeof fillers[0]) && (fd = open("/dev/null", O_RDONLY)) >= 0;) {
        if (fd > highest) {
            close(fd);
            break;
        }
        fillers[filler_count++] = fd;
    }
    struct rlimit tight;
    getrlimit(RLIMIT_NOFILE, &tight);
    tight.rlim_cur = (rlim_t)highest + 1 + (rlim_t)spare;
    return setrlimit(RLIMIT_NOFILE, &tight);
}

static void close_fillers(void) {
    while (filler_count > 0) close(fillers[--filler_count]);
}

struct fault_tally {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    const uint8_t *expected;
    size_t expected_length;
    int done, ok, failed, wrong, unexpected;
    int last_unexpected;
    int allowed;  /* burst: the one failure code (family) expected */
};

/* The failures a relay that resets, stalls or cuts a response may cause: each specific. */
static int is_fault_code(int code) {
    switch (code) {
    case COURIER_E_CONNECTION_RESET: case COURIER_E_EMPTY_REPLY: case COURIER_E_TRUNCATED_BODY:
    case COURIER_E_TIMEOUT_FIRST_BYTE: case COURIER_E_TIMEOUT_IDLE: case COURIER_E_TIMEOUT_TOTAL:
    case COURIER_E_TIMEOUT_SEND:
        return 1;
    default:
        return 0;
    }
}

static void on_fault_done(courier_request *request, courier_response *response, int code, void *user) {
    struct fault_tally *t = user;
    size_t length = 0;
    const uint8_t *body = code == COURIER_OK ? courier_response_body(response, &length) : NULL;
    pthread_mutex_lock(&t->lock);
    if (code == COURIER_OK) {
        /* A success is the whole body, byte for byte: never a truncated "success". */
        if (length == t->expected_length && memcmp(body, t->expected, length) == 0) t->ok++; else t->wrong++;
    } else if (is_fault_code(code)) {
        t->failed++;
    } else {
        t->unexpected++;
        t->last_unexpected = code;
    }
    t->done++;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->lock);
    courier_response_free(response);
    courier_request_free(request);
}

static void on_burst_done(courier_request *request, courier_response *response, int code, void *user) {
    struct fault_tally *t = user;
    pthread_mutex_lock(&t->lock);
    if (code == COURIER_OK) {
        t->ok++;
    } else {
        t->failed++;
        if ((code & 0xff) != t->allowed) {
            t->unexpected++;
            t->last_unexpected = code;
        }
    }
    t->done++;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->lock);
    courier_response_free(response);
    courier_request_free(request);
}

/* N requests through a fault-injecting proxy (Tests/Servers/fault_proxy.py), 16 at a time: each
 * ends with the exact body or a specific error within its deadlines; afterwards nothing is left
 * running or queued, and once the library shuts down no descriptor is left open. `strict`: the
 * relay only slows or fragments, so every request must succeed. */
static int faults(const char *base, const char *path, const char *expected_file, int n, int strict) {
    FILE *file = fopen(expected_file, "rb");
    if (!file) return fail("open the expected body", 0);
    static uint8_t expected[1 << 20];
    size_t expected_length = fread(expected, 1, sizeof expected, file);
    fclose(file);
    /* libuv keeps one pipe for the whole process from its first loop on: start and stop the
     * library once before taking the baseline, so only what the requests leave is counted. */
    courier_request *warm = NULL;
    courier_response *warmed = NULL;
    courier_request_create(NULL, "GET", "http://127.0.0.1:1/", &warm);
    courier_request_perform(warm, &warmed);
    courier_response_free(warmed);
    courier_request_free(warm);
    courier_shutdown();
    int descriptors_before = count_descriptors();
    courier_queue_set_width(16);
    courier_engine *engine = NULL;
    int rc = courier_engine_create(base, &engine);
    if (rc != COURIER_OK) return fail("engine_create", rc);
    struct fault_tally t = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER,
                            .expected = expected, .expected_length = expected_length};
    for (int i = 0; i < n; i++) {
        courier_request *request = NULL;
        if ((rc = courier_request_create(engine, "GET", path, &request)) != COURIER_OK) return fail("request_create", rc);
        courier_request_set_timeout(request, COURIER_TIMEOUT_FIRST_BYTE, 2000);
        courier_request_set_timeout(request, COURIER_TIMEOUT_IDLE, 500);
        courier_request_set_timeout(request, COURIER_TIMEOUT_TOTAL, 10000);
        if ((rc = courier_request_send(request, on_fault_done, &t)) != COURIER_OK) return fail("send", rc);
    }
    int done = wait_count(&t.lock, &t.changed, &t.done, n, 120);
    printf("faults: %d done, %d whole, %d failed with a fault's error, %d wrong bodies, %d unexpected (last %d)\n",
           done, t.ok, t.failed, t.wrong, t.unexpected, t.last_unexpected);
    if (done != n) return fail("requests that never ended", n - done);
    if (t.wrong != 0) return fail("a success with the wrong body", t.wrong);
    if (t.unexpected != 0) return fail("an error a fault cannot explain", t.last_unexpected);
    if (strict && t.ok != n) return fail("a relay that only slows must not fail a request", t.failed);
    int running = -1, queued = -1;
    courier_queue_activity(&running, &queued);
    if (running != 0 || queued != 0) return fail("operations left in the queue", running * 1000 + queued);
    courier_engine_destroy(engine);
    courier_shutdown();
    int descriptors_after = count_descriptors();
    printf("faults: descriptors %d before, %d after shutdown\n", descriptors_before, descriptors_after);
    if (descriptors_after != descriptors_before) {
        char command[64];
        snprintf(command, sizeof command, "ls -l /proc/%d/fd >&2", (int)getpid());
        if (system(command) != 0) fprintf(stderr, "scenarios: could not list descriptors\n");
        return fail("descriptors leaked", descriptors_after - descriptors_before);
    }
    return 0;
}

/* Runs `count` GETs of `url` at once; how many succeeded, and the failures' codes (all must be
 * `allowed` or the run fails). Waits at most 30 s. */
static int burst(courier_engine *engine, const char *url, int count, int allowed, int *failed) {
    struct fault_tally t = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER, .allowed = allowed};
    for (int i = 0; i < count; i++) {
        courier_request *request = NULL;
        if (courier_request_create(engine, "GET", url, &request) != COURIER_OK) return -1;
        courier_request_send(request, on_burst_done, &t);
    }
    if (wait_count(&t.lock, &t.changed, &t.done, count, 30) != count) return -2;
    printf("burst: %d ok, %d failed (%d with another code than %d, last %d)\n", t.ok, t.failed, t.unexpected, allowed,
           t.last_unexpected);
    if (t.unexpected > 0) return -3;
    *failed = t.failed;
    return t.ok;
}

/* Descriptors run out (RLIMIT_NOFILE just above what is open): of sixteen requests at once some
 * fail with a connect error naming the cause, none hangs; with the limit restored all sixteen of
 * the next burst succeed, and nothing is left in the queue. */
static int descriptors(const char *url) {
    courier_queue_set_width(16);
    courier_queue_set_host_limit("127.0.0.1", 16);
    courier_engine *engine = NULL;
    int rc = courier_engine_create(NULL, &engine);
    if (rc != COURIER_OK) return fail("engine_create", rc);
    int failed = 0;
    if (burst(engine, url, 1, COURIER_OK, &failed) != 1) return fail("the first request", 0);
    struct rlimit old;
    getrlimit(RLIMIT_NOFILE, &old);
    if (leave_spare(3) != 0) return fail("setrlimit", 0);
    int ok = burst(engine, url, 16, COURIER_E_CONNECT, &failed);
    setrlimit(RLIMIT_NOFILE, &old);
    close_fillers();
    if (ok < 0) return fail("a burst with too few descriptors did not end as it should", ok);
    /* One request may reuse the kept-alive connection and three get descriptors (at most four run
     * at once, each held a second by the server): the others fail. */
    if (failed == 0) return fail("sixteen connections with three descriptors to spare all succeeded", ok);
    ok = burst(engine, url, 16, COURIER_OK, &failed);
    if (ok != 16) return fail("service did not recover when descriptors returned", ok);
    int running = -1, queued = -1;
    courier_queue_activity(&running, &queued);
    if (running != 0 || queued != 0) return fail("operations left in the queue", running * 1000 + queued);
    courier_engine_destroy(engine);
    courier_shutdown();
    return 0;
}

/* GET BASE+path: the code, and the body's length and first bytes in `start`. */
static int fetch(const char *base, const char *path, int decompress, size_t *length, char *start, size_t capacity) {
    char url[512];
    snprintf(url, sizeof url, "%s%s", base, path);
    courier_request *request = NULL;
    int code = courier_request_create(NULL, "GET", url, &request);
    if (code != COURIER_OK) return code;
    if (!decompress) courier_request_set_decompress(request, 0);
    courier_response *response = NULL;
    code = courier_request_perform(request, &response);
    *length = 0;
    if (response) {
        const uint8_t *body = courier_response_body(response, length);
        snprintf(start, capacity, "%.*s", (int)(*length < capacity - 1 ? *length : capacity - 1), body ? (const char *)body : "");
    }
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

static int codings(const char *base) {
    size_t length = 0;
    char start[16];
    int code;
    if ((code = fetch(base, "/br", 1, &length, start, sizeof start)) != COURIER_OK) return fail("br", code);
    if (length != 10000 || strncmp(start, "hello, compr", 12) != 0) return fail("br body", COURIER_E_CORRUPT_ENCODING);
    if ((code = fetch(base, "/zstd", 1, &length, start, sizeof start)) != COURIER_OK) return fail("zstd", code);
    if (length != 10000 || strncmp(start, "hello, compr", 12) != 0) return fail("zstd body", COURIER_E_CORRUPT_ENCODING);
    code = fetch(base, "/unknown-coding", 1, &length, start, sizeof start);
    if (code != COURIER_E_UNSUPPORTED_ENCODING) return fail("an unknown coding", code);
    if (strstr(courier_strerror(code), "unsupported") == NULL) return fail("its message", code);
    if ((code = fetch(base, "/br", 0, &length, start, sizeof start)) != COURIER_OK || length >= 10000) return fail("decoding off", code);
    printf("codings: br and zstd decoded, an unknown coding refused, decoding off leaves %zu bytes\n", length);
    return 0;
}

/* A GET to `url` with one route option; the code, and whether the body names `host`. */
static int routed(const char *url, int (*option)(courier_request *, const char *), const char *entry, int family, const char *host) {
    courier_request *request = NULL;
    int code = courier_request_create(NULL, "GET", url, &request);
    if (code != COURIER_OK) return code;
    if (option && (code = option(request, entry)) != COURIER_OK) {
        courier_request_free(request);
        return code;
    }
    if (family >= 0 && (code = courier_request_set_ip_family(request, family)) != COURIER_OK) {
        courier_request_free(request);
        return code;
    }
    courier_response *response = NULL;
    code = courier_request_perform(request, &response);
    if (code == COURIER_OK && host) {
        size_t length = 0;
        const uint8_t *body = courier_response_body(response, &length);
        char text[4096];
        snprintf(text, sizeof text, "%.*s", (int)(length < sizeof text - 1 ? length : sizeof text - 1), (const char *)body);
        if (strstr(text, host) == NULL) code = COURIER_E_MALFORMED_RESPONSE;
    }
    courier_response_free(response);
    courier_request_free(request);
    return code;
}

static int routes(const char *port) {
    char url[256], entry[256], host[128];
    int code;
    snprintf(url, sizeof url, "http://route.test:%s/echo", port);
    snprintf(entry, sizeof entry, "route.test:%s:127.0.0.1", port);
    snprintf(host, sizeof host, "\"route.test:%s\"", port);
    if ((code = routed(url, courier_request_add_resolve, entry, -1, host)) != COURIER_OK) return fail("resolve", code);
    snprintf(entry, sizeof entry, "elsewhere.test:80:127.0.0.1:%s", port);
    if ((code = routed("http://elsewhere.test/echo", courier_request_add_connect_to, entry, -1, "\"elsewhere.test\"")) != COURIER_OK)
        return fail("connect-to", code);
    snprintf(url, sizeof url, "http://127.0.0.1:%s/echo", port);
    if ((code = routed(url, NULL, NULL, COURIER_IP_V6, NULL)) != COURIER_E_CONNECT) return fail("IPv6 only to an IPv4 address", code);
    if ((code = routed(url, NULL, NULL, COURIER_IP_V4, NULL)) != COURIER_OK) return fail("IPv4", code);
    if ((code = routed(url, courier_request_add_resolve, "no-port", -1, NULL)) != COURIER_E_INVALID_ARGUMENT) return fail("a bad resolve entry", code);
    if ((code = routed(url, courier_request_add_connect_to, "a:b", -1, NULL)) != COURIER_E_INVALID_ARGUMENT) return fail("a bad connect-to entry", code);
    if ((code = routed(url, courier_request_add_resolve, NULL, -1, NULL)) != COURIER_E_INVALID_ARGUMENT) return fail("NULL", code);
    if ((code = routed(url, NULL, NULL, 7, NULL)) != COURIER_E_INVALID_ARGUMENT) return fail("a bad family", code);
    if (courier_request_add_resolve(NULL, "x:1:127.0.0.1") != COURIER_E_MISUSE) return fail("NULL request", COURIER_E_MISUSE);
    printf("routes: resolve, connect-to and address families as request options\n");
    return 0;
}

/* Completions of the width scenario, counted under a lock; main waits for all ten. */
struct width_run {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int finished, failed;
};

static void width_done(courier_request *request, courier_response *response, int code, void *user) {
    struct width_run *run = user;
    pthread_mutex_lock(&run->lock);
    run->finished++;
    if (code != COURIER_OK || courier_response_status(response) != 200) run->failed++;
    pthread_cond_signal(&run->changed);
    pthread_mutex_unlock(&run->lock);
    courier_response_free(response);
    courier_request_free(request);
}

/* The queue is the process's, not an engine's: with width 2, ten slow requests sent at once from
 * two engines reach the server two at a time (the test reads the server's peak for the URL's
 * group). A process of its own, because narrowing the width would hold up every other request
 * of the process. */
static int width(const char *slow_url) {
    int rc = courier_queue_set_width(2);
    if (rc != COURIER_OK || courier_queue_width() != 2) return fail("set the width", rc);
    courier_engine *engines[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        rc = courier_engine_create(NULL, &engines[i]);
        if (rc != COURIER_OK) return fail("engine", rc);
    }
    struct width_run run = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    for (int i = 0; i < 10; i++) {
        courier_request *request = NULL;
        rc = courier_request_create(engines[i % 2], "GET", slow_url, &request);
        if (rc != COURIER_OK) return fail("create", rc);
        rc = courier_request_send(request, width_done, &run);
        if (rc != COURIER_OK) return fail("send", rc);
    }
    pthread_mutex_lock(&run.lock);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 60;
    while (run.finished < 10) {
        if (pthread_cond_timedwait(&run.changed, &run.lock, &deadline) != 0) break;
    }
    int finished = run.finished, failed = run.failed;
    pthread_mutex_unlock(&run.lock);
    printf("finished %d failed %d\n", finished, failed);
    if (finished != 10 || failed != 0) return fail("ten requests through width 2", COURIER_OK);
    for (int i = 0; i < 2; i++) courier_engine_destroy(engines[i]);
    courier_shutdown();
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "routes") == 0) return routes(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "width") == 0) return width(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "codings") == 0) return codings(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "loopfail") == 0) return loopfail(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "cancel") == 0) return cancel(argv[2]);
    if (argc >= 5 && strcmp(argv[1], "download") == 0) return download(argv[2], argv[3], argv[4]);
    if (argc >= 7 && strcmp(argv[1], "tls") == 0) return tls(argv[2], argv[3], argv[4], argv[5], argv[6]);
    if (argc >= 8 && strcmp(argv[1], "cache") == 0) return cache(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7], argc >= 9 ? argv[8] : NULL);
    if (argc >= 3 && strcmp(argv[1], "descriptors") == 0) return descriptors(argv[2]);
    if (argc >= 7 && strcmp(argv[1], "faults") == 0) return faults(argv[2], argv[3], argv[4], atoi(argv[5]), strcmp(argv[6], "strict") == 0);
    fprintf(stderr, "usage: scenarios loopfail|cancel|download|tls|cache|faults ...\n");
    return 2;
}
