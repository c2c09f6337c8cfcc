/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's lib room: what the kernels and backends call (their
 * interfaces are the headers of include/iokernels/), the error message and the
 * agreement, the suite's IOK_* variables, the job's clock and the request
 * log. The bottom room: it includes no other room's header. */
#ifndef IOK_CORE_LIB_H
#define IOK_CORE_LIB_H

#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "iokernels/kernel.h"
#include "iokernels/run.h"

/* One clock for the job (clock.c): each rank's MPI_Wtime offset against
 * rank 0's, estimated once per run. */
struct iok_clock {
    double offset;                 /* this rank's MPI_Wtime minus rank 0's at the same instant */
    double error;                  /* this rank's bound on that estimate: half its round trip */
    double offset_min, offset_max; /* over the ranks (rank 0's 0 included) */
    double error_max;              /* the worst rank's bound */
    double drift_max; /* the most any rank's offset moved over the run (iok_clock_check), -1 */
    int rounds, synced;
};
extern struct iok_clock iok_clock;
/* Collective, once per run before anything is timed. */
void iok_clock_sync(MPI_Comm comm);
/* Collective, once the passes are over: estimates the offsets again and
 * records how far they moved (drift_max), which the correction missed. */
void iok_clock_check(MPI_Comm comm);
/* MPI_Wtime() on rank 0's clock: every timestamp compared across ranks. */
double iok_now(void);
/* Sleeps s seconds (nothing if s <= 0), through signals that interrupt it
 * (pace.c). */
void iok_sleep_seconds(double s);
/* A busy loop on the clock for s seconds (--compute-kind spin). */
void iok_spin_seconds(double s);

/* The suite's IOK_* variables (env.c): iok_env_check validates them once,
 * before anything else (a usage error naming the variable); then
 * IOK_AGREE_SECONDS in seconds (default 10), IOK_PROGRESS (-1 unset, 0,
 * 1), IOK_CLOCK_ROUNDS (default 10) and IOK_REWRITE_IN_PLACE (0 or 1). */
int iok_env_check(void);
int iok_env_agree_seconds(void);
int iok_env_progress(void);
int iok_env_clock_rounds(void);
int iok_env_rewrite_in_place(void);

/* The agreement (error.c) calls nothing above lib: what it needs of the
 * rooms above is handed in. Collective, once after MPI_Init (main.c):
 * the agreements' own communicator, `note` run on a rank's status before
 * each agreement (limits.c's iok_limits_note: a limit the process met,
 * named) and `ending` before a rank ends the job (signals.c's
 * iok_signals_job_failing); NULL for none. */
void iok_agree_init(int (*note)(int status), void (*ending)(void));
/* How long a failing rank waits for the others to agree, in seconds: main.c
 * passes IOK_AGREE_SECONDS once env.c checked it; IOK_AGREE_SECONDS_DEFAULT
 * until then. */
#define IOK_AGREE_SECONDS_DEFAULT 10
void iok_agree_timeout(int seconds);

/* The request log (reqlog.c, iokernels/reqlog.h): iok_log is the run's
 * (NULL: none kept). start: a barrier, then the log's clock; add: one call
 * of this rank (level as made); gather: collective, all ranks' on rank 0. */
struct iok_reqlog;
extern struct iok_reqlog *iok_log;
void iok_reqlog_start(struct iok_reqlog *log, MPI_Comm comm);
void iok_reqlog_free(struct iok_reqlog *log);
int iok_reqlog_add(struct iok_reqlog *log, int rank, const struct iok_schema *s, int file,
                   int write, int level, double t0, double t1, const struct iok_reqlist *r);
int iok_reqlog_gather(const struct iok_reqlog *log, MPI_Comm comm, struct iok_reqlog *all);
/* Byte offset of variable v in the raw layout (v = nvars: the layout's size). */
int64_t iok_raw_var_offset(const struct iok_schema *s, int v);

/* MPI_Abort of the whole job, once the launcher had time to forward the
 * lines this rank printed (error.c). */
void iok_abort_job(int code);

/* A label put before every error and signal line of this process ("member 2
 * (e3sm): "); "" for none. */
void iok_error_label(const char *label);

/* The agreements on comm use agree (a duplicate of it, made by its owner). */
void iok_agree_comm_for(MPI_Comm comm, MPI_Comm agree);

#endif
