#include <uv.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/eventfd.h>

/* Names the calling thread (shows in top, gdb, perf). A function because prctl is variadic. */
static inline void courier_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }
