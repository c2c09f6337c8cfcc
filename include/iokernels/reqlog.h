/* SPDX-License-Identifier: BSD-3-Clause */
/* The request log: what the core handed the backend, as the byte requests
 * of the mpiio backend's layout (variables one after another, each in
 * row-major order), one entry per rank's library call, with the level the
 * call had and its measured start and end. Kept when a run asks for it
 * (--export-replay, or a kernel with IOK_KERNEL_REQLOG), gathered on rank 0
 * after the passes (iok_result.log). The write and read passes of the
 * first iteration are logged; the suite's own steps (untimed) and a rank
 * that only joins the others' collective call (idle) are not. */
#ifndef IOKERNELS_REQLOG_H
#define IOKERNELS_REQLOG_H

#include <stdint.h>

struct iok_logop {
    int rank, file, write;
    int level;          /* IOK_LEVEL_COLL or IOK_LEVEL_INDEP, as the call was made */
    double start, end;  /* seconds since the log's start (after a barrier, before the passes) */
    int64_t nseg, seg0; /* segs[seg0 .. seg0 + nseg): rows of each subarray, merged where
                           contiguous within one subarray, in request order */
};

struct iok_logseg {
    int64_t off, len;
};

struct iok_reqlog {
    int64_t nops, nsegs, ops_cap, segs_cap;
    struct iok_logop *ops; /* rank 0 after the gather: rank by rank, each in its order */
    struct iok_logseg *segs;
    double t0;
};

/* The digest of one (rank, file)'s ordered operations, written into replay
 * files (a `check` line) by trace2replay and --export-replay and compared
 * by the replay's fidelity: FNV-1a 64 over one text line per operation,
 * "<w|r><c|i>" then " OFFSET+LENGTH" per run (the operation's segments
 * sorted by offset, touching or overlapping ones merged, empty ones
 * dropped) and "\n". POSIX calls count as independent ('i'). The same
 * function is in python/iokernels_campaign/trace/trace2replay.py. */
struct iok_seqdigest {
    uint64_t hash;
    int64_t ops, bytes; /* bytes: of the merged runs */
};

void iok_seqdigest_init(struct iok_seqdigest *d);
/* Adds one operation (segs: n pairs, any order; sorted in place). */
void iok_seqdigest_add(struct iok_seqdigest *d, int write, int coll, struct iok_logseg *segs,
                       int64_t n);
/* Sorts segs by offset and merges touching or overlapping ones, dropping
 * empty ones: the runs one operation moves. Returns the new count. */
int64_t iok_seq_runs(struct iok_logseg *segs, int64_t n);

#endif
