/*
 * LD_PRELOAD=./alloc_counter.so PROGRAM ...   prints "alloc_counter: N allocations" at exit.
 *
 * Counts every malloc, calloc, realloc, memalign-family and aligned_alloc call the process makes
 * (Swift's runtime allocates through malloc). Run a client for N and for 2N requests: the
 * difference divided by N is the allocations per request, with start-up cancelled out.
 * Build: cc -O2 -shared -fPIC alloc_counter.c -o alloc_counter.so
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_long count;

void *malloc(size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    void *p = __libc_memalign(a, n);
    if (!p) return 12;
    *out = p;
    return 0;
}

__attribute__((destructor)) static void report(void) {
    char line[64];
    int len = snprintf(line, sizeof line, "alloc_counter: %ld allocations\n", atomic_load(&count));
    if (len > 0) (void)!write(2, line, (size_t)len);
}
