/* mem_plan.c — the memory plan (docs/operations.md, "Memory plan"): before a generated
 * matrix is built, every rank estimates its peak host and device bytes from
 * what is known (rows, the mean row length of a sample of rows, ncv, the
 * backend) and the run stops with exit status 2 and one line when that
 * exceeds what is available, instead of dying late.
 *
 * Per rank, n rows and z non-zeros (12 B per stored pJDS entry, padding and
 * windows ~5 %), k = ncv + 1 basis columns:
 *   CSR block       8 (n + 1) + 16 z          (int64 columns, values)
 *   pJDS            12.6 z + 4 n              (int32 columns, values, row lengths)
 *   compressed      4.4 z + 4 n               (32-bit words, ~10 % padding in row order;
 *                                              generated models outside sweeps)
 *   matrix-free     no matrix: host 8 n + basis (cpu), 16 n (cuda); device
 *                   basis + 16 n (the tables: a few MB); several ranks: the
 *                   halo buffers, 8 B per halo value and 12 B per sent
 *                   value (send buffer + index), on the device for cuda
 *                   with 8 B per value of pinned host staging (h values
 *                   received, s sent: spmv/op_kron_dist.c).  Planned where the
 *                   operator runs from the tables: format = matrix_free, or
 *                   auto choosing them (app_free.c), a sweep's points too:
 *                   each structure's plan is made at its build, so the
 *                   largest point is planned for the operator it gets
 *   build temps     40 n                      (permutation, lengths, global index)
 *   basis + work    8 n (k + 6)                (the cpu backend's fused restart takes one
 *                                              of the 6: column ncv + 1, A v_m)
 * Host: what the process holds already (VmRSS: libraries, MPI, the CUDA
 * context) + cpu backend max(CSR + pJDS + temps, pJDS + 8 n + basis), cuda
 * backend CSR + temps (the entries stream to the device chunk by chunk).
 * Device (cuda): pJDS (+2 B per entry for the block-mode run columns) +
 * basis + halo, compared with the free memory; reported with what the
 * device holds already (the context).  Available: MemAvailable of /proc/meminfo shared by the
 * ranks of the node; the device's free memory (PJDS_DEVICE_MEMORY_LIMIT
 * caps it, for tests; PJDS_HOST_PLAN_LIMIT caps the host bytes the plan
 * may add to what the process holds, for tests).  While the backend is made in the background
 * (app_backend.c), the check before the build has the host part and the
 * device part against that cap only; the device part against the free
 * memory follows the build (app_mem_plan_check_device).  A second sector's
 * operator (spectral's electron operators) is planned at its build beside
 * the first, whose memory is then in use (VmRSS, the device's free memory),
 * plus ctx->plan_extra_host: the N-sector rows the electron operator reads. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "pl_error.h"
#include "spmv.h"
#include "solve_impl.h"

/* bytes of a size string "123", "4.5G", "800M", "64k" (binary units); <0 bad */
double app_parse_bytes(const char *s)
{
    if (!s || !*s) return -1.0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0)) return -1.0;
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; end++; break;
    case 'm': case 'M': v *= 1048576.0; end++; break;
    case 'g': case 'G': v *= 1073741824.0; end++; break;
    case 't': case 'T': v *= 1099511627776.0; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') end++;
    return *end ? -1.0 : v;
}

/* resident bytes of this process now (VmRSS): libraries, MPI, the CUDA
 * context; the plan adds what the matrix and the solver will take */
static double host_resident(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0.0;
    char line[256];
    double kb = 0.0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) {
            kb = strtod(line + 6, NULL);
            break;
        }
    fclose(f);
    return kb * 1024.0;
}

static double host_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1.0;
    char line[256];
    double kb = -1.0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "MemAvailable:", 13)) {
            kb = strtod(line + 13, NULL);
            break;
        }
    fclose(f);
    return kb >= 0 ? kb * 1024.0 : -1.0;
}

/* The plan; no_matrix: of the matrix-free operator (whatever cfg's format
 * says), with halo / sent values h and s per product; symmetric: the
 * matrix is known symmetric (a file's attribute), so method = auto runs
 * Lanczos and its basis, not Krylov-Schur's larger one. */
