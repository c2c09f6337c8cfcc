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

/* One operation: a call of the request log, or an `op` line of a replay
 * file (the replay kernel reads its trace into the same type, so the plan,
 * the digests and the fidelity handle one kind of operation). */
struct iok_logop {
    int rank, file, write;
    int level;          /* IOK_LEVEL_COLL or IOK_LEVEL_INDEP, as the call was made */
    int posix;          /* 1: a trace's POSIX call (made as an independent one) */
    int line;           /* a replay file's line, for messages; 0: the run's own */
    double start, end;  /* seconds since the log's start (after a barrier, before the passes);
                           a trace's since the traced job's start, -1: unknown */
    int64_t nseg, seg0; /* segs[seg0 .. seg0 + nseg): rows of each subarray, merged where
                           contiguous within one subarray, in request order */
};

struct iok_logseg {
    int64_t off, len;
};

/* The one merge of contiguous segments (in place; returns the new count):
 *   IOK_SEGS_IN_ORDER  a segment that begins where the one before it ends
 *                      is joined to it, the order kept (the rows of one
 *                      subarray; one operation's runs as its call lists them)
 *   IOK_SEGS_SORTED    sorted by offset, touching or overlapping ones
 *                      joined, empty ones dropped (the bytes one operation,
 *                      or a set of them, moves) */
enum iok_segs_merge { IOK_SEGS_IN_ORDER, IOK_SEGS_SORTED };
int64_t iok_segs_merge(struct iok_logseg *segs, int64_t n, enum iok_segs_merge how);

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
/* Adds one operation (segs: n pairs, any order; merged in place, SORTED). */
void iok_seqdigest_add(struct iok_seqdigest *d, int write, int coll, struct iok_logseg *segs,
                       int64_t n);
/* The digests of nops operations, one pass in their order: d[rank * nfiles
 * + file] for every rank below nranks and file below nfiles (segs are not
 * changed). IOK_OK, or an error when memory runs out. */
int iok_seqdigests(const struct iok_logop *ops, int64_t nops, const struct iok_logseg *segs,
                   int nranks, int nfiles, struct iok_seqdigest *d);

#endif
