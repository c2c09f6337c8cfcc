/* SPDX-License-Identifier: BSD-3-Clause */
/* A generated decomposition at scale without its ranks: one process walks
 * every decomposition rank, merges its runs as E3SM-IO does, and sums what
 * each rank would write to each history file. */
#ifndef IOKERNELS_E3SM_GEN_STATS_H
#define IOKERNELS_E3SM_GEN_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "e3sm_gen.h"

struct e3sm_mmm {
    int64_t min, med, max, total;
};

struct e3sm_gen_fstat {
    const char *name; /* "h0", "h1", "hist" */
    int nvars;
    double size_bytes;           /* the variables' data, all records */
    double write_bytes;          /* what all ranks write (E3SM-IO's total write amount) */
    struct e3sm_mmm reqs, bytes; /* per rank, all records */
    int64_t e3smio_max_reqs;     /* one record of the decomposed record variables, max rank */
};

struct e3sm_gen_stats {
    char spec[256];
    const char *casename;
    int64_t procs;
    int ndecomp, nrecs, nfiles;
    int ndims[E3SM_MAX_DECOMP];
    int64_t dims[E3SM_MAX_DECOMP][E3SM_MAX_DDIMS];
    struct e3sm_mmm runs[E3SM_MAX_DECOMP], elems[E3SM_MAX_DECOMP];
    struct e3sm_gen_fstat f[2];
    double setup_seconds, walk_seconds, peak_mib;
};

/* cdl_dir: the directory of the history files' CDL headers and
 * variables.tsv. iok_status (usage errors for bad parameters). */
int e3sm_gen_stats(const char *spec, int nrecs, const char *cdl_dir, struct e3sm_gen_stats *out);
void e3sm_gen_stats_print(const struct e3sm_gen_stats *s, FILE *out);

#endif
