/* SPDX-License-Identifier: BSD-3-Clause */
/* A decomposition file opened for reading, whatever its container: the few
 * questions the decomposition reader asks, answered by PnetCDF (NetCDF
 * classic) or HDF5 (NetCDF-4 and HDF5 files). Open and close are collective;
 * everything else is independent, so each rank reads only what it needs.
 * Only e3sm_read_*.c call an I/O library: this is input parsing, timed by the
 * core as parse time, not the measured I/O. */
#ifndef IOKERNELS_E3SM_SOURCE_H
#define IOKERNELS_E3SM_SOURCE_H

#include <stdint.h>

#include <mpi.h>

#include "iokernels/schema.h"

struct e3sm_src {
    char path[1024];
    void *h;
    /* the most integer values the file's bytes can hold (0: unknown): a
     * damaged header claiming more is refused before anything is allocated */
    int64_t max_values;
    /* 1 and *len if the 1-D variable exists, 0 if not; <0: error recorded */
    int (*var_len)(struct e3sm_src *s, const char *name, int64_t *len);
    /* reads count integers from start of a 1-D integer variable */
    int (*read)(struct e3sm_src *s, const char *name, int64_t start, int64_t count, int64_t *buf);
    /* a global integer attribute: number of values (at most max), 0 if absent */
    int (*att)(struct e3sm_src *s, const char *name, int64_t *vals, int max);
    /* reads a subarray (nd <= 2) of a variable of type t into buf, no conversion */
    int (*read_data)(struct e3sm_src *s, const char *name, int nd, const int64_t *start,
                     const int64_t *count, enum iok_type t, void *buf);
    int (*close)(struct e3sm_src *s);
};

/* Opens a NetCDF classic or HDF5 (NetCDF-4) file by its signature; other
 * kinds are refused with a message naming the file. */
int e3sm_src_open(struct e3sm_src *s, const char *path, MPI_Comm comm);

/* The formats' readers, each in a module of its own (e3sm_read_pnc,
 * e3sm_read_h5, e3sm_read_bp: loaded by e3sm_src_open, never called directly from the
 * core). Each returns an iok_status; on failure nothing is left open. */
int e3sm_src_open_pnc(struct e3sm_src *s, const char *path, MPI_Comm comm);
int e3sm_src_open_h5(struct e3sm_src *s, const char *path, MPI_Comm comm);
int e3sm_src_open_bp(struct e3sm_src *s, const char *path, MPI_Comm comm);

#endif
