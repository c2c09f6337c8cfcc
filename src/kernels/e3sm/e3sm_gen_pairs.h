/* SPDX-License-Identifier: BSD-3-Clause */
/* What the generator's cases share (e3sm_gen_pairs.c): a growable list of
 * (offset, length) pairs and a deterministic mix. */
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

/* A deterministic 64-bit mix (splitmix64). */
uint64_t e3sm_gen_mix(uint64_t x);

#endif
