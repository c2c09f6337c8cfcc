/* SPDX-License-Identifier: BSD-3-Clause */
/* PIO's text decomposition files (.dat), as E3SM writes them:
 *
 *   version 2001 npes N ndims K
 *   d1 d2 ... dK                 dimension sizes, Fortran order (fastest first)
 *   rank count                   per rank with requests, ascending ranks
 *   o1 o2 ... o_count            1-based element offsets; 0 = none
 *   Obtained ...                 (a stack trace: ends the data)
 *
 * Parsed as the original dat2decomp does: zeros dropped, 1 subtracted, consecutive offsets (in file
 * order) merged into (offset, length) runs, broken where offset % (fastest dim) == 0. An offset
 * beyond the array is refused (dat2decomp drops it silently). */
#ifndef IOKERNELS_E3SM_DAT_H
#define IOKERNELS_E3SM_DAT_H

#include <stddef.h>
#include <stdint.h>

#include "e3sm_decomp.h"

struct e3sm_dat {
    int64_t nprocs;
    int ndims;
    int64_t dims[E3SM_MAX_DDIMS]; /* C order (slowest first), as Dn.dims */
    int64_t total;
    int64_t *nreqs;     /* per rank: runs */
    int64_t *raw_nreqs; /* per rank: offsets kept before merging */
    int64_t npairs, nraw;
    int64_t *off, *len; /* all ranks' runs, rank after rank */
    int64_t *raw;       /* all kept offsets (1-based, as PIO), rank after rank */
    int64_t max_nreqs, min_nreqs, max_len, min_len;
    int fully_covered; /* every element of the array is some rank's */
};

/* Parses the text of one .dat file. Returns 0, or -1 with a one-line reason
 * naming the line in err. */
int e3sm_dat_parse(const char *text, struct e3sm_dat *out, char *err, size_t errlen);
void e3sm_dat_free(struct e3sm_dat *d);

#endif