static void plan_compute(const pl_config *cfg, int64_t N, int64_t rows_local, double nnz_local, int gpu, int no_matrix,
                         double h, double s, int symmetric, app_mem_plan *p)
{
    memset(p, 0, sizeof *p);
    const int method = cfg->solver.method == PL_METHOD_AUTO && symmetric ? PL_METHOD_LANCZOS : cfg->solver.method;
    const int64_t ncv = solve_ncv(cfg, method, N);
    const double n = (double)rows_local, z = nnz_local, k = (double)ncv + 1.0;
    /* a generated Hamiltonian outside a sweep gets the compressed format
     * under format = auto on the GPU (op_format.c; the CPU backend keeps
     * pJDS): 4 B per entry, ~10 % padding in row order; imported matrices
     * are planned as pJDS (their tables are not known before the rows are
     * read) */
    const int hh = cfg->model.type == PL_MODEL_HOLSTEIN_HUBBARD && cfg->sweep.nkeys == 0;
    const int cmp = cfg->spmv.format == PL_FORMAT_COMPRESSED || (cfg->spmv.format == PL_FORMAT_AUTO && gpu && hh);
    const double csr = 8.0 * (n + 1.0) + 16.0 * z, pj = cmp ? 4.4 * z + 4.0 * n : 12.6 * z + 4.0 * n,
                 temps = 40.0 * n;
    const double basis = 8.0 * n * (k + 6.0);
    p->rows_local = rows_local;
    p->nnz_local = z;
    p->ncv = (int)ncv;
    p->gpu = gpu;
    if (no_matrix) {
        /* no matrix: a few MB of tables (hamiltonian/hh_mf.h), the basis */
        p->nnz_local = 0.0;
        const double halo = 8.0 * h + 12.0 * s;
        p->host_bytes = gpu ? 16.0 * n + 8.0 * (h + s) : 8.0 * n + basis + halo;
        p->device_bytes = gpu ? basis + 16.0 * n + halo : 0.0;
    } else if (gpu) {
        /* compressed: the words are built on the host, then uploaded */
        p->host_bytes = csr + temps + (cmp ? pj : 0.0);
        p->device_bytes = pj + (cmp ? 0.0 : 2.0 * z) + basis + 16.0 * n;
    } else {
        const double a = csr + pj + temps, b = pj + 8.0 * n + basis;
        p->host_bytes = a > b ? a : b;
        p->device_bytes = 0.0;
    }
    p->host_resident = host_resident();
    p->host_bytes += p->host_resident;
    p->host_avail = p->device_avail = -1.0;
}

void app_mem_plan_compute(const pl_config *cfg, int64_t N, int64_t rows_local, double nnz_local, int gpu,
                          int symmetric, app_mem_plan *p)
{
    plan_compute(cfg, N, rows_local, nnz_local, gpu, cfg->spmv.format == PL_FORMAT_MATRIX_FREE, 0.0, 0.0, symmetric, p);
}

void app_mem_plan_compute_free(const pl_config *cfg, int64_t N, int64_t rows_local, double halo_values,
                               double send_values, int gpu, app_mem_plan *p)
{
    plan_compute(cfg, N, rows_local, 0.0, gpu, 1, halo_values, send_values, 1, p);
}

