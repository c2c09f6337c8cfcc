/* SPDX-License-Identifier: BSD-3-Clause */
/* E3SM cases and their history files: which case a decomposition file
 * describes (F, G or I, by the number and shape of its decompositions, as
 * the original), and each history file's schema built from its CDL header
 * and variables.tsv (data/e3sm), with the dimension sizes of the
 * decompositions. */
#ifndef IOKERNELS_E3SM_SCHEMA_H
#define IOKERNELS_E3SM_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "e3sm_decomp.h"
#include "iokernels/schema.h"

enum e3sm_case_id { E3SM_CASE_F, E3SM_CASE_G, E3SM_CASE_I };

struct e3sm_hist {
    const char *tag;  /* "_h0", "_h1" or "" (inserted in the output name) */
    const char *cdl;  /* header in the schema directory */
    const char *key;  /* case column of variables.tsv */
    const char *name; /* for reports: "h0", "h1", "hist" */
    int one_record;   /* e3sm_io.c forces one record here (F h0, I h1), whatever -r says */
};

/* The case of a decomposition set, and its history files (nhist of them). */
int e3sm_case_detect(const struct e3sm_decomps *d, enum e3sm_case_id *id,
                     const struct e3sm_hist **hist, int *nhist, char *err, size_t errlen);
const char *e3sm_case_name(enum e3sm_case_id id);

/* Builds the schema of one history file: the CDL's dimensions, variables and
 * attributes, the decomposed dimensions sized by d, the record dimension by
 * nrecs. var_decomp[v] (allocated, one per variable) is the decomposition
 * (1..6) of variable v or 0. Returns 0, or -1 with a reason in err. */
int e3sm_schema_build(const char *cdl, const char *tsv, const struct e3sm_hist *h,
                      const struct e3sm_decomps *d, int64_t nrecs, struct iok_schema *s,
                      int **var_decomp, char *err, size_t errlen);

/* The original without -j: every float variable of the header (and its
 * _FillValue) becomes double. Returns 0, or -1 out of memory. */
int e3sm_schema_float_to_double(struct iok_schema *s);

#endif
