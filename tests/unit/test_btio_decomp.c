/* SPDX-License-Identifier: BSD-3-Clause */
/* The BT cells of all ranks tile the grid exactly once, for square process
 * counts and grids that do and do not divide evenly. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/btio/btio_decomp.h"

static void
tile_check(int nprocs, const int grid[3])
{
    int q = btio_ncells(nprocs);
    CHECK(q * q == nprocs, "P=%d gives q=%d", nprocs, q);
    size_t n = (size_t)grid[0] * grid[1] * grid[2];
    unsigned char *hits = calloc(n, 1);
    for (int r = 0; r < nprocs; r++) {
        int zs_seen = 0;
        for (int c = 0; c < q; c++) {
            struct btio_cell cell;
            btio_cell(r, q, c, grid, &cell);
            /* one cell per z-slab: cell c sits in slab c */
            zs_seen |= 1 << c;
            for (int64_t z = cell.lo[2]; z < cell.lo[2] + cell.size[2]; z++)
                for (int64_t y = cell.lo[1]; y < cell.lo[1] + cell.size[1]; y++)
                    for (int64_t x = cell.lo[0]; x < cell.lo[0] + cell.size[0]; x++)
                        hits[(z * grid[1] + y) * grid[0] + x]++;
        }
        CHECK(zs_seen == (1 << q) - 1, "rank %d does not own one cell per slab", r);
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hits[i] != 1;
    CHECK(bad == 0, "P=%d grid %dx%dx%d: %zu points covered != once", nprocs, grid[0], grid[1],
          grid[2], bad);
    free(hits);
}

int
main(void)
{
    const int grids[][3] = {{16, 16, 16}, {17, 19, 23}, {30, 31, 32}, {64, 48, 40}};
    const int procs[] = {1, 4, 9, 16, 25};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++)
        for (size_t p = 0; p < sizeof procs / sizeof procs[0]; p++)
            tile_check(procs[p], grids[g]);
    CHECK(btio_ncells(6) == 0, "6 is not square");
    CHECK(btio_ncells(2) == 0, "2 is not square");

    /* NAS BT's rule: cell c of rank r at ((r%q + c)%q, (r/q - c)%q, c) */
    int grid[3] = {10, 10, 10};
    struct btio_cell cell;
    btio_cell(6, 3, 1, grid, &cell); /* rank 6 = (0,2): cell 1 at (1, 1, 1) */
    CHECK(cell.lo[0] == 4 && cell.lo[1] == 4 && cell.lo[2] == 4, "lo %lld %lld %lld",
          (long long)cell.lo[0], (long long)cell.lo[1], (long long)cell.lo[2]);
    CHECK(cell.size[0] == 3 && cell.size[1] == 3 && cell.size[2] == 3, "sizes");
    btio_cell(6, 3, 0, grid, &cell); /* cell 0 at (0, 2, 0): first axis piece is 4 long */
    CHECK(cell.lo[0] == 0 && cell.size[0] == 4 && cell.lo[1] == 7 && cell.size[1] == 3,
          "cell 0 of rank 6");
    CHECK(btio_min_cell_points(5, (int[3]){16, 16, 14}) == 2, "14/5 -> 2");
    return check_summary("test_btio_decomp");
}
