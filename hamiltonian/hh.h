/* hh.h — the 1D Holstein-Hubbard Hamiltonian as a row generator.
 *
 * H = -t sum_{i,s} (c+_{i s} c_{i+1 s} + h.c.) + U sum_i n_iup n_idn
 *     + w0 sum_i b+_i b_i - g sum_i n_i (b+_i + b_i)
 * Conventions (../shared/DESIGN.md, "Physics conventions"): fermion order all
 * up before all down, each by site; a periodic boundary hop carries
 * (-1)^(N_s - 1); phonons truncated by total number <= M; basis electron-
 * major: row = (up_index * n_down_states + down_index) * n_phonon_states +
 * phonon_index.  Phonon basis `site` (L Einstein modes) or `normal` (the
 * L-1 non-uniform Fourier standing waves; the uniform mode is removed
 * exactly and gives the constant -g^2 N_e^2 / (L w0)).  Only true non-zeros
 * are stored; columns of a row ascending, duplicates summed.
 *
 * Knows no GPU, MPI or files. */
#ifndef HH_H
#define HH_H

#include <stdint.h>

#include "pl_config.h"
#include "pl_csr.h"

typedef struct hh_model hh_model; /* opaque */

/* Build the model (basis tables, ranking tables).  PL_ERR_INPUT if the
 * parameters are invalid or the basis is too large to index in 64 bits (the
 * message names the parameter).  Not collective. */
int hh_model_create(const pl_model_cfg *par, hh_model **model);
/* Free; accepts NULL, sets *model = NULL.  Can't fail. */
void hh_model_destroy(hh_model **model);
/* N, the number of basis states (rows). */
int64_t hh_model_rows(const hh_model *model);
/* An upper bound of the entries in any row (for per-thread buffers). */
int hh_model_max_row_len(const hh_model *model);
/* Sizes of the factors: n_up_states * n_down_states * n_phonon_states = N. */
void hh_model_dims(const hh_model *model, int64_t *n_up_states, int64_t *n_down_states, int64_t *n_phonon_states);

/* One row: writes its length into *len and the sorted columns/values into
 * col/val (room for hh_model_max_row_len entries).  Thread-safe. */
int hh_row(const hh_model *model, int64_t row, int *len, int64_t *col, double *val);

/* CSR rows [r0, r1) into a freshly allocated block *out (OpenMP-parallel,
 * two passes: lengths, then fill).  The caller owns *out (pl_csr_destroy).
 * Builds that take longer than ~2 s report progress on stderr (pl_info, at
 * most once per second).  PL_ERR_ARG for a bad range, PL_ERR_MEM; on
 * failure *out is left empty.  Not collective. */
int hh_rows_csr(const hh_model *model, int64_t r0, int64_t r1, pl_csr *out);

/* Row lengths of rows [r0, r1) without the values (OpenMP-parallel), into
 * len[r1 - r0]; used to balance row blocks by non-zeros. */
int hh_row_lengths(const hh_model *model, int64_t r0, int64_t r1, int32_t *len);

#endif
