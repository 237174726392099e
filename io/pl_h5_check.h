/* pl_h5_check.h — the io layer's checked-call macros for HDF5 (internal to
 * io/): H5W for writes and library calls (a negative result is
 * PL_ERR_HDF5), H5R for reading what a user's file holds (PL_ERR_INPUT).
 * Both set the message and jump to the caller's `out:` label with `rc`
 * set; the caller declares `int rc`. */
#ifndef PL_H5_CHECK_H
#define PL_H5_CHECK_H

#include <stdint.h>

#include "pl_error.h"

#define H5W(call, ...)                                                                                   \
    do {                                                                                                 \
        if ((int64_t)(call) < 0) {                                                                       \
            rc = pl_error_set(PL_ERR_HDF5, __FILE__, __LINE__, __func__, __VA_ARGS__);                   \
            goto out;                                                                                    \
        }                                                                                                \
    } while (0)
#define H5R(call, ...)                                                                                   \
    do {                                                                                                 \
        if ((int64_t)(call) < 0) {                                                                       \
            rc = pl_error_set(PL_ERR_INPUT, __FILE__, __LINE__, __func__, __VA_ARGS__);                  \
            goto out;                                                                                    \
        }                                                                                                \
    } while (0)

#endif
