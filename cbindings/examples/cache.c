/*
 * cache: an engine with an HTTP cache on disk. Fetches PATH under BASE twice and prints where each
 * response came from (the second is a hit while the first is fresh, or a revalidation), then the
 * cache's statistics. Run it again: the disk tier answers across processes.
 *
 *   cc cache.c $(pkg-config --cflags --libs courier) -o cache && ./cache http://127.0.0.1:8080 /small /tmp/cache
 */
#include <courier.h>
#include <stdio.h>

static const char *phase_name(int phase) {
    switch (phase) {
    case COURIER_PHASE_FRESH: return "fresh";
    case COURIER_PHASE_CACHED: return "cached";
    case COURIER_PHASE_CACHED_STALE: return "cached (stale)";
    case COURIER_PHASE_NOT_MODIFIED: return "not modified";
    case COURIER_PHASE_STALE_ON_ERROR: return "stale on error";
    case COURIER_PHASE_GENERATED: return "generated";
    default: return "?";
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s BASE PATH DIRECTORY\n", argv[0]);
        return 2;
    }
    courier_cache *cache = NULL;
    int rc = courier_cache_create(argv[3], -1, 0, &cache);
    if (rc != COURIER_OK) {
        fprintf(stderr, "cache: %s (%d)\n", courier_strerror(rc), rc);
        return rc & 0xff;
    }
    courier_engine *engine = NULL;
    rc = courier_engine_create(argv[1], &engine);
    if (rc != COURIER_OK) {
        fprintf(stderr, "engine: %s (%d)\n", courier_strerror(rc), rc);
        courier_cache_destroy(cache);
        return rc & 0xff;
    }
    courier_engine_set_cache(engine, cache);
    for (int i = 0; i < 2 && rc == COURIER_OK; i++) {
        courier_request *request = NULL;
        rc = courier_request_create(engine, "GET", argv[2], &request);
        if (rc != COURIER_OK) break;
        courier_response *response = NULL;
        rc = courier_request_perform(request, &response);
        if (response) {
            printf("%d %s (%s), %lld bytes\n", courier_response_status(response), phase_name(courier_response_cache_phase(response)),
                   courier_response_cache_status(response), (long long)courier_response_body_size(response));
        } else {
            fprintf(stderr, "cache: %s\n", courier_request_errmsg(request));
        }
        courier_response_free(response);
        courier_request_free(request);
    }
    int64_t hits = 0, misses = 0, revalidations = 0;
    courier_cache_stat(cache, COURIER_CACHE_STAT_HITS, &hits);
    courier_cache_stat(cache, COURIER_CACHE_STAT_MISSES, &misses);
    courier_cache_stat(cache, COURIER_CACHE_STAT_REVALIDATIONS, &revalidations);
    printf("hits %lld misses %lld revalidations %lld\n", (long long)hits, (long long)misses, (long long)revalidations);
    courier_engine_destroy(engine);
    courier_cache_destroy(cache);
    courier_shutdown();
    return rc & 0xff;
}
