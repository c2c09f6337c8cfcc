/* SPDX-License-Identifier: BSD-3-Clause */
/* The box rearranger (PIO's, beyond the original E3SM-IO benchmark): a few
 * I/O ranks each own one contiguous range ("box") of every decomposed
 * array's canonical order; compute ranks send the pieces of their runs to
 * the owners with MPI_Alltoallv, the owners write few large subarrays.
 * Reads run the same way back. The mapping is computed once per
 * decomposition when the run is planned (PIO does it at initdecomp). */
#ifndef IOKERNELS_E3SM_BOX_H
#define IOKERNELS_E3SM_BOX_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "kernels/e3sm_common/e3sm_decomp.h"

struct e3sm_box {
    int *scount, *sdispl; /* per rank: elements this rank sends (its runs, in order) */
    int *rcount, *rdispl; /* per rank: elements this (I/O) rank receives */
    int64_t npieces;      /* received pieces: recv-buffer offset -> I/O buffer offset */
    int64_t *p_recv, *p_io, *p_len;
    int64_t io_elems; /* elements this rank writes */
    int64_t nsub;     /* its subarrays in the decomposed array */
    int64_t *st, *ct; /* nsub x ndims */
};

/* The I/O ranks: every `stride`-th rank, or `nio` evenly spread, or with
 * both 0 the lowest rank of each node. Rank 0 is always one. Returns how
 * many; io[] (nprocs long) gets their ranks. */
int e3sm_box_io_ranks(MPI_Comm comm, int stride, int nio, int *io);

/* Builds the mapping of decomposition d (this rank's runs) onto the boxes
 * of the I/O ranks io[0..nio). Collective. Returns an iok_status. */
int e3sm_box_setup(const struct e3sm_decomp *d, MPI_Comm comm, const int *io, int nio,
                   struct e3sm_box *b);
void e3sm_box_free(struct e3sm_box *b);

/* Splits the linear range [a, b) of an array of dims[0..nd) (row-major)
 * into at most 2*nd - 1 subarrays in increasing order; returns how many
 * were written to st/ct (nd values each). */
int e3sm_range_boxes(int64_t a, int64_t b, const int64_t *dims, int nd, int64_t *st, int64_t *ct);

#endif
