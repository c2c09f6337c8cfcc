/* SPDX-License-Identifier: BSD-3-Clause */
/* The generator's shared helpers (e3sm_gen_pairs.h). */
#include "e3sm_gen_pairs.h"

#include <stdlib.h>
#include <string.h>

uint64_t
e3sm_gen_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int
e3sm_pairs_add(struct e3sm_pairs *p, int64_t off, int64_t len)
{
    if (p->n == p->cap) {
        int64_t cap = p->cap ? 2 * p->cap : 256;
        int64_t *o = realloc(p->off, (size_t)cap * sizeof *o);
        if (!o)
            return -1;
        p->off = o;
        int64_t *l = realloc(p->len, (size_t)cap * sizeof *l);
        if (!l)
            return -1;
        p->len = l;
        p->cap = cap;
    }
    p->off[p->n] = off;
    p->len[p->n++] = len;
    return 0;
}

void
e3sm_pairs_free(struct e3sm_pairs *p)
{
    free(p->off);
    free(p->len);
    memset(p, 0, sizeof *p);
}
