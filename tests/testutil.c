/* testutil.c — failure counter of the C tests. */
#include "testutil.h"
#include "pl_error.h"

int tu_failures = 0;

int tu_result(const char *name)
{
    if (tu_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, tu_failures);
        return 1;
    }
    fprintf(stderr, "%s: all checks passed\n", name);
    return 0;
}

void tu_close_scaled(const char *what, double got, long double ref, long double scale, double tol, double *worst)
{
    const double e = (double)(fabsl((long double)got - ref) / (scale > 0 ? scale : 1.0L));
    if (e > *worst) *worst = e;
    if (!(e <= tol)) {
        fprintf(stderr, "%s: got %.17g, want %.17Lg (error %.1e of the scale)\n", what, got, ref, e);
        tu_failures++;
    }
}
