#define _POSIX_C_SOURCE 200809L
/* test_el_dev.c — phi = c_k psi0 (c+_k psi0) on the backend
 * (app/spectral_el_dev.c, el_dev_*) against the host path
 * (hamiltonian/hh_elop.c hh_el_apply, the reference the app used alone
 * before): bit for bit, for removal and addition, both spins, every
 * momentum's cos and sin part and a site, in the site and the normal
 * basis, with H and H' matrix-free (rows in the original order) and pJDS
 * (rows permuted by a short sort window, so both reorderings run).  The
 * CPU backend always (OpenMP); PJDS_TEST_BACKEND=cuda adds the CUDA
 * backend's kernel, compared with the same host reference (label gpu).
 *
 * Also lz_recursion_fast (lanczos.h: the fused step on one rank, for a
 * matrix-free operator; pJDS takes lz_recursion's) against
 * lz_recursion on the same start vectors: alpha and beta of 24 steps to
 * 1e-11 of the norm bound (both are exact-arithmetic Lanczos; their
 * roundings differ). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_obs.h"
#include "hh_args.h"
#include "hh_mf.h"
#include "lanczos.h"
#include "pl_error.h"
#include "spmv.h"
#include "testutil.h"

static int n_cases;

/* H of model m in the given format on backend be */
static int make_op(pl_backend *be, const hh_model *m, int format, pl_op **op)
{
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    oo.format = format;
    oo.sort_window = 64; /* short windows: the pJDS rows are permuted */
    if (format == PL_FORMAT_MATRIX_FREE) {
        hh_mf *mf = NULL;
        PL_CALL(hh_mf_create(m, &mf));
        pl_kron k;
        hh_mf_kron(mf, &k);
        const int rc = pl_op_create_kron(&k, &oo, be, MPI_COMM_WORLD, op);
        hh_mf_destroy(&mf);
        return rc;
    }
    pl_csr a;
    memset(&a, 0, sizeof a);
    PL_CALL(hh_rows_csr(m, 0, hh_model_rows(m), &a));
    const int rc = pl_op_create(&a, &oo, be, MPI_COMM_WORLD, op);
    pl_csr_destroy(&a);
    return rc;
}

static double xval(int64_t g) { return sin(0.37 * (double)g + 0.1) + 0.01 * (double)(g % 7); }

/* el_dev on be against hh_el_apply, every part of every momentum and site 0 */
static void check_dev(pl_backend *be, const hh_model *m, const hh_model *m2, int L, int kind, int spin, int f1,
                      int f2, const char *d)
{
    pl_op *op = NULL, *op2 = NULL;
    el_dev *dev = NULL;
    const int64_t N = hh_model_rows(m), N2 = hh_model_rows(m2);
    double *x = malloc((size_t)N * sizeof *x), *h = malloc((size_t)(N > N2 ? N : N2) * sizeof *h);
    double *yr = malloc((size_t)N2 * sizeof *yr), *yd = malloc((size_t)N2 * sizeof *yd), *psi = NULL, *phi = NULL;
    TU_OK(make_op(be, m, f1, &op));
    TU_OK(make_op(be, m2, f2, &op2));
    if (!op || !op2 || !x || !h || !yr || !yd) goto done;
    TU_CHECK_MSG(el_dev_usable(op, op2), "%s: el_dev not usable", d);
    const int64_t *g1 = pl_op_global_index(op), *g2 = pl_op_global_index(op2);
    for (int64_t i = 0; i < N; i++) x[i] = xval(i);
    for (int64_t p = 0; p < N; p++) h[p] = x[g1[p]];
    TU_OK(be->vec_alloc(be, (size_t)N, &psi));
    TU_OK(be->vec_alloc(be, (size_t)N2, &phi));
    TU_OK(be->upload(be, psi, h, (size_t)N));
    TU_OK(el_dev_create(op, op2, m, m2, kind, spin, psi, &dev));
    if (!dev) goto done;
    for (int k = -1; k < L; k++) {
        double coef[2][HH_LATTICE_MAX_SITES];
        const int np = hh_el_coefs(m, k < 0 ? -1 : k, k < 0 ? 0 : -1, coef);
        for (int p = 0; p < np; p++) {
            TU_OK(hh_el_apply(m, m2, kind, spin, coef[p], 0, N2, x, 0, N, yr));
            TU_OK(el_dev_phi(dev, coef[p], phi));
            TU_OK(be->download(be, h, phi, (size_t)N2));
            for (int64_t q = 0; q < N2; q++) yd[g2[q]] = h[q];
            int64_t bad = 0;
            double nrm = 0.0;
            for (int64_t i = 0; i < N2; i++) {
                bad += memcmp(&yd[i], &yr[i], sizeof yd[i]) != 0;
                nrm += yr[i] * yr[i];
            }
            TU_CHECK_MSG(bad == 0, "%s (%s): k %d part %d: %lld rows differ from hh_el_apply", d, be->name, k, p,
                         (long long)bad);
            TU_CHECK_MSG(nrm > 0.0 || k >= 0, "%s: site 0 gives phi = 0", d);
            n_cases++;
        }
    }
done:
    el_dev_destroy(&dev);
    if (psi) be->vec_free(be, psi);
    if (phi) be->vec_free(be, phi);
    pl_op_destroy(&op2);
    pl_op_destroy(&op);
    free(x);
    free(h);
    free(yr);
    free(yd);
}

