/* op_format.c — the one place that decides the local part's storage
 * format, [spmv] format = auto | pjds | compressed, from the operator
 * options (format, blocks, chunk_height), the backend (cmat_create, the test
 * switch tune.format = PJDS_SPMV_FORMAT) and the matrix (value terms, the
 * table counts); the choice is recorded in the operator (fmt, cmp_nval,
 * cmp_noff, fmt_note, and sort window 1 for compressed) and, on the cuda
 * backend, the matrix handle carries the kernel variant chosen at upload.
 *
 * auto compresses when every rank's tables fit one 32-bit word per entry,
 * stay cache-sized (PL_CPJDS_AUTO_TABLE_BYTES, spmv.h; the count stops as
 * soon as a rank's tables exceed either limit) and the compressed local part
 * moves at most 3/4 of the bytes of the pJDS one (its padding at sort window
 * 1 and its tables counted); otherwise pJDS, and the reason goes into pl_op_info's
 * format_note.  compressed forces it and fails (PL_ERR_INPUT, the reason)
 * when the tables do not fit.  Operators that keep value terms for the
 * in-place refill of a sweep, and backends without compressed kernels,
 * use pJDS (compressed forced: a warning).  auto also keeps pJDS for an
 * operator that serves block products (pl_op_options.blocks: dos, bench's
 * SpMMV rows).  The decision is collective:
 * all ranks use the same format.  The remote part of a split matrix stays
 * pJDS.
 */
#include <stdio.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "op_impl.h"

/* Local entries of chunks of C rows in their original order (sort window
 * 1) into *nent, true local non-zeros into *nnz. */
static void local_entries(const pl_csr *A, int C, int64_t *nent, int64_t *nnz)
{
    const int64_t n = A->nrows, nch = (n + C - 1) / C;
    int64_t tot = 0, nz = 0;
#pragma omp parallel for schedule(static) reduction(+ : tot, nz)
    for (int64_t c = 0; c < nch; c++) {
        int64_t w = 0;
        for (int64_t i = c * C; i < (c + 1) * C && i < n; i++) {
            int64_t l = 0;
            for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
                l += (uint64_t)(A->col[k] - A->row0) < (uint64_t)n;
            if (l > w) w = l;
            nz += l;
        }
        tot += w * C;
    }
    *nent = tot;
    *nnz = nz;
}

static int decide_compressed(pl_op *op, const pl_csr *A, const pl_op_options *cfg, int want);

int pl_op_format_decide(pl_op *op, const pl_csr *A, const pl_op_options *cfg)
{
    /* the test switch PJDS_SPMV_FORMAT (be->tune.format) replaces auto, so
     * that whole test folders run again with a format forced */
    const int want = cfg->format == PL_FORMAT_AUTO ? op->be->tune.format : cfg->format;
    op->fmt = PL_FORMAT_PJDS;
    op->cmp_nval = op->cmp_noff = -1;
    op->fmt_note[0] = 0;
    PL_CHECK(want != PL_FORMAT_MATRIX_FREE, PL_ERR_INPUT,
             "format = matrix_free needs a generated Holstein-Hubbard model (pl_op_create_kron), not a stored "
             "matrix: use format = auto, pjds or compressed");
    PL_CHECK(want == PL_FORMAT_AUTO || want == PL_FORMAT_PJDS || want == PL_FORMAT_COMPRESSED, PL_ERR_INPUT,
             "format = %d is not auto, pjds or compressed", want);
    if (want == PL_FORMAT_PJDS) return PL_OK;
    if (op->unified) { /* reproducible on several ranks: whole rows in one pJDS part (op_build.c) */
        PL_CHECK(want != PL_FORMAT_COMPRESSED, PL_ERR_INPUT,
                 "format = compressed with reproducible results on several ranks: the compressed part holds local "
                 "columns only (use format = auto or pjds)");
        snprintf(op->fmt_note, sizeof op->fmt_note, "reproducible: whole rows in one pJDS part");
        return PL_OK;
    }
    PL_CALL(decide_compressed(op, A, cfg, want));
    if (op->fmt == PL_FORMAT_COMPRESSED) op->sort_window = 1; /* rows in their original order */
    return PL_OK;
}

