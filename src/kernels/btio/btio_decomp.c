/* SPDX-License-Identifier: BSD-3-Clause */
/* NAS BT cell decomposition (see btio_decomp.h). */
#include "btio_decomp.h"

int
btio_ncells(int nprocs)
{
    for (int q = 1; q * q <= nprocs; q++)
        if (q * q == nprocs)
            return q;
    return 0;
}

/* Axis with n points cut in q pieces: the first n % q are one point longer. */
static void
axis_piece(int64_t n, int q, int coord, int64_t *lo, int64_t *size)
{
    int64_t s = n / q, e = n % q;
    if (coord < e) {
        *size = s + 1;
        *lo = coord * (s + 1);
    } else {
        *size = s;
        *lo = e * (s + 1) + (coord - e) * s;
    }
}

static int
mod(int a, int q)
{
    return ((a % q) + q) % q;
}

void
btio_cell(int rank, int q, int c, const int grid[3], struct btio_cell *out)
{
    int coord[3] = {mod(rank % q + c, q), mod(rank / q - c, q), c};
    for (int k = 0; k < 3; k++)
        axis_piece(grid[k], q, coord[k], &out->lo[k], &out->size[k]);
}

int64_t
btio_min_cell_points(int q, const int grid[3])
{
    int64_t m = INT64_MAX;
    for (int k = 0; k < 3; k++)
        if (grid[k] / q < m)
            m = grid[k] / q;
    return m;
}
