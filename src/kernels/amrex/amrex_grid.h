/* SPDX-License-Identifier: BSD-3-Clause */
/* The AMReX benchmark's boxes and ranks: the domain chopped by maxSize and
 * mapped by the SFC strategy, as AMReX did in 2019; finer levels (beyond the
 * original) refine the middle half of the level below by 2. Pure: no MPI,
 * no I/O (unit-tested in tests/unit/test_amr_box.c). */
#ifndef IOK_AMREX_GRID_H
#define IOK_AMREX_GRID_H

#include "kernels/amr_common/amr_layout.h"

#define AMREX_MAX_LEVELS 3

/* Region of level l in its own index space: level 0 is the whole domain
 * [0, ncells-1]^3; level l+1 is the middle half of level l's region (its
 * len/2 cells, at least one, centred), refined by 2. */
struct amr_box amrex_region(int ncells, int level);

/* Builds levels 0..nlevs-1 for nprocs ranks: boxes in file order (grouped by
 * rank, ascending, BoxArray order within a rank), ncomp values per cell.
 * -1 on allocation failure. */
int amrex_build(struct amr_hier *h, int ncells, int max_grid_size, int nlevs, int ncomp,
                int nprocs);

#endif
