/* SPDX-License-Identifier: BSD-3-Clause */
/* The Chombo benchmark's hierarchy: an ABR grid replicated (rx, ry, rz)
 * times, each level's boxes ordered (Morton, lexicographic, as read, or
 * shuffled), load-balanced by Chombo's LoadBalance and written sorted by
 * small end. Pure: no MPI, no I/O (unit-tested in tests/unit/test_abr.c). */
#ifndef IOK_CHOMBO_GRID_H
#define IOK_CHOMBO_GRID_H

#include <stdint.h>

#include "kernels/amr_common/abr.h"
#include "kernels/amr_common/amr_layout.h"

/* --ordering: the enum in the order of its choices */
#define CHOMBO_ORDERING_CHOICES "morton|lexicographic|file|random"
enum chombo_ordering { CHOMBO_MORTON, CHOMBO_LEX, CHOMBO_FILE, CHOMBO_RANDOM };

/* out = in with every box of level l copied rx*ry*rz times, copy (i,j,k)
 * shifted by (i*Dx_l, j*Dy_l, k*Dz_l) (D_l: level l's domain extent), copies
 * k outermost, then j, then i, each in the file's box order; the level-0
 * domain grows to (rx*Dx, ry*Dy, rz*Dz). IOK_OK, IOK_EUSAGE (coordinates
 * beyond 2^30) or IOK_EIO (memory). */
int chombo_replicate(const struct abr_grid *in, const int rep[3], struct abr_grid *out);

/* The order in which level `level`'s boxes are balanced. */
void chombo_order(const struct amr_boxlist *bl, enum chombo_ordering o, uint64_t seed, int level,
                  int *order);

/* The hierarchy of a (replicated) grid: per level ordered, balanced over
 * nprocs ranks, in file order (small end, i then j then k); ncomp values per
 * cell; dx of level 0 = dx0, divided by the ratios above. -1 on memory. */
int chombo_build(const struct abr_grid *g, int ncomp, double dx0, enum chombo_ordering o,
                 uint64_t seed, int nprocs, struct amr_hier *h);

#endif
