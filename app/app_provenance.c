/* app_provenance.c — what a result file says about itself beyond the
 * numbers (docs/formats.md, "Self-description"): the unit of its energies
 * and its provenance (pl_describe.h), with the imported matrix file's
 * checksum computed in a thread beside the solve.  Rank 0, the writer. */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "pl_describe.h"
#include "pl_error.h"
#include "pl_spectrum.h"

int app_matrix_sum_start(app_ctx *ctx, const char *path)
{
    /* only where a result file will record it, and on rank 0 alone: a
     * failure here is not an error of the run (the result then has no
     * checksum), so no rank can fail where the others go on */
    const char *c = ctx->cmd_name ? ctx->cmd_name : "";
    if (ctx->rank != 0 || ctx->msum || (strcmp(c, "solve") && strcmp(c, "spectral") && strcmp(c, "dos"))) return PL_OK;
    ctx->msum = calloc(1, sizeof *ctx->msum);
    if (ctx->msum && pl_file_sum_start(ctx->msum, path) == PL_OK) return PL_OK;
    pl_warn("%s: no checksum for the result's provenance (%s)", path, ctx->msum ? pl_error_message() : "out of memory");
    pl_error_clear();
    free(ctx->msum);
    ctx->msum = NULL;
    return PL_OK;
}

void app_sums_end(app_ctx *ctx)
{
    if (!ctx->msum) return;
    (void)pl_file_sum_finish(ctx->msum); /* (joined: nothing left running) */
    free(ctx->msum);
    ctx->msum = NULL;
}

int app_describe_output(const app_ctx *ctx, pl_spectrum *sp, int scales)
{
    const pl_config *cfg = &ctx->cfg;
    /* a generated Holstein-Hubbard model is in units of the hopping t; other
     * operators in the units of their entries */
    pl_spectrum_set_units(sp, cfg->model.type == PL_MODEL_HOLSTEIN_HUBBARD ? "t" : "matrix units", scales);
    if (ctx->msum) PL_CALL(pl_file_sum_finish(ctx->msum)); /* usually done long before the write */
    return pl_spectrum_provenance(sp, ctx->cfg_path, ctx->msum);
}
