/* SPDX-License-Identifier: BSD-3-Clause */
/* Replication, ordering and load balance of the Chombo benchmark's boxes. */
#include "chombo_grid.h"

#include <stdlib.h>
#include <string.h>

#include "iokernels/data.h"
#include "iokernels/error.h"

int
chombo_replicate(const struct abr_grid *in, const int rep[3], struct abr_grid *out)
{
    abr_init(out);
    out->nlevels = in->nlevels;
    out->nprocs = in->nprocs;
    memcpy(out->ratio, in->ratio, sizeof out->ratio);
    out->domain0 = in->domain0;
    for (int d = 0; d < 3; d++) {
        if (rep[d] < 1)
            return iok_error(IOK_EUSAGE, "replication factors must be positive, got %d,%d,%d",
                             rep[0], rep[1], rep[2]);
    }
    for (int l = 0; l < in->nlevels; l++) {
        struct amr_box dom = abr_level_domain(in, l);
        for (int d = 0; d < 3; d++)
            if (dom.lo[d] + (int64_t)amr_box_len(&dom, d) * rep[d] >= (1 << 30))
                return iok_error(IOK_EUSAGE,
                                 "replication %d,%d,%d is too large for level %d's coordinates",
                                 rep[0], rep[1], rep[2], l);
    }
    for (int d = 0; d < 3; d++)
        out->domain0.hi[d] = out->domain0.lo[d] + amr_box_len(&in->domain0, d) * rep[d] - 1;
    for (int l = 0; l < in->nlevels; l++) {
        struct amr_box dom = abr_level_domain(in, l);
        const struct amr_boxlist *src = &in->boxes[l];
        for (int k = 0; k < rep[2]; k++)
            for (int j = 0; j < rep[1]; j++)
                for (int i = 0; i < rep[0]; i++) {
                    int shift[3] = {i * amr_box_len(&dom, 0), j * amr_box_len(&dom, 1),
                                    k * amr_box_len(&dom, 2)};
                    for (int b = 0; b < src->n; b++) {
                        struct amr_box x = src->b[b];
                        for (int d = 0; d < 3; d++) {
                            x.lo[d] += shift[d];
                            x.hi[d] += shift[d];
                        }
                        if (amr_boxlist_push(&out->boxes[l], &x))
                            return iok_error(IOK_EIO, "out of memory replicating the grid");
                    }
                }
    }
    return IOK_OK;
}

void
chombo_order(const struct amr_boxlist *bl, enum chombo_ordering o, uint64_t seed, int level,
             int *order)
{
    int n = bl->n;
    switch (o) {
    case CHOMBO_MORTON:
        amr_sort(bl->b, n, amr_morton_less, order);
        return;
    case CHOMBO_LEX:
        amr_sort(bl->b, n, amr_lex_less, order);
        return;
    case CHOMBO_FILE:
    case CHOMBO_RANDOM:
        for (int i = 0; i < n; i++)
            order[i] = i;
        break;
    }
    if (o != CHOMBO_RANDOM)
        return;
    uint64_t state = seed * 0x100000001b3ull + (uint64_t)level; /* Fisher-Yates */
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(iok_rand_next(&state) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

int
chombo_build(const struct abr_grid *g, int ncomp, double dx0, enum chombo_ordering o, uint64_t seed,
             int nprocs, struct amr_hier *h)
{
    memset(h, 0, sizeof *h);
    h->nlevels = g->nlevels;
    h->ncomp = ncomp;
    double dx = dx0;
    for (int l = 0; l < g->nlevels; l++) {
        struct amr_level *L = &h->lev[l];
        const struct amr_boxlist *bl = &g->boxes[l];
        L->domain = abr_level_domain(g, l);
        L->dx = dx;
        L->ref_ratio = l < g->nlevels - 1 ? g->ratio[l] : 1;
        dx /= L->ref_ratio;
        size_t n = (size_t)(bl->n ? bl->n : 1);
        int *order = malloc(n * sizeof *order), *rank = malloc(n * sizeof *rank);
        int *file = malloc(n * sizeof *file), rc = -1;
        if (order && rank && file) {
            chombo_order(bl, o, seed, l, order);
            amr_chombo_balance(bl->b, bl->n, order, nprocs, rank);
            amr_sort(bl->b, bl->n, amr_lex_less, file);
            rc = amr_level_set(L, bl->b, rank, file, bl->n, ncomp);
        }
        free(order);
        free(rank);
        free(file);
        if (rc)
            return -1;
    }
    return 0;
}
