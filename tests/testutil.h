/* testutil.h — tiny assertion helpers for the C tests.  A failed check
 * prints file:line and the expression and makes the test exit 1; a test
 * that cannot run (no GPU, no data file) exits 77, which ctest reports as
 * skipped. */
#ifndef PL_TESTUTIL_H
#define PL_TESTUTIL_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

extern int tu_failures;

#define TU_CHECK(cond)                                                                  \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            tu_failures++;                                                              \
        }                                                                               \
    } while (0)
#define TU_CHECK_MSG(cond, ...)                                                         \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
            tu_failures++;                                                              \
        }                                                                               \
    } while (0)
/* |a - b| <= tol * max(1, |b|) */
#define TU_CLOSE(a, b, tol)                                                             \
    TU_CHECK_MSG(fabs((double)(a) - (double)(b)) <= (tol) * fmax(1.0, fabs((double)(b))), \
                 "%.17g vs %.17g (tol %g)", (double)(a), (double)(b), (double)(tol))
/* PL_OK or print the error and fail */
#define TU_OK(e)                                                                        \
    do {                                                                                \
        int tu_e_ = (e);                                                                \
        if (tu_e_) {                                                                    \
            fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #e, tu_e_);  \
            pl_error_report();                                                          \
            tu_failures++;                                                              \
        }                                                                               \
    } while (0)
#define TU_SKIP(...)                                                                    \
    do {                                                                                \
        fprintf(stderr, "skipped: ");                                                   \
        fprintf(stderr, __VA_ARGS__);                                                   \
        fputc('\n', stderr);                                                            \
        exit(77);                                                                       \
    } while (0)
/* got against a long double reference, the error measured against the
 * entry's scale (the sum of |terms|, which any summation order's rounding
 * is bounded by eps times): a failed check above tol (printed with what);
 * *worst keeps the largest error seen */
void tu_close_scaled(const char *what, double got, long double ref, long double scale, double tol, double *worst);
/* exit status of a test main */
int tu_result(const char *name);
#endif
