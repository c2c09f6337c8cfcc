/* SPDX-License-Identifier: BSD-3-Clause */
/* The NAS BT block-tridiagonal decomposition: P = q*q ranks, each owning q
 * cells, one per z-slab. Pure arithmetic, unit-tested on its own. */
#ifndef IOKERNELS_BTIO_DECOMP_H
#define IOKERNELS_BTIO_DECOMP_H

#include <stdint.h>

struct btio_cell {
    int64_t lo[3];   /* first grid point per axis (x, y, z) */
    int64_t size[3]; /* grid points per axis */
};

/* q with q*q == nprocs, or 0 when nprocs is not a perfect square. */
int btio_ncells(int nprocs);

/* Cell c (0 <= c < q) of rank r on a grid of `grid` points (x, y, z). */
void btio_cell(int rank, int q, int c, const int grid[3], struct btio_cell *out);

/* Smallest cell extent over all axes: NAS BT needs at least 3 points. */
int64_t btio_min_cell_points(int q, const int grid[3]);

#endif
