/* measure: runs a program and reports what it cost, for benchmarks/bulk.py.
 *
 *   measure [-i STDIN_FILE] [-c CPU] PROGRAM ARGS...
 *
 * Prints "wall_s cpu_s peak_rss_kib status" on stderr once the program exits; its stdout goes to
 * /dev/null. -c pins it (and every thread it starts) to one CPU.
 *
 * Why a C program: Linux gives an exec'd child the high-water mark of the memory it was forked
 * from (ru_maxrss survives exec), so a client started from Python is charged Python's own size.
 * Started from this small process, the figure is the client's. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

int main(int argc, char **argv) {
    const char *input = NULL;
    int cpu = -1;
    int first = 1;
    while (first + 1 < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-i") == 0) input = argv[first + 1];
        else if (strcmp(argv[first], "-c") == 0) cpu = atoi(argv[first + 1]);
        else break;
        first += 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: measure [-i STDIN_FILE] [-c CPU] PROGRAM ARGS...\n");
        return 2;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        if (cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        int out = open("/dev/null", O_WRONLY);
        dup2(out, 1);
        if (input) {
            int in = open(input, O_RDONLY);
            if (in < 0) {
                perror(input);
                _exit(127);
            }
            dup2(in, 0);
        }
        execvp(argv[first], argv + first);
        perror(argv[first]);
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) {
        perror("wait4");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double wall = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    fprintf(stderr, "%.6f %.6f %ld %d\n", wall, seconds(usage.ru_utime) + seconds(usage.ru_stime), usage.ru_maxrss,
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
