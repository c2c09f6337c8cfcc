/* SPDX-License-Identifier: BSD-3-Clause */
/* The fidelity score: what the core handed the backend (its request log)
 * against what the trace lists, per rank and in total. */
#ifndef IOK_REPLAY_FIDELITY_H
#define IOK_REPLAY_FIDELITY_H

#include <stdio.h>

#include "iokernels/reqlog.h"
#include "replay_file.h"
#include "replay_sequence.h"

struct rp_counts {
    int64_t ops, bytes, offsets; /* offsets: distinct (file, offset) pairs of segments */
};

enum { RP_T_TOTAL, RP_T_WRITE, RP_T_READ, RP_NT };

struct rp_fidelity {
    int nranks;               /* max(trace ranks, job ranks) */
    struct rp_counts *trace;  /* per rank: trace rank r */
    struct rp_counts *replay; /* per rank: job rank r */
    struct rp_counts trace_total, replay_total;
    double ks; /* Kolmogorov-Smirnov distance of the segment lengths */
    /* spans (latest end - earliest start), seconds; trace -1: times unknown */
    double trace_time[RP_NT], replay_time[RP_NT];
    int writes, reads; /* the trace's kinds compared */
    /* the score by sequence (replay_sequence.h); what it is judged on */
    int have_seq;
    struct rp_sequences seq;
    int nreasons; /* why the replay cannot be exact whatever it did */
    char reasons[4][256];
    int nnotes; /* the conversion's notes (the trace's, borrowed) */
    char *const *notes;
    int64_t cov_traced, cov_counted; /* the trace's coverage; counted 0: whole */
    int64_t posix_ops; /* the trace's POSIX calls, scored as independent MPI-IO calls */
};

/* A reason the replay is not exact whatever its sequences (a fold, a
 * library that sets the offsets). */
void rp_fidelity_reason(struct rp_fidelity *f, const char *text);

/* Log files are the plan's; file_traced maps one to the traced file.
 * writes, reads: the kinds the run replayed (--mode), the trace's ops of
 * the other kind left out of the comparison. */
int rp_fidelity(const struct rp_trace *t, const struct iok_reqlog *log, int nprocs,
                const int *file_traced, int writes, int reads, struct rp_fidelity *out);
void rp_fidelity_free(struct rp_fidelity *f);
int rp_counts_equal(const struct rp_counts *a, const struct rp_counts *b);
/* 1 when every sequence is equal (and the order across files open at
 * once), the replay file matches its trace's digests, no reason stands,
 * and every count of every rank and the totals match and ks is 0. */
int rp_fidelity_exact(const struct rp_fidelity *f);
void rp_fidelity_report(const struct rp_fidelity *f, FILE *out);
/* The record's `fidelity` object as JSON text (malloc'ed). */
char *rp_fidelity_json(const struct rp_fidelity *f);

#endif