/* auto or compressed on a backend and matrix that may take it. */
static int decide_compressed(pl_op *op, const pl_csr *A, const pl_op_options *cfg, int want)
{
    if (!op->be->cmat_create) {
        snprintf(op->fmt_note, sizeof op->fmt_note, "the %s backend has no compressed kernels", op->be->name);
        PL_CHECK(want != PL_FORMAT_COMPRESSED, PL_ERR_INPUT,
                 "format = compressed: the %s backend has no compressed kernels (use format = auto or pjds)",
                 op->be->name);
        return PL_OK;
    }
    if (want == PL_FORMAT_AUTO && !op->be->compressed_auto) {
        /* the CPU backend: its compressed kernel (decode a word, look up the
         * value and the offset) ran 1.2-2.4x slower than its pJDS kernel on
         * every matrix measured, although it moves 40 % of the bytes:
         * pjds-bench, 2026-11-25, 16 cores of the H100 host: HMEp 15.92
         * against 13.35 ms, hmep_m18 32.51 against 26.03 ms, hh_184800
         * 0.324 against 0.192 ms (one core: 2.78 against 1.65 ms); one core
         * of the 2-core development VM: hh_184800 2.47 against 0.98 ms */
        snprintf(op->fmt_note, sizeof op->fmt_note, "the %s backend's pJDS kernels are faster than its compressed ones",
                 op->be->name);
        return PL_OK;
    }
    if (want == PL_FORMAT_AUTO && cfg->blocks) {
        /* block products: the pJDS SpMMV kernel (and its fused KPM step) is
         * about 2x faster per vector than the compressed one on HMEp at R = 32
         * (H100, 2026-11-25: 0.167 against 0.352 ms), where the gathers of X,
         * not the matrix bytes, dominate */
        snprintf(op->fmt_note, sizeof op->fmt_note, "block products (SpMMV) run faster on pJDS");
        return PL_OK;
    }
    if (A->nterms > 0) { /* the same on every rank */
        snprintf(op->fmt_note, sizeof op->fmt_note, "the sweep refills the values in place (pJDS only)");
        if (want == PL_FORMAT_COMPRESSED)
            pl_warn("[spmv] format = compressed: this sweep refills the matrix values in place, which needs pJDS; "
                    "using pjds");
        return PL_OK;
    }
    /* build the compressed part right away (its pass over the entries also
     * counts the tables; under auto it stops as soon as the tables cannot
     * fit 32 bits or 2 MiB, and the counts up to there go into the note);
     * agree on failures, then combine */
    int64_t nent = 0, nnz = 0;
    pl_cpjds_stats cs;
    memset(&cs, 0, sizeof cs);
    /* a device backend that streams the words (cmat_create_fill) gets the
     * tables and layout only: the words are made chunk range by chunk range
     * into its staging buffers at the upload, overlapping the copies */
    const pl_backend *be = op->be;
    const int lazy = be->cmat_create_fill && !be->host_memory && !be->tune.fill_host && A->nrows > 0;
    const double tb = want == PL_FORMAT_AUTO ? PL_CPJDS_AUTO_TABLE_BYTES : 0.0;
    int rc = lazy ? pl_cpjds_create_layout(A, cfg->chunk_height, tb, &op->cloc, &cs)
                  : pl_cpjds_create_ex(A, cfg->chunk_height, tb, &op->cloc, &cs);
    int fits_here = rc == PL_OK;
    if (rc == PL_ERR_INPUT && want == PL_FORMAT_AUTO) { /* cs holds the counts up to where it stopped */
        pl_error_clear();
        rc = PL_OK;
    } else if (rc == PL_ERR_INPUT) { /* name the parameter first */
        char why[768];
        snprintf(why, sizeof why, "%s", pl_error_message());
        pl_error_clear();
        rc = PL_ERROR(PL_ERR_INPUT, "format = compressed: %s", why);
    }
    PL_CALL(pl_op_agree(op->comm, rc, want == PL_FORMAT_COMPRESSED ? "compressing the matrix"
                                                                    : "counting the distinct matrix values"));
    if (fits_here) { /* the layout counted them */
        nent = op->cloc.nent;
        nnz = op->cloc.nnz;
    } else {
        local_entries(A, cfg->chunk_height, &nent, &nnz);
    }
    int64_t loc[3] = {cs.nval, cs.noff, cs.over}, mx[3];
    int all_fit = 0;
    double sz[2] = {(double)nent, (double)nnz}, sum[2];
    PL_MPI(MPI_Allreduce(loc, mx, 3, MPI_INT64_T, MPI_MAX, op->comm), "MPI_Allreduce of the table sizes");
    PL_MPI(MPI_Allreduce(sz, sum, 2, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of the entry counts");
    PL_MPI(MPI_Allreduce(&fits_here, &all_fit, 1, MPI_INT, MPI_MIN, op->comm), "MPI_Allreduce of the fit");
    op->cmp_nval = mx[0];
    op->cmp_noff = mx[1];
    const int vb = pl_cpjds_bits(mx[0]), ob = pl_cpjds_bits(mx[1]);
    const int fits = all_fit && mx[2] == 0 && mx[0] <= PL_CPJDS_COUNT_MAX && mx[1] <= PL_CPJDS_COUNT_MAX &&
                     vb + ob <= 32 && ob <= 31;
    const double tables = 8.0 * (double)mx[0] + 4.0 * (double)mx[1];
    int nranks = 1;
    PL_MPI(MPI_Comm_size(op->comm, &nranks), "MPI_Comm_size");
    /* words plus every rank's tables (bounded by the largest) against pJDS */
    const double cbytes = 4.0 * sum[0] + tables * nranks, pbytes = 12.0 * sum[1];
    if (want == PL_FORMAT_COMPRESSED) { /* built on every rank (else the agreement failed above) */
        op->fmt = PL_FORMAT_COMPRESSED;
        return PL_OK;
    }
    if (!fits) { /* the most basic reason of any rank; counts up to where the count stopped */
        if (mx[2] == PL_CPJDS_OVER_COUNT)
            snprintf(op->fmt_note, sizeof op->fmt_note, "more than %lld distinct values or offsets",
                     (long long)PL_CPJDS_COUNT_MAX);
        else if (mx[2] == PL_CPJDS_OVER_TABLES)
            snprintf(op->fmt_note, sizeof op->fmt_note,
                     "tables of %.1f MiB or more (%lld values, %lld offsets counted) exceed %.0f MiB",
                     tables / 1048576.0, (long long)mx[0], (long long)mx[1], PL_CPJDS_AUTO_TABLE_BYTES / 1048576.0);
        else
            snprintf(op->fmt_note, sizeof op->fmt_note,
                     "%lld distinct values (%d bits) and %lld offsets (%d bits) exceed 32 bits%s", (long long)mx[0],
                     vb, (long long)mx[1], ob, mx[2] ? " (counted up to there)" : "");
    } else if (tables > PL_CPJDS_AUTO_TABLE_BYTES) {
        snprintf(op->fmt_note, sizeof op->fmt_note, "tables of %.1f MiB (%lld values, %lld offsets) exceed %.0f MiB",
                 tables / 1048576.0, (long long)mx[0], (long long)mx[1], PL_CPJDS_AUTO_TABLE_BYTES / 1048576.0);
    } else if (cbytes > 0.75 * pbytes) {
        snprintf(op->fmt_note, sizeof op->fmt_note,
                 "padding in row order and tables: %.1f bytes per non-zero compressed against 12 in pJDS",
                 sum[1] > 0 ? cbytes / sum[1] : 0.0);
    } else {
        op->fmt = PL_FORMAT_COMPRESSED;
    }
    if (op->fmt != PL_FORMAT_COMPRESSED) pl_cpjds_destroy(&op->cloc); /* pJDS after all */
    return PL_OK;
}

int pl_op_format_build(pl_op *op, const pl_csr *A, int C)
{
    if (op->cloc.ent || op->cloc.nchunks > 0) return PL_OK; /* made by pl_op_format_decide (ent NULL: streamed) */
    PL_CALL(pl_cpjds_create(A, C, &op->cloc));
    return PL_OK;
}
