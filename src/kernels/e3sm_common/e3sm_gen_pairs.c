/* SPDX-License-Identifier: BSD-3-Clause */
/* The generator's shared helpers (e3sm_gen_pairs.h). */
#include "e3sm_gen_pairs.h"

uint64_t
e3sm_gen_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int
e3sm_runs_at_levels(struct e3sm_runs *p, int64_t fastest, int64_t n, int64_t nlev,
                    struct e3sm_runs *out)
{
    struct e3sm_runs runs = {0};
    char why[128];
    int rc = e3sm_runs_build(p->off, p->len, p->n, fastest, n, &runs, why, sizeof why);
    e3sm_runs_free(p);
    for (int64_t l = 0; !rc && l < nlev; l++)
        for (int64_t j = 0; !rc && j < runs.n; j++)
            rc = e3sm_runs_add(out, l * n + runs.off[j], runs.len[j]);
    e3sm_runs_free(&runs);
    return rc;
}