/* lz_recursion_fast against lz_recursion from phi = c_k psi-like vector */
static double worst_rec;
static void check_recursion(pl_backend *be, const hh_model *m, int format, const char *d)
{
    pl_op *op = NULL;
    TU_OK(make_op(be, m, format, &op));
    if (!op) return;
    /* the fused step on matrix-free operators only (lanczos.h) */
    TU_CHECK_MSG(lz_recursion_fusable(op) == (format == PL_FORMAT_MATRIX_FREE), "%s: fused step %s", d,
                 lz_recursion_fusable(op) ? "taken" : "not taken");
    const int64_t N = hh_model_rows(m);
    enum { S = 24 };
    double *h = malloc((size_t)N * sizeof *h), *phi = NULL, a0[S], b0[S], a1[S], b1[S];
    int n0 = 0, n1 = 0;
    for (int64_t i = 0; i < N; i++) h[i] = xval(3 * i + 1);
    TU_OK(be->vec_alloc(be, (size_t)N, &phi));
    TU_OK(be->upload(be, phi, h, (size_t)N));
    TU_OK(lz_recursion(op, phi, S, a0, b0, &n0, NULL));
    TU_OK(lz_recursion_fast(op, phi, S, a1, b1, &n1, NULL));
    pl_op_info info;
    pl_op_get_info(op, &info);
    TU_CHECK_MSG(n0 == n1 && n0 == S, "%s: steps %d vs %d", d, n0, n1);
    double w = 0.0;
    for (int j = 0; j < n0 && j < n1; j++) w = fmax(w, fmax(fabs(a0[j] - a1[j]), fabs(b0[j] - b1[j]) / b0[0]));
    w /= info.norm_estimate;
    TU_CHECK_MSG(w < 1e-11, "%s (%s): fused recursion differs by %.3g of the norm bound", d, be->name, w);
    if (w > worst_rec) worst_rec = w;
    be->vec_free(be, phi);
    free(h);
    pl_op_destroy(&op);
}

static void run(pl_backend *be)
{
    const int S = PL_PHONON_SITE, Nm = PL_PHONON_NORMAL, P = PL_BOUNDARY_PERIODIC;
    const hh_params ms[] = {
        hh_args_model(4, 2, 2, 1.0, 3.0, 0.7, 0.9, 3, S, P),
        hh_args_model(5, 2, 1, 1.0, 2.0, 0.5, 0.8, 2, Nm, P),
    };
    const int fm[2] = {PL_FORMAT_MATRIX_FREE, PL_FORMAT_PJDS};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        hh_model *m = NULL;
        TU_OK(hh_model_create(&ms[i], &m));
        if (!m) continue;
        for (int kind = 0; kind < 2; kind++)
            for (int spin = 0; spin < 2; spin++) {
                hh_params sp;
                hh_model *m2 = NULL;
                TU_OK(hh_el_sector(&ms[i], kind, spin, &sp));
                TU_OK(hh_model_create(&sp, &m2));
                if (!m2) continue;
                for (int f = 0; f < 4; f++) {
                    char d[300];
                    snprintf(d, sizeof d, "%s %s %s, H %s, H' %s", hh_args_describe(&ms[i]),
                             kind ? "addition" : "removal", spin ? "down" : "up", f & 1 ? "pjds" : "matrix_free",
                             f & 2 ? "pjds" : "matrix_free");
                    check_dev(be, m, m2, ms[i].sites, kind, spin, fm[f & 1], fm[(f >> 1) & 1], d);
                }
                hh_model_destroy(&m2);
            }
        check_recursion(be, m, PL_FORMAT_MATRIX_FREE, hh_args_describe(&ms[i]));
        check_recursion(be, m, PL_FORMAT_PJDS, hh_args_describe(&ms[i]));
        hh_model_destroy(&m);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    pl_log_init(0, 0);
    setenv("PJDS_LZ_FUSED", "1", 1); /* the fused step is opt-in (lz_recursion.c): test it */
    pl_backend *cpu = NULL, *gpu = NULL;
    TU_OK(pl_backend_cpu_create(&cpu));
    const char *tb = getenv("PJDS_TEST_BACKEND");
    const int want_cuda = tb && !strcmp(tb, "cuda");
    if (want_cuda && pl_cuda_device_count() < 1) {
        fprintf(stderr, "skipped: no CUDA device\n");
        pl_backend_destroy(&cpu);
        MPI_Finalize();
        return 77;
    }
    if (cpu) run(cpu);
    if (want_cuda) {
        TU_OK(pl_backend_cuda_create(0, &gpu));
        if (gpu) run(gpu);
    }
    printf("el_dev: %d phi compared bit for bit (%s), fused recursion within %.3g of the norm bound\n", n_cases,
           gpu ? "cpu and cuda" : "cpu", worst_rec);
    pl_backend_destroy(&gpu);
    pl_backend_destroy(&cpu);
    const int rc = tu_result("test_el_dev");
    MPI_Finalize();
    return rc;
}
