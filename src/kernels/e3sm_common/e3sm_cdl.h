/* SPDX-License-Identifier: BSD-3-Clause */
/* A small reader of CDL headers as `ncmpidump -h` / `ncdump -h` print them:
 * dimensions, variables (type, dimensions) and attributes (type, values) in
 * file order. Enough for E3SM's history files; not a full CDL (no data
 * section, no groups, no user types). */
#ifndef IOKERNELS_E3SM_CDL_H
#define IOKERNELS_E3SM_CDL_H

#include <stddef.h>
#include <stdint.h>

#include "iokernels/schema.h"

/* Parses text into s (initialised by the caller). The unlimited dimension
 * gets `nrecs` records. Returns 0, or -1 with "line N: reason" in err. */
int e3sm_cdl_parse(const char *text, int64_t nrecs, struct iok_schema *s, char *err, size_t errlen);

#endif
