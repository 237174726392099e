/* pl_error.h — error codes, the PL_CALL family of macros, and logging.
 *
 * Every function that can fail returns an int error code (PL_OK = 0) and
 * delivers results through pointer arguments (PETSc PetscCall style).  On
 * failure the first caller records a message with PL_CHECK/pl_error_set, and
 * each PL_CALL on the way up appends "file:line function" so that the
 * failure prints as a traceback.
 *
 * Exit codes of the application: PL_ERR_INPUT (bad user input: config,
 * matrix file, output path) -> exit status 2, anything else -> 1.
 */
#ifndef PL_ERROR_H
#define PL_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

enum pl_err {
    PL_OK = 0,
    PL_ERR_INPUT,    /* bad user input (config, matrix file, path): exit 2 */
    PL_ERR_ARG,      /* bad argument from a caller (a programming error)   */
    PL_ERR_IO,       /* file system error                                  */
    PL_ERR_HDF5,
    PL_ERR_MPI,
    PL_ERR_CUDA,
    PL_ERR_MEM,      /* out of host or device memory                       */
    PL_ERR_OVERFLOW, /* a size does not fit its integer type               */
    PL_ERR_LAPACK,
    PL_ERR_NOTSUP,   /* feature not built in / not supported               */
    PL_ERR_INTERNAL
};

/* Record the primary error message (printf-style).  Returns code.
 * A later call overwrites an earlier message only if the earlier one was
 * already reported.  This function can't fail. */
int pl_error_set(int code, const char *file, int line, const char *func,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Append one traceback frame.  Returns code.  Can't fail. */
int pl_error_trace(int code, const char *file, int line, const char *func,
                   const char *call);
/* Print the recorded message (one line, "pjds-lanczos: error: ...") and, for
 * errors other than PL_ERR_INPUT, the traceback, on stderr; then clear it. */
void pl_error_report(void);
/* The same with "[rank N] " before the message (rank < 0: none). */
void pl_error_report_rank(int rank);
/* The recorded primary message ("" if none).  Can't fail. */
const char *pl_error_message(void);
void pl_error_clear(void);
/* Exit status for an error code: 0 for PL_OK, 2 for PL_ERR_INPUT, else 1. */
int pl_error_exit_status(int code);
const char *pl_error_name(int code);

#define PL_CALL(e)                                                            \
    do {                                                                      \
        int pl_e_ = (e);                                                      \
        if (pl_e_ != PL_OK)                                                   \
            return pl_error_trace(pl_e_, __FILE__, __LINE__, __func__, #e);   \
    } while (0)

/* Call; on failure store the code in r and jump to label (to free memory). */
#define PL_CALL_GOTO(e, label, r)                                             \
    do {                                                                      \
        int pl_e_ = (e);                                                      \
        if (pl_e_ != PL_OK) {                                                 \
            (r) = pl_error_trace(pl_e_, __FILE__, __LINE__, __func__, #e);    \
            goto label;                                                       \
        }                                                                     \
    } while (0)

/* If cond is false: record the message and return code. */
#define PL_CHECK(cond, code, ...)                                             \
    do {                                                                      \
        if (!(cond))                                                          \
            return pl_error_set((code), __FILE__, __LINE__, __func__,         \
                                __VA_ARGS__);                                 \
    } while (0)

#define PL_CHECK_GOTO(cond, code, label, r, ...)                              \
    do {                                                                      \
        if (!(cond)) {                                                        \
            (r) = pl_error_set((code), __FILE__, __LINE__, __func__,          \
                               __VA_ARGS__);                                  \
            goto label;                                                       \
        }                                                                     \
    } while (0)

#define PL_ERROR(code, ...) pl_error_set((code), __FILE__, __LINE__, __func__, __VA_ARGS__)

/* Allocation with a checked byte count. */
#define PL_MALLOC(p, n)                                                       \
    do {                                                                      \
        size_t pl_n_ = 0;                                                     \
        if (pl_mul_size((size_t)(n), sizeof(*(p)), &pl_n_))                   \
            return pl_error_set(PL_ERR_OVERFLOW, __FILE__, __LINE__, __func__,\
                                "allocation size overflows");                 \
        (p) = malloc(pl_n_ ? pl_n_ : 1);                                      \
        if (!(p))                                                             \
            return pl_error_set(PL_ERR_MEM, __FILE__, __LINE__, __func__,     \
                                "out of host memory (%zu bytes)", pl_n_);     \
    } while (0)

/* Checked 64-bit arithmetic: return nonzero on overflow. */
static inline int pl_mul_size(size_t a, size_t b, size_t *r) { return __builtin_mul_overflow(a, b, r); }
static inline int pl_mul_i64(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }
static inline int pl_add_i64(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }

/* ---- logging --------------------------------------------------------- */
enum pl_log_level { PL_LOG_QUIET = 0, PL_LOG_INFO = 1, PL_LOG_DEBUG = 2 };
/* Set by the app: this process's MPI rank and the verbosity. */
void pl_log_init(int rank, int level);
int pl_log_rank(void);
int pl_log_level(void);
/* Messages on stderr from rank 0 only, prefixed "pjds-lanczos: ". */
void pl_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pl_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Warnings print even under --quiet (rank 0). */
void pl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Wall clock in seconds (monotonic). */
double pl_wtime(void);
/* Median of t[0, n) (sorts t in place; 0 for n <= 0). */
double pl_median(double *t, int64_t n);

#endif
