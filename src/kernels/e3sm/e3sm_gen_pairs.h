/* SPDX-License-Identifier: BSD-3-Clause */
/* What the generator's cases share (e3sm_gen_pairs.c): a growable list of
 * (offset, length) pairs, a layer's runs repeated at every level, and a
 * deterministic mix. */
#ifndef IOKERNELS_E3SM_GEN_PAIRS_H
#define IOKERNELS_E3SM_GEN_PAIRS_H

#include <stdint.h>

/* a growable list of (offset, length) pairs */
struct e3sm_pairs {
    int64_t n, cap;
    int64_t *off, *len;
};

/* 0, or -1 out of memory. */
int e3sm_pairs_add(struct e3sm_pairs *p, int64_t off, int64_t len);
void e3sm_pairs_free(struct e3sm_pairs *p);

/* p's pairs (in elements of a layer of n, rows of `fastest`), merged into
 * runs, appended to out at each of nlev layers (offset + l * n); p is freed.
 * 0, or -1 (out of memory, or pairs that do not merge). */
int e3sm_pairs_at_levels(struct e3sm_pairs *p, int64_t fastest, int64_t n, int64_t nlev,
                         struct e3sm_pairs *out);

/* A deterministic 64-bit mix (splitmix64). */
uint64_t e3sm_gen_mix(uint64_t x);

#endif
