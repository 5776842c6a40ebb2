#include <nghttp2/nghttp2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * A session's allocator: blocks of up to 4 KiB that nghttp2 frees are kept on a list per size
 * class and handed out again. A stream's life allocates and frees about seventeen small blocks
 * (its state, HPACK buffers, each header's reference-counted name and value); with a hundred
 * streams in flight glibc's per-thread cache overflows and most of them took its slow path:
 * about 3,000 instructions a request, where h2load's jemalloc spends under 1,000. A session is
 * used on one thread only (the loop's), so the lists need no lock; each class keeps at most
 * COURIER_H2_KEPT_BYTES of free blocks (at most 512 KiB a session in all, a few KiB in
 * practice), and everything goes back to the system when the session is deleted.
 */
#define COURIER_H2_CLASSES 8     /* 32, 64, ..., 4096 bytes */
#define COURIER_H2_KEPT_BYTES (64 << 10)  /* free bytes kept per class */
#define COURIER_H2_HEADER 16     /* each block's capacity, before the pointer handed out */

typedef struct courier_h2_pool {
    nghttp2_mem mem;
    void *lists[COURIER_H2_CLASSES];
    unsigned kept[COURIER_H2_CLASSES];
} courier_h2_pool;

static inline size_t courier_h2_capacity(const void *pointer) {
    return *(const size_t *)((const char *)pointer - COURIER_H2_HEADER);
}

/* The class of a pooled capacity, or COURIER_H2_CLASSES for a block too large to pool. */
static inline int courier_h2_class(size_t size) {
    if (size <= 32) return 0;
    int index = 64 - __builtin_clzll((unsigned long long)(size - 1)) - 5;  /* ceil(log2(size)) - 5 */
    return index < COURIER_H2_CLASSES ? index : COURIER_H2_CLASSES;
}

static inline void *courier_h2_malloc(size_t size, void *user) {
    courier_h2_pool *pool = (courier_h2_pool *)user;
    int index = courier_h2_class(size);
    if (index < COURIER_H2_CLASSES && pool->lists[index] != NULL) {
        void *pointer = pool->lists[index];
        pool->lists[index] = *(void **)pointer;
        pool->kept[index] -= 1;
        return pointer;
    }
    size_t capacity = index < COURIER_H2_CLASSES ? (size_t)32 << index : size;
    if (capacity > SIZE_MAX - COURIER_H2_HEADER) return NULL;
    char *block = (char *)malloc(COURIER_H2_HEADER + capacity);
    if (block == NULL) return NULL;
    *(size_t *)block = capacity;
    return block + COURIER_H2_HEADER;
}

static inline void courier_h2_free(void *pointer, void *user) {
    if (pointer == NULL) return;
    courier_h2_pool *pool = (courier_h2_pool *)user;
    size_t capacity = courier_h2_capacity(pointer);
    int index = courier_h2_class(capacity);  /* (a pooled block's capacity is its class's size) */
    if (index < COURIER_H2_CLASSES && ((size_t)pool->kept[index] + 1) * capacity <= COURIER_H2_KEPT_BYTES) {
        *(void **)pointer = pool->lists[index];
        pool->lists[index] = pointer;
        pool->kept[index] += 1;
        return;
    }
    free((char *)pointer - COURIER_H2_HEADER);
}

static inline void *courier_h2_calloc(size_t count, size_t size, void *user) {
    if (size != 0 && count > SIZE_MAX / size) return NULL;
    void *pointer = courier_h2_malloc(count * size, user);
    if (pointer != NULL) memset(pointer, 0, count * size);
    return pointer;
}

static inline void *courier_h2_realloc(void *pointer, size_t size, void *user) {
    if (pointer == NULL) return courier_h2_malloc(size, user);
    if (size == 0) {
        courier_h2_free(pointer, user);
        return NULL;
    }
    size_t capacity = courier_h2_capacity(pointer);
    if (size <= capacity) return pointer;
    void *grown = courier_h2_malloc(size, user);
    if (grown == NULL) return NULL;
    memcpy(grown, pointer, capacity);
    courier_h2_free(pointer, user);
    return grown;
}

/* A pool for one session (pass &pool->mem to nghttp2_session_client_new3); NULL without memory. */
static inline courier_h2_pool *courier_h2_pool_new(void) {
    courier_h2_pool *pool = (courier_h2_pool *)calloc(1, sizeof(courier_h2_pool));
    if (pool == NULL) return NULL;
    pool->mem.mem_user_data = pool;
    pool->mem.malloc = courier_h2_malloc;
    pool->mem.free = courier_h2_free;
    pool->mem.calloc = courier_h2_calloc;
    pool->mem.realloc = courier_h2_realloc;
    return pool;
}

/* After nghttp2_session_del: the kept blocks and the pool itself. */
static inline void courier_h2_pool_free(courier_h2_pool *pool) {
    if (pool == NULL) return;
    for (int index = 0; index < COURIER_H2_CLASSES; index++) {
        void *pointer = pool->lists[index];
        while (pointer != NULL) {
            void *next = *(void **)pointer;
            free((char *)pointer - COURIER_H2_HEADER);
            pointer = next;
        }
    }
    free(pool);
}
