/* pl_error.c — the error record and traceback behind PL_CALL, and logging. */
#define _POSIX_C_SOURCE 200809L
#include "pl_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PL_MSG_LEN 1024
#define PL_TRACE_LEN 4096

static _Thread_local char g_msg[PL_MSG_LEN];
static _Thread_local char g_trace[PL_TRACE_LEN];
static _Thread_local int g_code;
static int g_rank = 0;
static int g_level = PL_LOG_INFO;

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int pl_error_set(int code, const char *file, int line, const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_msg, sizeof g_msg, fmt, ap);
    va_end(ap);
    g_code = code;
    snprintf(g_trace, sizeof g_trace, "  %s:%d %s\n", base_name(file), line, func);
    return code;
}

int pl_error_trace(int code, const char *file, int line, const char *func, const char *call)
{
    size_t len = strlen(g_trace);
    if (!g_msg[0]) {
        snprintf(g_msg, sizeof g_msg, "%s failed (%s)", call, pl_error_name(code));
        g_code = code;
    }
    if (len < sizeof g_trace - 1)
        snprintf(g_trace + len, sizeof g_trace - len, "  %s:%d %s: %s\n", base_name(file), line, func, call);
    return code;
}

void pl_error_report(void) { pl_error_report_rank(-1); }

void pl_error_report_rank(int rank)
{
    if (!g_msg[0]) return;
    /* one fprintf per line: lines of several ranks do not interleave */
    if (rank >= 0)
        fprintf(stderr, "pjds-lanczos: error: [rank %d] %s\n", rank, g_msg);
    else
        fprintf(stderr, "pjds-lanczos: error: %s\n", g_msg);
    if (g_code != PL_ERR_INPUT && g_trace[0]) fprintf(stderr, "traceback (%s):\n%s", pl_error_name(g_code), g_trace);
    fflush(stderr);
    pl_error_clear();
}

const char *pl_error_message(void) { return g_msg; }

void pl_error_clear(void)
{
    g_msg[0] = 0;
    g_trace[0] = 0;
    g_code = 0;
}

int pl_error_exit_status(int code) { return code == PL_OK ? 0 : code == PL_ERR_INPUT ? 2 : 1; }

const char *pl_error_name(int code)
{
    switch (code) {
    case PL_OK: return "ok";
    case PL_ERR_INPUT: return "bad input";
    case PL_ERR_ARG: return "bad argument";
    case PL_ERR_IO: return "I/O error";
    case PL_ERR_HDF5: return "HDF5 error";
    case PL_ERR_MPI: return "MPI error";
    case PL_ERR_CUDA: return "CUDA error";
    case PL_ERR_MEM: return "out of memory";
    case PL_ERR_OVERFLOW: return "size overflow";
    case PL_ERR_LAPACK: return "LAPACK error";
    case PL_ERR_NOTSUP: return "not supported";
    default: return "internal error";
    }
}

void pl_log_init(int rank, int level)
{
    g_rank = rank;
    g_level = level;
}
int pl_log_rank(void) { return g_rank; }
int pl_log_level(void) { return g_level; }

static void vlog(const char *tag, const char *fmt, va_list ap)
{
    char buf[2048];
    vsnprintf(buf, sizeof buf, fmt, ap);
    fprintf(stderr, "pjds-lanczos: %s%s\n", tag, buf);
}

void pl_info(const char *fmt, ...)
{
    if (g_rank != 0 || g_level < PL_LOG_INFO) return;
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

void pl_debug(const char *fmt, ...)
{
    if (g_rank != 0 || g_level < PL_LOG_DEBUG) return;
    va_list ap;
    va_start(ap, fmt);
    vlog("debug: ", fmt, ap);
    va_end(ap);
}

void pl_warn(const char *fmt, ...)
{
    if (g_rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    vlog("warning: ", fmt, ap);
    va_end(ap);
}

double pl_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pl_median(double *t, int64_t n)
{
    if (n <= 0) return 0.0;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}
