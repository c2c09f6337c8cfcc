/* SPDX-License-Identifier: BSD-3-Clause */
/* What the generator's cases share (e3sm_gen_pairs.c): a layer's runs
 * repeated at every level, and a deterministic mix. Their pairs are
 * collected in a struct e3sm_runs (e3sm_runs_add). */
#ifndef IOKERNELS_E3SM_GEN_PAIRS_H
#define IOKERNELS_E3SM_GEN_PAIRS_H

#include <stdint.h>

#include "e3sm_decomp.h"

/* p's pairs (in elements of a layer of n, rows of `fastest`), merged into
 * runs, appended to out at each of nlev layers (offset + l * n); p is freed.
 * 0, or -1 (out of memory, or pairs that do not merge). */
int e3sm_runs_at_levels(struct e3sm_runs *p, int64_t fastest, int64_t n, int64_t nlev,
                        struct e3sm_runs *out);

/* A deterministic 64-bit mix (splitmix64). */
uint64_t e3sm_gen_mix(uint64_t x);

#endif
