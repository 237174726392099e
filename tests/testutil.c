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
