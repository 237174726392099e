/* bench_report.c — output of `bench` (bench_run.c): the table on stdout and
 * the JSON file (PJDS_BENCH_JSON).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* sysconf(_SC_AVPHYS_PAGES) */
#include "bench_impl.h"

/* ---- output ------------------------------------------------------------------ */

static void fmt_bytes(double b, char *s, size_t len)
{
    if (b <= 0) snprintf(s, len, "-");
    else snprintf(s, len, "%.1f MB", b / 1e6);
}

void bench_print_report(bench *b, FILE *f)
{
    const double floor_ms = b->copy_gbs > 0 ? b->bmin / (b->copy_gbs * 1e9) * 1e3 : 0.0;
    fprintf(f, "\n== pjds-lanczos bench: %s ==\n", b->on_gpu ? b->device : "CPU backend (no GPU used)");
    fprintf(f, "matrix: %lld rows, %lld nnz (%.2f per row, max %lld), C = %d\n", (long long)b->n,
            (long long)b->nnz, b->n ? (double)b->nnz / (double)b->n : 0.0, (long long)b->st.row_len_max,
            b->ctx->cfg.spmv.chunk_height);
    fprintf(f, "copy bandwidth: %.0f GB/s (%s); minimal traffic 12 B/nnz + 20 B/row = %.1f MB; floor %.4f ms\n",
            b->copy_gbs, b->on_gpu ? "cudaMemcpy D2D, 1 GiB" : "host memcpy, 256 MiB", b->bmin / 1e6, floor_ms);
    fprintf(f, "pJDS data reduction vs ELLPACK (C = %d): %.1f%% (%lld vs %lld stored entries)\n",
            b->ctx->cfg.spmv.chunk_height, 100.0 * b->st.pjds_reduction_vs_ellpack, (long long)b->st.pjds_entries,
            (long long)b->st.ellpack_entries);
    fprintf(f, "times: median of %d runs after %d warm-up runs\n\n", b->repeats, BENCH_WARMUP);

    if (b->nwin > 0) {
        fprintf(f, "sort-window sweep: pJDS time in ms per kernel variant (x = wrong result, - = not run)\n");
        fprintf(f, "%-20s", "variant \\ sigma");
        for (int w = 0; w < b->nwin; w++) {
            char s[24];
            if (b->windows[w] <= 0 || b->windows[w] >= b->n) snprintf(s, sizeof s, "all");
            else snprintf(s, sizeof s, "%lld", (long long)b->windows[w]);
            fprintf(f, " %9s", s);
        }
        fprintf(f, "\n");
        for (int v = 0; v < b->nvar; v++) {
            fprintf(f, "%-20s", bench_variant_name(b, v));
            for (int w = 0; w < b->nwin; w++) {
                double ms = b->sweep[w][v];
                if (ms == -2.0) fprintf(f, " %9s", "x");
                else if (ms < 0) fprintf(f, " %9s", "-");
                else fprintf(f, " %9.4f", ms);
            }
            fprintf(f, "\n");
        }
        fprintf(f, "%-20s", "% of floor (best)");
        for (int w = 0; w < b->nwin; w++) {
            double best = -1;
            for (int v = 0; v < b->nvar; v++)
                if (b->sweep[w][v] > 0 && (best < 0 || b->sweep[w][v] < best)) best = b->sweep[w][v];
            if (best > 0 && floor_ms > 0) fprintf(f, " %8.1f%%", 100.0 * floor_ms / best);
            else fprintf(f, " %9s", "-");
        }
        fprintf(f, "\n%-20s", "max rel. error");
        for (int w = 0; w < b->nwin; w++) fprintf(f, " %9.1e", b->sweep_err[w]);
        fprintf(f, "\n\n");
    }

    fprintf(f, "%-30s %-18s %8s %9s %7s %7s %7s %10s %9s  %s\n", "format", "kernel", "sigma", "time_ms", "GF/s",
            "GB/s", "%floor", "bytes", "rel_err", "note");
    for (int i = 0; i < b->nrows; i++) {
        bench_row *r = &b->rows[i];
        char sg[24], by[24], er[24];
        if (r->sigma < 0) snprintf(sg, sizeof sg, "-");
        else if (r->sigma == 0 || r->sigma >= b->n) snprintf(sg, sizeof sg, "all");
        else snprintf(sg, sizeof sg, "%lld", (long long)r->sigma);
        fmt_bytes(r->bytes_dev, by, sizeof by);
        if (r->relerr < 0) snprintf(er, sizeof er, "-");
        else snprintf(er, sizeof er, "%.1e%s", r->relerr, r->relerr <= BENCH_TOL ? "" : "!");
        if (r->ms > 0) {
            double gf = 2.0 * (double)b->nnz / (r->ms * 1e-3) / 1e9;
            /* rows with their own floor (pJDS blocked): GB/s and %floor against it */
            const double rb = r->bmin > 0 ? r->bmin : b->bmin;
            const double rfloor = floor_ms > 0 ? floor_ms * rb / b->bmin : 0.0;
            double gbs = rb / (r->ms * 1e-3) / 1e9;
            double pct = rfloor > 0 ? 100.0 * rfloor / r->ms : 0.0;
            fprintf(f, "%-30s %-18s %8s %9.4f %7.1f %7.0f %6.1f%% %10s %9s  %s\n", r->format, r->variant, sg, r->ms,
                    gf, gbs, pct, by, er, r->note);
        } else {
            fprintf(f, "%-30s %-18s %8s %9s %7s %7s %7s %10s %9s  %s\n", r->format, r->variant, sg, "-", "-", "-",
                    "-", by, er, r->note);
        }
    }
    for (int i = 0; i < b->nrows; i++) {
        const bench_row *r = &b->rows[i];
        if (r->bmin <= 0 || r->ms <= 0 || b->bmin <= 0) continue;
        const double rfloor = floor_ms * r->bmin / b->bmin;
        fprintf(f, "%s, sigma %lld: %.4f ms = %.1f%% of its floor %.4f ms (%.1f MB); %.1f%% of the 12 B/nnz floor",
                r->format, (long long)r->sigma, r->ms, rfloor > 0 ? 100.0 * rfloor / r->ms : 0.0, rfloor,
                r->bmin / 1e6, floor_ms > 0 ? 100.0 * floor_ms / r->ms : 0.0);
        if (r->speedup > 0) fprintf(f, "; %.2fx the CSR reference", r->speedup);
        fprintf(f, "\n");
    }
    if (b->nvops > 0) {
        fprintf(f, "\nvector ops at n = %lld (V column-major, ld = n; %d calls, median; GB/s = minimal bytes / GPU time;"
                   " wall = host time per call incl. sync)\n", (long long)b->n, BENCH_VOP_REPEATS);
        fprintf(f, "%-7s %3s %3s %9s | %9s %9s %7s %6s | %9s %9s %7s %6s | %7s %9s\n", "op", "k", "m", "bytes",
                "ours_ms", "wall_ms", "GB/s", "%copy", "cublas_ms", "wall_ms", "GB/s", "%copy", "speedup", "diff");
        for (int i = 0; i < b->nvops; i++) {
            const bench_vop *r = &b->vops[i];
            char by[24], c[2][64], sp[16] = "-", df[16] = "-";
            fmt_bytes(r->bytes, by, sizeof by);
            for (int m = 0; m < 2; m++) {
                if (r->ms[m] > 0) {
                    double gbs = r->bytes / (r->ms[m] * 1e-3) / 1e9;
                    snprintf(c[m], sizeof c[m], "%9.4f %9.4f %7.0f %5.1f%%", r->ms[m], r->wall_ms[m], gbs,
                             b->copy_gbs > 0 ? 100.0 * gbs / b->copy_gbs : 0.0);
                } else {
                    snprintf(c[m], sizeof c[m], "%9s %9s %7s %6s", "-", "-", "-", "-");
                }
            }
            if (r->ms[0] > 0 && r->ms[1] > 0) snprintf(sp, sizeof sp, "%.2fx", r->ms[1] / r->ms[0]);
            if (r->diff >= 0) snprintf(df, sizeof df, "%.1e", r->diff);
            char kk[8] = "-", mm[8] = "-";
            if (r->k) snprintf(kk, sizeof kk, "%d", r->k);
            if (r->m) snprintf(mm, sizeof mm, "%d", r->m);
            fprintf(f, "%-7s %3s %3s %9s | %s | %s | %7s %9s\n", r->op, kk, mm, by, c[0], c[1], sp, df);
        }
    }
    bench_print_spmm(b, f);
    fflush(f);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fprintf(f, "null");
}

