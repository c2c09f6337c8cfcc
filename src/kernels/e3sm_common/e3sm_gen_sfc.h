/* SPDX-License-Identifier: BSD-3-Clause */
/* Space-filling curves for the generator's cases (e3sm_gen_sfc.c). */
#ifndef IOKERNELS_E3SM_GEN_SFC_H
#define IOKERNELS_E3SM_GEN_SFC_H

#include <stdint.h>

/* The cells of a w x h rectangle in the order of a generalized Hilbert
 * curve (any w, h), as y * w + x; malloc'ed, NULL when out of memory. */
int64_t *e3sm_sfc_rect(int64_t w, int64_t h);

/* The index of point (x, y) along a Hilbert curve over a 2^order square
 * (x, y < 2^order, order <= 31). */
uint64_t e3sm_sfc_key(uint64_t x, uint64_t y, int order);

#endif
