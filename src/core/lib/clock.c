/* SPDX-License-Identifier: BSD-3-Clause */
/* One clock for the job. MPI_Wtime is each process's own clock: Open MPI
 * 4.1 counts it from a per-process origin (clock_gettime(CLOCK_MONOTONIC)
 * less its value at the process's first call), MPICH from the node's clock,
 * and across nodes clocks differ by whatever NTP leaves
 * (MPI_WTIME_IS_GLOBAL is false). A span compared across ranks (earliest
 * open start to latest close end) would carry that difference.
 *
 * Once per run, rank 0 plays ping-pong with every other rank in turn,
 * IOK_CLOCK_ROUNDS rounds (default 10): rank 0 reads t0, sends; the rank
 * reads its clock tr and answers with it; rank 0 reads t1. The rank's
 * offset lies in [tr - t1, tr - t0]: the estimate tr - (t0 + t1) / 2 is
 * wrong by at most half the round trip, and the round with the smallest
 * round trip is kept (IOR takes one round per rank, unbounded). Every
 * timestamp compared across ranks is then iok_now() = MPI_Wtime() less the
 * rank's offset: rank 0's clock for the whole job. Durations on one rank
 * are unchanged. Cost: nprocs x rounds round trips on rank 0, outside
 * every timed region (10,000 ranks at 5 us: 0.5 s). */
#include <float.h>
#include <stdlib.h>

#include "core/lib/lib.h"

struct iok_clock iok_clock;

double
iok_now(void)
{
    return MPI_Wtime() - iok_clock.offset;
}

/* Rank 0's ping-pong with every rank: at[2r] its offset, at[2r + 1] half
 * its smallest round trip, on rank 0 (rank 0's own: 0, 0). Collective. */
static void
estimate(MPI_Comm comm, int rounds, double *at)
{
    int rank, np;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &np);
    for (int r = 1; r < np; r++) {
        if (rank == 0) {
            double best = DBL_MAX, off = 0, tr;
            for (int i = 0; i < rounds; i++) {
                double t0 = MPI_Wtime();
                MPI_Send(&t0, 1, MPI_DOUBLE, r, 0, comm);
                MPI_Recv(&tr, 1, MPI_DOUBLE, r, 0, comm, MPI_STATUS_IGNORE);
                double t1 = MPI_Wtime();
                if (t1 - t0 < best) {
                    best = t1 - t0;
                    off = tr - (t0 + t1) / 2;
                }
            }
            at[2 * r] = off;
            at[2 * r + 1] = best / 2;
        } else if (rank == r) {
            double t0;
            for (int i = 0; i < rounds; i++) {
                MPI_Recv(&t0, 1, MPI_DOUBLE, 0, 0, comm, MPI_STATUS_IGNORE);
                double tr = MPI_Wtime();
                MPI_Send(&tr, 1, MPI_DOUBLE, 0, 0, comm);
            }
        }
    }
}

void
iok_clock_sync(MPI_Comm world)
{
    MPI_Comm comm;
    int rank, np;
    MPI_Comm_dup(world, &comm); /* no tag of anyone else's can meet ours */
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &np);
    const int rounds = iok_env_clock_rounds(); /* IOK_CLOCK_ROUNDS, env.c */
    double *all = rank == 0 ? calloc(2 * (size_t)np, sizeof *all) : NULL, mine[2] = {0, 0};
    int ok = rank != 0 || all, every;
    MPI_Allreduce(&ok, &every, 1, MPI_INT, MPI_MIN, comm);
    if (every) {
        estimate(comm, rounds, all);
        MPI_Scatter(all, 2, MPI_DOUBLE, mine, 2, MPI_DOUBLE, 0, comm);
    }
    iok_clock.offset = mine[0];
    iok_clock.error = mine[1];
    double s[3] = {0, 0, 0}; /* offsets' range, worst bound (rank 0's own: 0, 0) */
    for (int r = 0; rank == 0 && every && r < np; r++) {
        s[0] = all[2 * r] < s[0] ? all[2 * r] : s[0];
        s[1] = all[2 * r] > s[1] ? all[2 * r] : s[1];
        s[2] = all[2 * r + 1] > s[2] ? all[2 * r + 1] : s[2];
    }
    MPI_Bcast(s, 3, MPI_DOUBLE, 0, comm);
    iok_clock.offset_min = s[0];
    iok_clock.offset_max = s[1];
    iok_clock.error_max = s[2];
    iok_clock.rounds = rounds;
    iok_clock.synced = every;
    iok_clock.drift_max = -1;
    free(all);
    MPI_Comm_free(&comm);
}

void
iok_clock_check(MPI_Comm world)
{
    MPI_Comm comm;
    int rank, np;
    MPI_Comm_dup(world, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &np);
    double *all = rank == 0 ? calloc(2 * (size_t)np, sizeof *all) : NULL;
    int ok = rank != 0 || all, every;
    MPI_Allreduce(&ok, &every, 1, MPI_INT, MPI_MIN, comm);
    if (every && iok_clock.synced) {
        estimate(comm, iok_clock.rounds, all);
        /* how far each rank's offset moved since the run's start, beyond
         * what the two estimates' bounds explain: rank 0 knows the old
         * offsets only through the ranks, so each sends its own */
        double old[2] = {iok_clock.offset, iok_clock.error}, *olds = NULL;
        if (rank == 0)
            olds = malloc(2 * (size_t)np * sizeof *olds);
        int gathered = rank != 0 || olds, both;
        MPI_Allreduce(&gathered, &both, 1, MPI_INT, MPI_MIN, comm);
        double worst = 0;
        if (both) {
            MPI_Gather(old, 2, MPI_DOUBLE, olds, 2, MPI_DOUBLE, 0, comm);
            for (int r = 1; rank == 0 && r < np; r++) {
                double d = all[2 * r] - olds[2 * r];
                d = d < 0 ? -d : d;
                worst = d > worst ? d : worst;
            }
        }
        free(olds);
        MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, comm);
        iok_clock.drift_max = both ? worst : -1;
    }
    free(all);
    MPI_Comm_free(&comm);
}
