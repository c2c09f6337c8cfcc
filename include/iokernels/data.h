/* SPDX-License-Identifier: BSD-3-Clause */
/* The suite's deterministic data: every element's value is a pure function
 * of (seed, variable, record, element index within the record), so any rank
 * can generate or check any element without communication, and a file
 * written by P ranks verifies when read by Q ranks. */
#ifndef IOKERNELS_DATA_H
#define IOKERNELS_DATA_H

#include <stdint.h>
#include <stdio.h>

#include "iokernels/request.h"
#include "iokernels/schema.h"

/* The 32 bits one element's value is made from (each type's conversion is
 * in data.c: the top 8 or 16 bits for char, byte and short, the bits as a
 * signed integer for int and int64, [0, 1) for float and double). */
uint32_t iok_data_bits(uint64_t seed, uint64_t var_hash, int64_t record, int64_t index);

/* How a variable's records take their values (--values): each record its
 * own (fresh, the default), or every record the first record's (once: the
 * originals' way of writing one buffer again and again). */
enum iok_values { IOK_VALUES_FRESH, IOK_VALUES_ONCE }; /* --values: IOK_VALUES_CHOICES order */

/* Fills every access buffer of the list with the expected values. */
void iok_data_fill(const struct iok_schema *s, const struct iok_reqlist *r, uint64_t seed,
                   enum iok_values how);

/* Compares the list's buffers with the expected values. Returns the number
 * of mismatching elements; `checked` grows by the number compared; the first
 * mismatch is described in `first_bad` (if it is still empty). */
int64_t iok_data_check(const struct iok_schema *s, const struct iok_reqlist *r, uint64_t seed,
                       enum iok_values how, int64_t *checked, char *first_bad,
                       size_t first_bad_len);

/* One value of type t as text (for messages). */
void iok_data_format(enum iok_type t, const void *p, char *out, size_t len);

/* The next value of a seeded stream (splitmix64; the state advances): for
 * placing samples and shuffling, never for the data themselves. */
uint64_t iok_rand_next(uint64_t *state);

#endif
