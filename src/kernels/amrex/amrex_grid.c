/* SPDX-License-Identifier: BSD-3-Clause */
/* The AMReX benchmark's hierarchy: maxSize chopping and SFC mapping. */
#include "amrex_grid.h"

#include <stdlib.h>
#include <string.h>

struct amr_box
amrex_region(int ncells, int level)
{
    struct amr_box r = {{0, 0, 0}, {ncells - 1, ncells - 1, ncells - 1}};
    for (int l = 0; l < level; l++)
        for (int d = 0; d < 3; d++) {
            int len = r.hi[d] - r.lo[d] + 1, half = len >= 2 ? len / 2 : 1;
            int start = r.lo[d] + (len - half) / 2;
            r.lo[d] = 2 * start;
            r.hi[d] = 2 * (start + half) - 1;
        }
    return r;
}

int
amrex_build(struct amr_hier *h, int ncells, int max_grid_size, int nlevs, int ncomp, int nprocs)
{
    memset(h, 0, sizeof *h);
    h->nlevels = nlevs;
    h->ncomp = ncomp;
    for (int l = 0; l < nlevs; l++) {
        struct amr_level *L = &h->lev[l];
        int n = ncells << l;
        L->domain = (struct amr_box){{0, 0, 0}, {n - 1, n - 1, n - 1}};
        L->dx = 1.0 / n;
        L->ref_ratio = l < nlevs - 1 ? 2 : 1;
        struct amr_boxlist bl;
        amr_boxlist_init(&bl);
        struct amr_box region = amrex_region(ncells, l);
        if (amr_boxlist_push(&bl, &region) || amr_max_size(&bl, max_grid_size)) {
            amr_boxlist_free(&bl);
            return -1;
        }
        int *rank = malloc((size_t)bl.n * sizeof *rank),
            *order = malloc((size_t)bl.n * sizeof *order);
        int rc = !rank || !order || amr_sfc_map(bl.b, bl.n, nprocs, rank) ? -1 : 0;
        if (rc == 0) {
            amr_order_by_rank(rank, bl.n, nprocs, order);
            rc = amr_level_set(L, bl.b, rank, order, bl.n, ncomp);
        }
        free(rank);
        free(order);
        amr_boxlist_free(&bl);
        if (rc)
            return -1;
    }
    return 0;
}