int bench_write_json(bench *b, const char *path)
{
    FILE *f = fopen(path, "w");
    PL_CHECK(f, PL_ERR_INPUT, "bench: cannot write JSON file %s", path);
    const double floor_ms = b->copy_gbs > 0 ? b->bmin / (b->copy_gbs * 1e9) * 1e3 : 0.0;
    fprintf(f, "{\n  \"device\": ");
    json_str(f, b->on_gpu ? b->device : "cpu");
    fprintf(f, ",\n  \"rows\": %lld, \"nnz\": %lld, \"row_len_max\": %lld, \"chunk_height\": %d,\n",
            (long long)b->n, (long long)b->nnz, (long long)b->st.row_len_max, b->ctx->cfg.spmv.chunk_height);
    fprintf(f, "  \"copy_gbs\": ");
    json_num(f, b->copy_gbs);
    fprintf(f, ", \"min_bytes\": %.0f, \"floor_ms\": ", b->bmin);
    json_num(f, floor_ms);
    fprintf(f, ", \"pjds_reduction_vs_ellpack\": ");
    json_num(f, b->st.pjds_reduction_vs_ellpack);
    fprintf(f, ", \"repeats\": %d,\n  \"formats\": [\n", b->repeats);
    for (int i = 0; i < b->nrows; i++) {
        bench_row *r = &b->rows[i];
        fprintf(f, "    {\"format\": ");
        json_str(f, r->format);
        fprintf(f, ", \"kernel\": ");
        json_str(f, r->variant);
        fprintf(f, ", \"sigma\": %lld, \"ms\": ", (long long)r->sigma);
        if (r->ms > 0) json_num(f, r->ms);
        else fprintf(f, "null");
        fprintf(f, ", \"gflops\": ");
        if (r->ms > 0) json_num(f, 2.0 * (double)b->nnz / (r->ms * 1e-3) / 1e9);
        else fprintf(f, "null");
        fprintf(f, ", \"gbs\": ");
        const double rb = r->bmin > 0 ? r->bmin : b->bmin; /* own floor: pJDS blocked */
        const double rfloor = floor_ms > 0 ? floor_ms * rb / b->bmin : 0.0;
        if (r->ms > 0) json_num(f, rb / (r->ms * 1e-3) / 1e9);
        else fprintf(f, "null");
        fprintf(f, ", \"pct_floor\": ");
        if (r->ms > 0 && rfloor > 0) json_num(f, 100.0 * rfloor / r->ms);
        else fprintf(f, "null");
        if (r->bmin > 0) {
            fprintf(f, ", \"min_bytes\": %.0f, \"floor_ms\": ", r->bmin);
            json_num(f, rfloor);
            fprintf(f, ", \"speedup_vs_csr\": ");
            if (r->speedup > 0) json_num(f, r->speedup);
            else fprintf(f, "null");
        }
        fprintf(f, ", \"bytes\": %.0f, \"rel_err\": ", r->bytes_dev);
        if (r->relerr >= 0) json_num(f, r->relerr);
        else fprintf(f, "null");
        fprintf(f, ", \"note\": ");
        json_str(f, r->note);
        fprintf(f, "}%s\n", i + 1 < b->nrows ? "," : "");
    }
    fprintf(f, "  ],\n  \"sweep\": {\"sigma\": [");
    for (int w = 0; w < b->nwin; w++) fprintf(f, "%s%lld", w ? ", " : "", (long long)b->windows[w]);
    fprintf(f, "], \"variants\": [");
    for (int v = 0; v < b->nvar; v++) {
        if (v) fprintf(f, ", ");
        json_str(f, bench_variant_name(b, v));
    }
    fprintf(f, "],\n    \"ms\": [");
    for (int w = 0; w < b->nwin; w++) {
        fprintf(f, "%s[", w ? ", " : "");
        for (int v = 0; v < b->nvar; v++) {
            if (v) fprintf(f, ", ");
            if (b->sweep[w][v] > 0) json_num(f, b->sweep[w][v]);
            else fprintf(f, "null");
        }
        fprintf(f, "]");
    }
    fprintf(f, "]},\n  \"vecops\": [");
    for (int i = 0; i < b->nvops; i++) {
        const bench_vop *r = &b->vops[i];
        fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
        json_str(f, r->op);
        fprintf(f, ", \"k\": %d, \"m\": %d, \"bytes\": %.0f", r->k, r->m, r->bytes);
        const char *nm[2] = {"ours", "cublas"};
        for (int m = 0; m < 2; m++) {
            fprintf(f, ", \"%s_ms\": ", nm[m]);
            if (r->ms[m] > 0) json_num(f, r->ms[m]);
            else fprintf(f, "null");
            fprintf(f, ", \"%s_wall_ms\": ", nm[m]);
            if (r->ms[m] > 0) json_num(f, r->wall_ms[m]);
            else fprintf(f, "null");
            fprintf(f, ", \"%s_gbs\": ", nm[m]);
            if (r->ms[m] > 0) json_num(f, r->bytes / (r->ms[m] * 1e-3) / 1e9);
            else fprintf(f, "null");
        }
        fprintf(f, ", \"diff\": ");
        if (r->diff >= 0) json_num(f, r->diff);
        else fprintf(f, "null");
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    int bad = ferror(f);
    bad |= fclose(f);
    PL_CHECK(!bad, PL_ERR_IO, "bench: writing %s failed", path);
    return PL_OK;
}
