/* SPDX-License-Identifier: BSD-3-Clause */
/* The replay's plan: each traced file as variables of the model, each
 * rank's operations as steps, and the requests of one step. Pure: built
 * from the parsed trace alone, the same on every rank. */
#ifndef IOK_REPLAY_PLAN_H
#define IOK_REPLAY_PLAN_H

#include <stdint.h>

#include "iokernels/kernel.h"
#include "iokernels/request.h"
#include "iokernels/schema.h"
#include "replay_file.h"

/* A stretch of a file held by one variable of its schema: a `data` line's
 * variable, or bytes (the whole file when it has no data lines). */
struct rp_region {
    int64_t off, bytes;
    int var; /* variable id in the file's schema */
    int rec; /* 1: a record variable (records x elems) */
    int64_t elems;
    int esize;
};

/* One step of a pass: the operation of each job rank (index into the
 * trace's ops), -1 where a rank has none (it joins with nothing). */
struct rp_sched {
    int nsteps;
    int *op;    /* nsteps x nprocs */
    int *level; /* per step: IOK_LEVEL_COLL or IOK_LEVEL_INDEP */
};

struct rp_fileplan {
    int traced; /* index of the traced file */
    int nregions;
    struct rp_region *regions; /* tiling [0, extent) in offset order */
    int64_t extent;
    struct rp_sched w, r; /* writes and reads, in each rank's order */
    int64_t nfill;        /* byte ranges read but never written */
    struct iok_logseg *fill;
    int64_t fill_bytes;
};

struct rp_plan {
    int nprocs, fold;
    int nfiles; /* traced files with at least one read or write */
    struct rp_fileplan *files;
    int nskipped; /* traced files without reads or writes */
};

/* Builds the plan for nprocs job ranks; trace rank r runs on job rank
 * r % nprocs when fold (else the counts must be equal: checked by the
 * caller). The schema of plan file i is built into schemas[i]. */
int rp_plan_build(const struct rp_trace *t, int nprocs, int fold, const char *path,
                  struct rp_plan *p, struct iok_schema *schemas, int max_files);
void rp_plan_free(struct rp_plan *p);

/* The passes (a file's writes: 2 * file, its reads: 2 * file + 1) whose
 * operations interleave in some rank's traced order, as groups the core
 * runs with their files open together (replay_interleave.c). */
struct rp_groups {
    int n;
    struct iok_filegroup *g;
    struct iok_filegroup_step *steps; /* every group's, one after the other */
    int *of_pass;                     /* per pass: its group, or -1 */
    int needs_rw;                     /* a group both writes and reads some file */
};

/* Builds the groups of the passes the run makes (writes, reads: --mode).
 * fill: bytes a group reads before a step of it writes them join the
 * file's fill (p->files[].fill: the trace read what the file held before;
 * 0 leaves the plan as it is).
 * verify (--verify): each group ends with the read-back step of every file
 * it reads (the read pass's last step). Returns 0, or -1 when memory runs
 * out. */
int rp_groups_build(const struct rp_trace *t, struct rp_plan *p, int writes, int reads, int verify,
                    int fill, struct rp_groups *out);
void rp_groups_free(struct rp_groups *g);

/* The order of the passes (iok_plan.pass_order): each plan file's write
 * pass (2 * file) and read pass (2 * file + 1) in the order of their
 * first operation in the replay file, so that a trace that wrote one file,
 * read it, then wrote the next, runs so, and one that wrote every file
 * before reading them runs so too. A pass with no operation of its own
 * sits just before its read pass (a fill) or after every other pass (a
 * --verify read-back). g (NULL: none): a group's passes are one entry,
 * IOK_PASS_FILEGROUP(group), at its first operation; a file's fill-only
 * write pass just before the group that reads it. Returns the count, or -1
 * when memory runs out. */
int rp_pass_order(const struct rp_trace *t, const struct rp_plan *p, const struct rp_groups *g,
                  int *order);

/* The flat name of a traced path under dir: its components other than
 * "", "." and ".." joined by '_', control characters as '_', ext appended
 * unless it ends the name already. Returns 0, or why it cannot be made:
 * no component names anything, the path does not fit in len, or the name
 * is longer than NAME_MAX (no file system creates it). */
enum { RP_MAP_NO_NAME = -1, RP_MAP_TOO_LONG = -2, RP_MAP_NAME_MAX = -3 };
int rp_map_path(const char *dir, const char *traced, const char *ext, char *out, size_t len);

/* Adds to `out` one access per variable of file fp (the collective
 * contract), holding segs[0..n) as subarrays; round: widen partial elements
 * of typed variables to whole ones (fills), else they are an error. */
int rp_requests(const struct rp_fileplan *fp, const struct iok_schema *s,
                const struct iok_logseg *segs, int64_t n, int round, struct iok_reqlist *out);

#endif
