/* cmd_info.c — `pjds-lanczos info CONFIG`: build the matrix and print its
 * statistics as `key: value` lines (rank 0), including the storage of CSR,
 * ELLPACK and pJDS (the seed paper's Table I) computed from the row-length
 * histogram. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"

int cmd_info(app_ctx *ctx)
{
    pl_csr rows;
    app_matrix_info mi;
    PL_CALL(app_build_rows(ctx, &rows, &mi));
    int rc = PL_OK;
    int32_t *len = NULL;
    int64_t *hist = NULL, *ghist = NULL;
    pjds_stats st;
    PL_CALL_GOTO(app_row_stats(ctx, &rows, &len, &st), out, rc);
    /* row-length histogram (global), O(longest row) memory */
    hist = calloc((size_t)st.row_len_max + 1, sizeof *hist);
    ghist = calloc((size_t)st.row_len_max + 1, sizeof *ghist);
    PL_CHECK_GOTO(hist && ghist, PL_ERR_MEM, out, rc, "out of host memory");
    for (int64_t i = 0; i < rows.nrows; i++) hist[len[i]]++;
    PL_CHECK_GOTO(MPI_Reduce(hist, ghist, (int)st.row_len_max + 1, MPI_INT64_T, MPI_SUM, 0, ctx->comm) == MPI_SUCCESS,
                  PL_ERR_MPI, out, rc, "MPI_Reduce failed");
    /* compressed format: the tables each rank's local part needs
     * (no table limit; the count stops where the ids need more than 32 bits
     * or a table more than PL_CPJDS_COUNT_MAX keys: then the counts up to
     * there, lower bounds, "(or more)") */
    pl_cpjds_stats cs;
    PL_CALL_GOTO(pl_cpjds_count(&rows, 0.0, &cs), out, rc);
    int64_t cnt[3] = {cs.nval, cs.noff, cs.over}, gcnt[3] = {0, 0, 0};
    PL_CHECK_GOTO(MPI_Reduce(cnt, gcnt, 3, MPI_INT64_T, MPI_MAX, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc,
                  "MPI_Reduce failed");
    if (ctx->rank == 0) {
        printf("matrix: %s\n", mi.name);
        printf("rows: %lld\n", (long long)st.rows);
        printf("nnz: %lld\n", (long long)st.nnz);
        printf("nnz_per_row: %.4f\n", st.rows ? (double)st.nnz / (double)st.rows : 0.0);
        printf("row_length_min: %lld\n", (long long)st.row_len_min);
        printf("row_length_max: %lld\n", (long long)st.row_len_max);
        printf("storage_csr_bytes: %lld\n", (long long)st.csr_bytes);
        printf("chunk_height: %d\n", ctx->cfg.spmv.chunk_height);
        printf("storage_ellpack_entries: %lld\n", (long long)st.ellpack_entries);
        printf("storage_pjds_entries: %lld\n", (long long)st.pjds_entries);
        printf("pjds_padding_vs_csr: %.6f\n", st.nnz ? (double)(st.pjds_entries - st.nnz) / (double)st.nnz : 0.0);
        printf("pjds_reduction_vs_ellpack: %.6f\n", st.pjds_reduction_vs_ellpack);
        printf("row_length_histogram:");
        for (int64_t l = 0; l <= st.row_len_max; l++)
            if (ghist[l]) printf(" %lld:%lld", (long long)l, (long long)ghist[l]);
        printf("\n");
        {
            const int vb = pl_cpjds_bits(gcnt[0]), ob = pl_cpjds_bits(gcnt[1]);
            const int over = gcnt[2] != 0;
            printf("compressed_values: %lld%s\n", (long long)gcnt[0], over ? " (or more)" : "");
            printf("compressed_offsets: %lld%s\n", (long long)gcnt[1], over ? " (or more)" : "");
            printf("compressed_value_bits: %d\n", vb);
            printf("compressed_offset_bits: %d\n", ob);
            printf("compressed_table_bytes: %.0f\n", 8.0 * (double)gcnt[0] + 4.0 * (double)gcnt[1]);
            printf("compressed_fits: %s\n", !over && vb + ob <= 32 && ob <= 31 ? "yes" : "no");
            printf("compressed_bytes_per_entry: 4 (pjds: 12)\n");
        }
        printf("build_seconds: %.3f\n", mi.build_seconds);
        printf("ranks: %d\n", ctx->size);
        printf("threads_per_rank: %d\n", omp_get_max_threads());
        if (ctx->have_plan) { /* the memory plan (docs/operations.md), before the build */
            const app_mem_plan *p = &ctx->plan;
            printf("memory_plan_backend: %s\n", p->gpu ? "cuda" : "cpu");
            printf("memory_host_bytes_per_rank: %.0f\n", p->host_bytes);
            printf("memory_device_bytes_per_rank: %.0f\n", p->device_bytes + p->device_resident);
            printf("memory_host_available_per_rank: %.0f\n", p->host_avail);
        }
        fflush(stdout);
    }
    /* the tables, where `solve` would apply the matrix without storing it
     * (format = matrix_free, or auto on one rank: app_free.c) */
    if (app_free_in_solve(ctx)) PL_CALL_GOTO(app_free_info(ctx), out, rc);
out:
    free(hist);
    free(ghist);
    free(len);
    pl_csr_destroy(&rows);
    return rc;
}
