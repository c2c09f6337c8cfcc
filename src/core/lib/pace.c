/* SPDX-License-Identifier: BSD-3-Clause */
/* Sleeps the suite takes on purpose, outside every timed region: a paced
 * replay's traced gaps (iok_reqlist.paced, posted by the pass engine,
 * engine_step.c, after the step's agreement), a mix member's start offset,
 * and --compute's emulated computation (run/compute.c): a sleep, or a spin
 * that keeps the core busy. */
#include <errno.h>
#include <mpi.h>
#include <time.h>

#include "core/lib/lib.h"
#include "iokernels/request.h"

/* The process's pace origin (MPI_Wtime), < 0 until the iteration's first
 * paced list. */
static double pace_origin = -1;

void
iok_sleep_seconds(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Busy on the clock for s seconds: the core stays taken, as by a solver. */
void
iok_spin_seconds(double s)
{
    if (s <= 0)
        return;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < s);
}

double
iok_pace_elapsed(void)
{
    return pace_origin < 0 ? -1 : MPI_Wtime() - pace_origin;
}

void
iok_pace_reset(void)
{
    pace_origin = -1;
}

void
iok_reqlist_pace(const struct iok_reqlist *r)
{
    if (!r->paced)
        return;
    double now = MPI_Wtime();
    if (pace_origin < 0)
        pace_origin = now;
    if (r->pace_at >= 0)
        iok_sleep_seconds(pace_origin + r->pace_at - now);
}
