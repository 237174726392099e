/* app_provenance.c — what a result file says about itself beyond the
 * numbers (docs/formats.md, "Self-description"): the unit of its energies
 * and its provenance (pl_describe.h).  Rank 0, the writer. */
#include "app.h"

#include "pl_spectrum.h"

int app_describe_output(const app_ctx *ctx, pl_spectrum *sp, int scales)
{
    const pl_config *cfg = &ctx->cfg;
    /* a generated Holstein-Hubbard model is in units of the hopping t; other
     * operators in the units of their entries */
    pl_spectrum_set_units(sp, cfg->model.type == PL_MODEL_HOLSTEIN_HUBBARD ? "t" : "matrix units", scales);
    return pl_spectrum_provenance(sp, ctx->cfg_path, cfg->model.type == PL_MODEL_HDF5 ? cfg->matrix.file : NULL);
}
