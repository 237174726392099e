/* h5m_probe.c — import files (group "/") through the whole pipeline on one
 * rank and print "<code> <message>" per file; exit 0 unless it crashes.
 * Used by fuzz.py (mutated files must give PL_OK or PL_ERR_INPUT, never a
 * crash). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "pl_error.h"
#include "pl_h5matrix.h"

static int probe(const char *file)
{
    pl_h5m_info in;
    pl_csr b;
    int rc = pl_h5m_open_info(file, "/", &in);
    if (!rc && in.rows <= 1000000) {
        int32_t *len = malloc(sizeof(int32_t) * (size_t)in.rows);
        rc = len ? pl_h5m_row_lengths(file, "/", 0, in.rows, len, MPI_COMM_WORLD) : PL_ERR_MEM;
        free(len);
        if (!rc) rc = pl_h5m_read_rows(file, "/", 0, in.rows, MPI_COMM_WORLD, &b);
        if (!rc) pl_csr_destroy(&b);
    }
    return rc;
}

/* h5m_probe FILE...: one line "<code> <message>" per file. */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int k = 1; k < argc; k++) {
        pl_error_clear();
        int rc = probe(argv[k]);
        printf("%d %s\n", rc, pl_error_message());
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
