/* SPDX-License-Identifier: BSD-3-Clause */
/* A generated decomposition as the contents of a map file (what e3sm-decomp
 * writes from .dat files): all decomposition ranks' merged runs, and their
 * elements before merging (Dn.raw_offsets, 1-based as PIO). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e3sm_dat.h"
#include "e3sm_gen.h"

int
e3sm_gen_dat(const struct e3sm_gen *g, int d, int want_raw, struct e3sm_dat *out, char *err,
             size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->nprocs = g->procs;
    out->ndims = g->ndims[d];
    out->total = 1;
    for (int k = 0; k < out->ndims; k++) {
        out->dims[k] = g->dims[d][k];
        out->total *= out->dims[k];
    }
    if (out->total > INT32_MAX) {
        snprintf(err, errlen,
                 "D%d has %lld elements: a map file's offsets are 32-bit integers (run with "
                 "--generate directly instead of writing a map)",
                 d + 1, (long long)out->total);
        return -1;
    }
    out->nreqs = calloc((size_t)g->procs, sizeof *out->nreqs);
    out->raw_nreqs = calloc((size_t)g->procs, sizeof *out->raw_nreqs);
    struct e3sm_runs all = {0};
    int64_t covered = 0;
    int rc = out->nreqs && out->raw_nreqs ? 0 : -1;
    out->min_nreqs = INT64_MAX;
    out->min_len = INT64_MAX;
    for (int64_t r = 0; !rc && r < g->procs; r++) {
        struct e3sm_runs runs;
        if (e3sm_gen_runs(g, d, r, 1, &runs, NULL, err, errlen)) {
            e3sm_runs_free(&all);
            return -1;
        }
        out->nreqs[r] = runs.n;
        out->raw_nreqs[r] = want_raw ? runs.nelems : 0;
        covered += runs.nelems;
        for (int64_t j = 0; !rc && j < runs.n; j++) {
            rc = e3sm_runs_add(&all, runs.off[j], runs.len[j]);
            if (runs.len[j] > out->max_len)
                out->max_len = runs.len[j];
            if (runs.len[j] < out->min_len)
                out->min_len = runs.len[j];
        }
        if (runs.n > out->max_nreqs)
            out->max_nreqs = runs.n;
        if (runs.n < out->min_nreqs)
            out->min_nreqs = runs.n;
        e3sm_runs_free(&runs);
    }
    if (rc || all.n > INT32_MAX) {
        snprintf(err, errlen, "D%d: %lld requests: too many for a map file (or out of memory)",
                 d + 1, (long long)all.n);
        e3sm_runs_free(&all);
        return -1;
    }
    out->npairs = all.n;
    out->off = all.off;
    out->len = all.len;
    out->fully_covered = covered == out->total;
    out->nraw = want_raw ? covered : 0;
    out->raw = malloc((size_t)(out->nraw ? out->nraw : 1) * sizeof *out->raw);
    if (!out->raw) {
        snprintf(err, errlen, "D%d: out of memory for %lld offsets", d + 1, (long long)out->nraw);
        return -1;
    }
    for (int64_t j = 0, n = 0; want_raw && j < all.n; j++)
        for (int64_t k = 0; k < all.len[j]; k++)
            out->raw[n++] = all.off[j] + k + 1;
    return 0;
}
