/* SPDX-License-Identifier: BSD-3-Clause */
/* The AMR plotfile layout shared by the AMReX and Chombo kernels: a
 * hierarchy of levels, each a list of boxes in file order with their owner
 * ranks and data offsets, described as a schema and as request lists.
 *
 * Two schemas of the same variables:
 *   flat   NetCDF names, as the AMReX PnetCDF benchmark writes them:
 *          level_0.Processors, level_0.boxes (N x 6), level_0.data:offsets=0,
 *          level_0.data:datatype=0; attributes global, prefixed by group
 *   hdf5   the Chombo/AMReX HDF5 layout: groups /Chombo_global, /level_0,
 *          /level_0/data_attributes; boxes and prob_domain as compounds of
 *          lo_i..hi_k, ghost as intvecti/j/k; single values as scalars
 * Requests are the same for both: rank 0 writes Processors, boxes and
 * offsets (their real values, iok_access_set_values); every rank writes the
 * data of its own boxes (the core's deterministic values). */
#ifndef IOK_AMR_LAYOUT_H
#define IOK_AMR_LAYOUT_H

#include <stdint.h>

#include "amr_box.h"
#include "iokernels/request.h"
#include "iokernels/schema.h"

#define AMR_MAX_LEVELS 8

struct amr_level {
    struct amr_box domain;
    double dx;
    int ref_ratio; /* to the next finer level; 1 on the finest */
    int nboxes;
    struct amr_box *boxes; /* in file order */
    int *procs;            /* owner rank of each box */
    int64_t *offsets;      /* nboxes + 1: first value of each box's data, then the total */
};

struct amr_hier {
    int nlevels, ncomp;
    struct amr_level lev[AMR_MAX_LEVELS];
};

enum amr_flavor {
    AMR_AMREX, /* the AMReX benchmark's attributes (testString, ghost) */
    AMR_CHOMBO /* Chombo's (objectType, ghost and outputGhost) */
};

enum amr_data_mode {
    AMR_DATA_AGGREGATE, /* one access per rank and level, adjacent boxes merged */
    AMR_DATA_PER_BOX    /* one access per box, padded with empty ones to the most any rank has */
};

/* Variable ids of each level in a built schema. */
struct amr_vars {
    int procs[AMR_MAX_LEVELS], boxes[AMR_MAX_LEVELS], offsets[AMR_MAX_LEVELS], data[AMR_MAX_LEVELS];
};

void amr_hier_free(struct amr_hier *h);

/* Sets level L's boxes: boxes[file_order[i]] becomes box i of the file, with
 * its rank; offsets count ncomp values per cell. -1 on allocation failure. */
int amr_level_set(struct amr_level *L, const struct amr_box *boxes, const int *rank,
                  const int *file_order, int n, int ncomp);

/* File orders: grouped by rank, ascending, keeping the list order within a
 * rank (AMReX); by small end, i then j then k (Chombo). */
void amr_order_by_rank(const int *rank, int n, int nprocs, int *order);

/* The schema of h: flat or hdf5 (see above). Fills ids. -1 on failure. */
int amr_schema(struct iok_schema *s, const struct amr_hier *h, enum amr_flavor flavor, int hdf5,
               struct amr_vars *ids);

/* This rank's accesses: per level Processors, boxes, offsets (rank 0) and
 * data. IOK_OK or IOK_EIO (out of memory, recorded). */
int amr_requests(const struct amr_hier *h, const struct amr_vars *ids, const struct iok_schema *s,
                 int rank, enum amr_data_mode mode, struct iok_reqlist *out);

/* Cells and data values this rank owns over all levels. */
int64_t amr_rank_values(const struct amr_hier *h, int rank);

#endif
