/* pl_h5m_impl.h — internals shared by the HDF5 matrix reader and writer
 * (pl_h5m_util.c: HDF5 probing, messages, MPI agreement and routing;
 * pl_h5matrix.c: the pjds schema and the scans; pl_h5layout.c: foreign
 * layouts; pl_h5mwrite.c: symmetry check and export).  Not a public API. */
#ifndef PL_H5M_IMPL_H
#define PL_H5M_IMPL_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "pl_h5matrix.h"

/* entries per round of the streamed scans and exchanges (test hook:
 * pl_h5m_set_block_entries) */
extern int64_t h5m_g_block;

/* ---- HDF5 error printing off/on ---- */
typedef struct h5m_quiet {
    H5E_auto2_t fn;
    void *data;
    int saved;
} h5m_quiet;
void h5m_quiet_on(h5m_quiet *q);
void h5m_quiet_off(h5m_quiet *q);

/* How the stored arrays map to the matrix. */
enum {
    H5M_KIND_CSR = 0, /* pointer over rows: rows of the matrix (pjds full, SciPy/anndata/h5sparse CSR) */
    H5M_KIND_LOWER,   /* pointer over rows, lower triangle of a symmetric matrix (pjds lower) */
    H5M_KIND_CSC,     /* pointer over columns (MATLAB/PETSc jc/ir/data, SciPy CSC) */
    H5M_KIND_COO      /* (row, col, val) triples */
};

/* ---- an open matrix group ---- */
typedef struct h5m_file {
    const char *fname, *gname;
    hid_t f, g;
    hid_t d_rp, d_ci, d_val;        /* pointer (COO: row), index (COO: col), values */
    const char *n_rp, *n_ci, *n_val; /* their names in the file, for messages */
    int kind;                        /* H5M_KIND_* */
    int base;                        /* COO: 0- or 1-based indices in the file */
    pl_h5m_opts opts;                /* what the caller asked for */
    pl_h5m_info info;
} h5m_file;

void h5m_init(h5m_file *h, const char *file, const char *group, const pl_h5m_opts *opts);
void h5m_close(h5m_file *h);

/* Record "matrix file 'F' group 'G': <what>" as PL_ERR_INPUT. */
int h5m_bad_at(const h5m_file *h, int line, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define H5M_BAD(h, ...) h5m_bad_at((h), __LINE__, __func__, __VA_ARGS__)

/* attributes of the group h->g */
int h5m_attr_exists(h5m_file *h, const char *name, int *present);
int h5m_attr_i64(h5m_file *h, const char *name, int required, int64_t *v, int *present);
int h5m_attr_str(h5m_file *h, const char *name, int required, char *buf, size_t cap, int *present);
/* an integer attribute of 1..cap elements (e.g. shape); *n = its count */
int h5m_attr_i64_array(h5m_file *h, const char *name, int64_t *v, int cap, int *n, int *present);

/* datasets: open with class, rank 1 and length (want_len < 0: any length,
 * returned in *len when len != NULL) checked; read a range */
int h5m_dset_open(h5m_file *h, const char *name, H5T_class_t want, const char *want_text, int64_t want_len,
                  const char *len_text, hid_t *d, int *bytes);
int h5m_dset_len(h5m_file *h, hid_t d, const char *name, int64_t *len);
int h5m_dset_read(h5m_file *h, hid_t d, const char *name, hid_t memtype, int64_t off, int64_t n, void *buf);

/* ---- MPI ---- */
int h5m_agree(int rc, MPI_Comm comm);

typedef struct h5m_owners {
    int n; /* nonempty ranges */
    int64_t *r0, *r1;
    int *rank;
    int cover;  /* the ranges tile [0, N) exactly */
    int64_t lo; /* first requested row (N if none) */
} h5m_owners;
void h5m_owners_free(h5m_owners *o);
int h5m_owners_build(int64_t r0, int64_t r1, int64_t N, MPI_Comm comm, h5m_owners *o);
int h5m_owner_of(const h5m_owners *o, int64_t r);

typedef struct h5m_item {
    int64_t r, c; /* row, column (or count in counting mode) */
    double v;
} h5m_item;
int h5m_route(int rc, const h5m_item *sbuf, const int *scnt, const int *sdsp, int *rcnt, int *rdsp, h5m_item **rbuf,
              int64_t *nrecv, MPI_Datatype itype, MPI_Comm comm);

/* ---- layouts (pl_h5layout.c) ---- */
/* After the file and group are open: find the layout (h->opts.layout or
 * detection), open its datasets and fill h->info (rows, cols, nnz_stored,
 * symmetric, lower, layout). */
int h5m_open_layout(h5m_file *h);
/* The pjds schema's metadata (pl_h5matrix.c). */
int h5m_open_pjds(h5m_file *h);
/* A file that is not HDF5: what it looks like and how to convert it. */
int h5m_not_hdf5(h5m_file *h);
/* COO: one streamed scan of the entries (see pl_h5layout.c).  mode 0
 * counts (len64[r - r0] += 1), mode 1 places entries at pos[r - r0]++. */
int h5m_scan_coo(h5m_file *h, int64_t r0, int64_t r1, int mode, MPI_Comm comm, int64_t *len64, pl_csr *out,
                 int64_t *pos);

#endif
