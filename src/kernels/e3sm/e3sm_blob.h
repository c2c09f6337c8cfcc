/* SPDX-License-Identifier: BSD-3-Clause */
/* The blob strategy (the original's -x blob, -g subfiles): the ranks form
 * -g contiguous groups, one subfile per group and history file. In a
 * subfile, each decomposed variable is one 1-D array (per record) holding
 * its group's ranks' elements one rank after another, each rank's part in
 * the order of its runs: every rank writes one contiguous block per
 * variable. The subfile's index (Dn.nreqs, Dn.offsets, Dn.lengths per
 * group rank, global Dn.dims) is a decomposition file of the group, from
 * which the canonical position of every blob element follows. */
#ifndef IOKERNELS_E3SM_BLOB_H
#define IOKERNELS_E3SM_BLOB_H

#include <stdint.h>

#include <mpi.h>

#include "iokernels/schema.h"
#include "kernels/e3sm_common/e3sm_decomp.h"

struct e3sm_blob {
    int ngroups, group, gsize, grank; /* this rank's group and rank in it */
    int64_t elems[E3SM_MAX_DECOMP];   /* this rank's elements of each decomposition */
    int64_t prefix[E3SM_MAX_DECOMP];  /* where they start in the group's blob */
    int64_t blob_len[E3SM_MAX_DECOMP];
    int64_t group_runs[E3SM_MAX_DECOMP];
    /* group root only: per group rank its number of runs; all runs */
    int32_t *g_nreqs[E3SM_MAX_DECOMP];
    int64_t *g_off[E3SM_MAX_DECOMP];
    int32_t *g_len[E3SM_MAX_DECOMP];
    /* every group's size, blob lengths and runs (every rank opens every subfile) */
    int *gsizes;
    int64_t (*glen)[E3SM_MAX_DECOMP], (*gruns)[E3SM_MAX_DECOMP];
};

/* Collective: groups, prefixes, and the group roots' index. */
int e3sm_blob_setup(const struct e3sm_decomps *d, MPI_Comm comm, int ngroups, struct e3sm_blob *b);
void e3sm_blob_free(struct e3sm_blob *b);

/* IOK_OK if every subfile holds elements of every decomposition, else a
 * usage error naming the first empty one for a backend (named `backend`)
 * that cannot store a dimension of length 0. */
int e3sm_blob_refuse_empty(const struct e3sm_decomps *d, const struct e3sm_blob *b, int nprocs,
                           const char *backend);

/* The subfile schema from the canonical one: the same variables first (same
 * ids; decomposed ones reshaped to [record,] Dn.blob_len), then the index. */
int e3sm_blob_schema(const struct e3sm_decomps *d, const struct e3sm_blob *b, int group,
                     const struct iok_schema *canon, const int *var_decomp, struct iok_schema *out);

#endif