static void fmt(double b, char *s, size_t n)
{
    const char *u[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    int i = 0;
    while (b >= 1000.0 && i < 6) b /= 1000.0, i++;
    snprintf(s, n, "%.3g %s", b, u[i]);
}

/* The free memory of be's device (capped by PJDS_DEVICE_MEMORY_LIMIT) into
 * p->device_avail, what it holds already into p->device_resident. */
static void device_free(app_mem_plan *p, pl_backend *be)
{
    double da = -1.0;
    if (p->gpu && be && be->mem_info) {
        int dev = 0;
        size_t fr = 0, tot = 0;
        if (be->mem_info(be, &dev, &fr, &tot) == PL_OK) {
            da = (double)fr;
            /* in use already (the CUDA context, libraries): part of the
             * peak the plan reports, not of what it still needs */
            p->device_resident = (double)(tot - fr);
        }
    }
    const double cap = app_parse_bytes(getenv("PJDS_DEVICE_MEMORY_LIMIT"));
    if (p->gpu && cap >= 0) da = da < 0 ? cap : fmin(da, cap);
    p->device_avail = da;
}

/* host: check the host part; the device part always (be NULL: against the
 * cap alone).  Collective. */
static int plan_check(app_ctx *ctx, app_mem_plan *p, pl_backend *be, int host)
{
    double ha = -1.0;
    if (host) { /* available per rank: the node's MemAvailable over its ranks */
        ha = host_available();
        if (ha >= 0 && ctx->local_size > 0) ha /= ctx->local_size;
        p->host_avail = ha;
        p->host_bytes += ctx->plan_extra_host; /* a second operator's extra vectors (cmd_spectral_el.c) */
    }
    device_free(p, be);
    const double da = p->device_avail;
    /* the worst rank decides, every rank reports the same line */
    /* PJDS_HOST_PLAN_LIMIT (tests): the bytes the plan may add to what the
     * process holds already, a cap beside MemAvailable */
    const double cap = host ? app_parse_bytes(getenv("PJDS_HOST_PLAN_LIMIT")) : -1.0;
    double v[5] = {host ? p->host_bytes : 0.0, p->device_bytes, ha >= 0 ? -ha : -INFINITY, da >= 0 ? -da : -INFINITY,
                   p->host_bytes - p->host_resident};
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_DOUBLE, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce of the memory plan failed");
    const int bad_cap = host && cap >= 0 && v[4] > 0.9 * cap;
    const double need_h = bad_cap ? v[4] : v[0], need_d = v[1], have_h = bad_cap ? cap : -v[2], have_d = -v[3];
    const int bad_h = bad_cap || (host && isfinite(have_h) && need_h > 0.9 * have_h);
    const int bad_d = p->gpu && isfinite(have_d) && need_d > 0.95 * have_d;
    if (host && p->gpu)
        pl_debug("memory plan: the largest rank needs %.4g MB of host and %.4g MB of GPU memory (a basis of ncv %d)",
                 need_h / 1e6, need_d / 1e6, p->ncv);
    else if (host || p->gpu)
        pl_debug("memory plan: the largest rank needs %.4g MB of %s memory (a basis of ncv %d)",
                 (host ? need_h : need_d) / 1e6, host ? "host" : "GPU", p->ncv);
    if (!bad_h && !bad_d) return PL_OK;
    char nh[32], hh[32], nd[32], hd[32], rows[32];
    fmt(need_h, nh, sizeof nh);
    fmt(have_h, hh, sizeof hh);
    fmt(need_d, nd, sizeof nd);
    fmt(have_d, hd, sizeof hd);
    snprintf(rows, sizeof rows, "%.3g", (double)p->rows_local);
    ctx->error_collective = 1;
    if (bad_h)
        return PL_ERROR(PL_ERR_INPUT,
                        "memory plan: each of the %d rank(s) needs about %s of host memory (%s rows, ~%.3g non-zeros, "
                        "ncv %d) but has %s available: reduce the model ([model] max_phonons, sites), use more ranks, "
                        "or a smaller [solver] ncv",
                        ctx->size, nh, rows, p->nnz_local, p->ncv, hh);
    return PL_ERROR(PL_ERR_INPUT,
                    "memory plan: each of the %d rank(s) needs about %s of GPU memory (%s rows, ~%.3g non-zeros, ncv %d) "
                    "but the GPU has %s free: reduce the model, use more ranks (one GPU each), a smaller [solver] ncv, "
                    "or [spmv] backend = cpu",
                    ctx->size, nd, rows, p->nnz_local, p->ncv, hd);
}

int app_mem_plan_check(app_ctx *ctx, app_mem_plan *p, pl_backend *be) { return plan_check(ctx, p, be, 1); }

int app_mem_plan_check_device(app_ctx *ctx, app_mem_plan *p, pl_backend *be)
{
    return plan_check(ctx, p, be, 0);
}

int app_mem_check_search(app_ctx *ctx, pl_backend *be, double bytes, int nb)
{
    /* what is free now (the matrix and the context are in place): the GPU's
     * free memory (capped by PJDS_DEVICE_MEMORY_LIMIT), else MemAvailable
     * over the node's ranks (capped by PJDS_HOST_MEMORY_LIMIT, for tests) */
    app_mem_plan p;
    memset(&p, 0, sizeof p);
    p.gpu = be && be->mem_info;
    double avail = -1.0;
    if (p.gpu) {
        device_free(&p, be);
        avail = p.device_avail;
    } else {
        avail = host_available();
        if (avail >= 0 && ctx->local_size > 0) avail /= ctx->local_size;
        const double cap = app_parse_bytes(getenv("PJDS_HOST_MEMORY_LIMIT"));
        if (cap >= 0) avail = avail < 0 ? cap : fmin(avail, cap);
    }
    double v[2] = {bytes, avail >= 0 ? -avail : -INFINITY};
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce of the search block's memory failed");
    const double need = v[0], have = -v[1];
    if (!isfinite(have) || need <= 0.9 * have) return PL_OK;
    char nh[32], hh[32], where[1200];
    fmt(need, nh, sizeof nh);
    fmt(have, hh, sizeof hh);
    ctx->error_collective = 1;
    return PL_ERROR(PL_ERR_INPUT,
                    "%s: the chebfd search block of %d vectors needs about %s of %s memory per rank, but %s is "
                    "available: use a narrower interval (or smaller nev), more ranks, or a smaller search_size",
                    pl_config_where(&ctx->cfg, "solver", "search_size", where, sizeof where), nb, nh,
                    p.gpu ? "GPU" : "host", hh);
}
