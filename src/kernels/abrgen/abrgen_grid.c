/* SPDX-License-Identifier: BSD-3-Clause */
/* The generated grid: level 0 in max_box pieces, finer levels covering a
 * spherical shell with blocks of the blocking factor, grown greedily into
 * boxes of at most max_box cells per side. */
#include "abrgen_grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

int
abrgen_check(const struct abrgen_params *p)
{
    /* --domain, --levels, --ratio: ranges of the table (abrgen.c), enforced
     * as they are parsed; the rest ties options together */
    if (p->min_box < 1 || p->min_box % p->ratio)
        return iok_error(IOK_EUSAGE, "--min-box must be a positive multiple of --ratio %d, not %d",
                         p->ratio, p->min_box);
    if (p->max_box < p->min_box || p->max_box % p->min_box)
        return iok_error(IOK_EUSAGE, "--max-box must be a multiple of --min-box %d, not %d",
                         p->min_box, p->max_box);
    if (p->levels > 1 && p->domain % (p->min_box / p->ratio))
        return iok_error(IOK_EUSAGE, "--domain %d must be a multiple of --min-box / --ratio = %d",
                         p->domain, p->min_box / p->ratio);
    if (!(p->radius > 0 && p->radius <= 0.5) || !(p->width > 0))
        return iok_error(IOK_EUSAGE, "--radius must be in (0, 0.5] and --width positive");
    return IOK_OK;
}

/* Level 0: the domain in pieces of max_box from the low end. */
static int
level0(const struct abrgen_params *p, struct amr_boxlist *bl)
{
    int n = (p->domain + p->max_box - 1) / p->max_box;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                int c[3] = {i, j, k};
                struct amr_box b;
                for (int d = 0; d < 3; d++) {
                    b.lo[d] = c[d] * p->max_box;
                    b.hi[d] = b.lo[d] + p->max_box - 1 < p->domain - 1 ? b.lo[d] + p->max_box - 1
                                                                       : p->domain - 1;
                }
                if (amr_boxlist_push(bl, &b))
                    return -1;
            }
    return 0;
}

/* Does the shell band [R - W/2, R + W/2] (in units of the coarse level's
 * cells, centre c) meet the cell centres of coarse cells [lo, hi]? */
static int
block_in_shell(const int *lo, const int *hi, double c, double R, double W)
{
    double dmin = 0, dmax = 0;
    for (int d = 0; d < 3; d++) {
        double a = lo[d] + 0.5 - c, b = hi[d] + 0.5 - c;
        double near = a > 0 ? a : b < 0 ? -b : 0, far = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
        dmin += near * near;
        dmax += far * far;
    }
    dmin = sqrt(dmin);
    dmax = sqrt(dmax);
    return dmin <= R + W / 2 && dmax >= R - W / 2;
}

/* Level l from level l-1 (coarse side `side` cells): blocks of bc coarse
 * cells tagged where they meet the shell and lie inside the coarse boxes. */
static int
refine(const struct abrgen_params *p, const struct amr_boxlist *coarse, int side,
       struct amr_boxlist *fine)
{
    int bc = p->min_box / p->ratio, nb = side / bc, maxb = p->max_box / p->min_box;
    size_t nblocks = (size_t)nb * nb * nb;
    unsigned char *tag = calloc(nblocks, 1), *inside = calloc(nblocks, 1);
    if (!tag || !inside) {
        free(tag);
        free(inside);
        return -1;
    }
#define AT(i, j, k) (((size_t)(k)*nb + (j)) * nb + (i))
    for (int b = 0; b < coarse->n; b++) { /* coarse boxes are unions of blocks */
        const struct amr_box *x = &coarse->b[b];
        for (int k = x->lo[2] / bc; k <= x->hi[2] / bc; k++)
            for (int j = x->lo[1] / bc; j <= x->hi[1] / bc; j++)
                for (int i = x->lo[0] / bc; i <= x->hi[0] / bc; i++)
                    inside[AT(i, j, k)] = 1;
    }
    double c = side / 2.0, R = p->radius * side, W = p->width;
    for (int k = 0; k < nb; k++)
        for (int j = 0; j < nb; j++)
            for (int i = 0; i < nb; i++) {
                int lo[3] = {i * bc, j * bc, k * bc},
                    hi[3] = {lo[0] + bc - 1, lo[1] + bc - 1, lo[2] + bc - 1};
                tag[AT(i, j, k)] = inside[AT(i, j, k)] && block_in_shell(lo, hi, c, R, W);
            }
    int rc = 0;
    for (int k = 0; k < nb && !rc; k++)
        for (int j = 0; j < nb && !rc; j++)
            for (int i = 0; i < nb && !rc; i++) {
                if (!tag[AT(i, j, k)])
                    continue;
                /* grow along x, then y, then z while every block is tagged */
                int n[3] = {1, 1, 1}, ok = 1;
                while (i + n[0] < nb && n[0] < maxb && tag[AT(i + n[0], j, k)])
                    n[0]++;
                while (ok && j + n[1] < nb && n[1] < maxb) {
                    for (int a = 0; a < n[0] && ok; a++)
                        ok = tag[AT(i + a, j + n[1], k)];
                    n[1] += ok;
                }
                ok = 1;
                while (ok && k + n[2] < nb && n[2] < maxb) {
                    for (int b = 0; b < n[1] && ok; b++)
                        for (int a = 0; a < n[0] && ok; a++)
                            ok = tag[AT(i + a, j + b, k + n[2])];
                    n[2] += ok;
                }
                for (int z = 0; z < n[2]; z++)
                    for (int y = 0; y < n[1]; y++)
                        for (int x = 0; x < n[0]; x++)
                            tag[AT(i + x, j + y, k + z)] = 0;
                struct amr_box box = {{i * p->min_box, j * p->min_box, k * p->min_box},
                                      {(i + n[0]) * p->min_box - 1, (j + n[1]) * p->min_box - 1,
                                       (k + n[2]) * p->min_box - 1}};
                rc = amr_boxlist_push(fine, &box);
            }
#undef AT
    free(tag);
    free(inside);
    return rc;
}

int
abrgen_make(const struct abrgen_params *p, struct abr_grid *g)
{
    abr_init(g);
    g->nlevels = p->levels;
    g->nprocs = 1;
    g->domain0 = (struct amr_box){{0, 0, 0}, {p->domain - 1, p->domain - 1, p->domain - 1}};
    if (level0(p, &g->boxes[0]))
        return iok_error(IOK_EIO, "out of memory generating the grid");
    int side = p->domain;
    for (int l = 1; l < p->levels; l++) {
        g->ratio[l - 1] = p->ratio;
        if (refine(p, &g->boxes[l - 1], side, &g->boxes[l]))
            return iok_error(IOK_EIO, "out of memory generating the grid");
        side *= p->ratio;
        if (g->boxes[l].n == 0)
            return iok_error(IOK_EUSAGE,
                             "level %d has no boxes: the shell (--radius %g, --width %g) tags "
                             "no cell; widen it",
                             l, p->radius, p->width);
    }
    return IOK_OK;
}
