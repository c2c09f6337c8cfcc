/* SPDX-License-Identifier: BSD-3-Clause */
/* The e3sm kernel's options and plan state, shared by its files. */
#ifndef IOKERNELS_E3SM_KERNEL_H
#define IOKERNELS_E3SM_KERNEL_H

#include <stdint.h>
#include <stdio.h>

#include "e3sm_blob.h"
#include "e3sm_box.h"
#include "iokernels/kernel.h"
#include "kernels/e3sm_common/e3sm_decomp.h"
#include "kernels/e3sm_common/e3sm_gen.h"
#include "kernels/e3sm_common/e3sm_schema.h"

/* The CHOICE options' values, each enum in the order of its choices. */
#define E3SM_XTYPE_CHOICES "float|double"
enum e3sm_xtype { E3SM_XTYPE_FLOAT, E3SM_XTYPE_DOUBLE };
#define E3SM_MISSING_CHOICES "fill|skip"
enum e3sm_missing { E3SM_MISSING_FILL, E3SM_MISSING_SKIP };
#define E3SM_STRATEGY_CHOICES "canonical|blob"
enum e3sm_strategy { E3SM_CANONICAL, E3SM_BLOB };
/* -a: a backend's name (adios: the original's own layout, refused) */
#define E3SM_LIBRARY_CHOICES "pnetcdf|hdf5|netcdf4|adios|adios2|mpiio"
#define E3SM_REARRANGE_CHOICES "none|box"
enum e3sm_rearrange { E3SM_REARRANGE_NONE, E3SM_REARRANGE_BOX };

/* History files times subfiles one run plans: the state's per-file arrays */
#define E3SM_MAX_FILES 256

struct e3sm_opts {
    int keep, records, stride, hx, subfiles, two_d_first, noncontig, verbose, io_ranks;
    int float_j, fill_u, nosort_q; /* the original's -j, -u, -q */
    enum e3sm_xtype xtype;         /* of the header's float variables */
    enum e3sm_missing missing;     /* the maps' gap fillers */
    enum e3sm_strategy strategy;
    int api;                  /* -a: an index of E3SM_LIBRARY_CHOICES, or IOK_CHOICE_UNSET */
    char in[IOK_OPT_STRLEN];  /* -i: read these files */
    char out[IOK_OPT_STRLEN]; /* -o: write these files */
    enum e3sm_rearrange rearrange;
    char schema_dir[IOK_OPT_STRLEN];
    char replay[IOK_OPT_STRLEN];     /* blob subfiles to turn into canonical files */
    char generate[E3SM_GEN_SPECLEN]; /* --generate: the decomposition's parameters */
};

/* One decomposition's runs as subarray templates of its own array: per run
 * the coordinates of its first element (ndims values) and its length. */
struct e3sm_tmpl {
    int64_t n;
    int64_t *coord; /* n x ndims */
    int64_t *len;
};

struct e3sm_state {
    struct e3sm_decomps dec;
    struct e3sm_tmpl tmpl[E3SM_MAX_DECOMP];
    enum e3sm_case_id cid;
    const struct e3sm_hist *hist[E3SM_MAX_FILES];
    int *var_decomp[E3SM_MAX_FILES]; /* per variable: 0 or 1..6 */
    int *order[E3SM_MAX_FILES];      /* variables in write order */
    int nvars_d[E3SM_MAX_FILES][E3SM_MAX_DECOMP + 1];
    /* canonical requests (subarrays) over all records: this rank's, and
     * the sum, max and min over ranks */
    int64_t my_reqs[E3SM_MAX_FILES], sum_reqs[E3SM_MAX_FILES], max_reqs[E3SM_MAX_FILES],
        min_reqs[E3SM_MAX_FILES];
    int wrote[E3SM_MAX_FILES]; /* this run created the file (deleted without -k) */
    char path[E3SM_MAX_FILES][IOK_OPT_STRLEN];
    int rank, keep;
    int rearrange, nio, *io;              /* box rearranger: its I/O ranks */
    struct e3sm_box box[E3SM_MAX_DECOMP]; /* per decomposition */
    int blob;                             /* -x blob: its groups and layout */
    struct e3sm_blob bl;
    int group_of[E3SM_MAX_FILES];            /* blob: the subfile's group */
    int ncanon[E3SM_MAX_FILES];              /* blob: variables before the index */
    struct iok_schema canon[E3SM_MAX_FILES]; /* blob: the canonical schema of its values */
    int replay;                              /* --replay: values read from blob subfiles */
    char replay_path[E3SM_MAX_FILES][IOK_OPT_STRLEN];
    void **replay_vals[E3SM_MAX_FILES]; /* per variable: its records, as read */
    char decomp_path[IOK_OPT_STRLEN];
};

int e3sm_exchange(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
                  int file, int step, enum iok_xstage stage, struct iok_reqlist *compute,
                  struct iok_reqlist *io);
int e3sm_replay_load(struct e3sm_state *st, const struct iok_run *run, const struct iok_plan *plan,
                     int nrecs);
int e3sm_replay_values(const struct e3sm_state *st, const struct iok_schema *s, int f, int step,
                       struct iok_reqlist *out);
void e3sm_report(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
                 const struct iok_result *res, FILE *out);

#endif
