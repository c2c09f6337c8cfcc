/* SPDX-License-Identifier: BSD-3-Clause */
/* What one rank reads or writes in one step: a list of accesses.
 *
 * An access names one variable and one or more subarrays of it (start/count
 * in element units, one entry per dimension of the variable, the record
 * dimension included). Its data lies contiguous in `buf`: the subarrays one
 * after another, each in row-major order. The buffers of one list lie one
 * after another in a single allocation, in access order (aligned to their
 * type only where a wider type follows a narrower one): a library that
 * merges the requests of one wait (PnetCDF's wait_all, MPI-IO's memory
 * type) sees one contiguous buffer and packs nothing, as E3SM-IO arranges
 * its write buffer. One access is one library call in
 * the simplest mapping (vara for one subarray, varn for several); a backend
 * may combine consecutive accesses of one variable into fewer calls.
 *
 * Collective contract: in collective mode every rank's list holds the same
 * number of accesses in the same variable order; a rank with nothing to do
 * for a variable still lists it with nsub = 0. */
#ifndef IOKERNELS_REQUEST_H
#define IOKERNELS_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "iokernels/schema.h"

struct iok_access {
    int varid;
    int nsub;        /* number of subarrays */
    int64_t *starts; /* nsub x ndims(var) */
    int64_t *counts; /* nsub x ndims(var) */
    void *buf;       /* sum of subarray sizes x type size bytes */
    int64_t nelems;  /* sum over subarrays of product(counts) */
    /* Kernel-provided values (metadata such as box lists), same layout as
     * buf, owned by the list: written instead of the deterministic data, and
     * what a read must find. NULL: the core's deterministic data. */
    void *values;
    /* Library calls of this access, set by the core before put/get, outside
     * every timed region (backends never agree on them themselves):
     *   calls      this rank's: nsub, or fewer where the backend's prepare()
     *              merges subarrays (HDF5's union of hyperslabs);
     *   calls_max  the most any rank makes for this access, in collective
     *              mode for backends with IOK_CAP_AGREED_CALLS (one
     *              reduction per step, with the ranks' agreement on the
     *              step); otherwise equal to calls. A collective backend pads
     *              with empty calls up to calls_max, so that every rank
     *              enters the same collectives. */
    int calls, calls_max;
};

/* The level of a list's library calls: the run's (--collective or
 * --independent), or the list's own, for backends with IOK_CAP_CALL_LEVEL
 * (a replayed trace mixes collective and independent calls). The ranks of
 * one step give the same level. */
enum iok_level { IOK_LEVEL_RUN, IOK_LEVEL_COLL, IOK_LEVEL_INDEP };

struct iok_reqlist {
    int n, cap;
    struct iok_access *acc;
    void *arena; /* the accesses' buffers, owned by the list */
    enum iok_level level;
    /* 1 on every rank: the step is the suite's own work (filling bytes a
     * pattern reads but never writes, a read-back for --verify), posted
     * outside the timed I/O phases and left out of the pass's bytes and of
     * the request log */
    int untimed;
    /* 1: this rank has no operation of its own in the step and only joins
     * the others' collective calls with nothing (left out of the request
     * log, which lists the pattern's operations) */
    int idle;
    /* 1: a paced list (a replay paced as traced, on every rank and every
     * step, idle or not). The first paced list a process posts sets its
     * pace origin, right after that step's agreement, so the ranks' origins
     * are one instant (the agreement's exit). pace_at >= 0: the list is not
     * posted before origin + pace_at seconds; the core sleeps after the
     * step's agreement, just before posting, so a rank's traced gap delays
     * its own call and not, through the agreement, every rank's (the sleep
     * is the suite's own time, outside the timed phases). < 0: no wait. */
    int paced;
    double pace_at;
    /* --compute traced (kernels with IOK_KERNEL_TRACED_GAPS): the seconds
     * this rank computes after the step, the traced gap between its
     * operation and its next; 0: none */
    double gap;
};

void iok_reqlist_init(struct iok_reqlist *r);
/* (pace.c) A paced list (r->paced): sets the process's pace origin if unset, then
 * sleeps until origin + r->pace_at (nothing if pace_at < 0 or past). */
void iok_reqlist_pace(const struct iok_reqlist *r);
/* Seconds since the pace origin, -1 before the iteration's first paced list. */
double iok_pace_elapsed(void);
/* The core, at each iteration's start: the next paced list sets the origin. */
void iok_pace_reset(void);
/* Frees the accesses' starts/counts and buffers. */
void iok_reqlist_free(struct iok_reqlist *r);

/* Appends an access with room for nsub subarrays (starts/counts zeroed; the
 * caller fills them and then calls iok_reqlist_finish). Returns the access or
 * NULL on allocation failure. */
struct iok_access *iok_reqlist_add(struct iok_reqlist *r, const struct iok_schema *s, int varid,
                                   int nsub);

/* Computes nelems of every access and allocates the buffers (one arena). */
int iok_reqlist_finish(struct iok_reqlist *r, const struct iok_schema *s);

/* Gives the access its own values (copied; same size as its buffer). */
int iok_access_set_values(struct iok_access *a, const struct iok_schema *s, const void *values);

/* Every subarray lies inside its variable: checked once by the core, before
 * any backend sees the list (so no backend fails on one rank alone). */
int iok_reqlist_check(const struct iok_reqlist *r, const struct iok_schema *s, const char *path);

/* 1 if the two lists hold the same elements of the same variables in the
 * same buffer layout but for their place along the first dimension (of a
 * record variable, or of a variable of 2 or more dimensions), and neither
 * carries kernel-provided values: with --values once, where no value
 * depends on that place, their buffers hold the same values. */
int iok_reqlist_same_elements(const struct iok_reqlist *a, const struct iok_reqlist *b,
                              const struct iok_schema *s);

/* Moves the buffers of `from` (whose elements are the same,
 * iok_reqlist_same_elements) into `to`, whose own are freed. */
void iok_reqlist_take_buffers(struct iok_reqlist *to, struct iok_reqlist *from);

/* Total payload bytes of the list. */
int64_t iok_reqlist_bytes(const struct iok_reqlist *r, const struct iok_schema *s);

#endif
