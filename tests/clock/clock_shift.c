/* SPDX-License-Identifier: BSD-3-Clause */
/* LD_PRELOAD'ed by tests/e2e/test_clock.py: one chosen rank's clock runs
 * IOK_TEST_CLOCK_SHIFT seconds ahead of the others' (a node whose clock NTP
 * left wrong, or a process whose MPI_Wtime origin differs).
 *
 * What MPI_Wtime reads: Open MPI 4.1 calls clock_gettime(CLOCK_MONOTONIC)
 * and subtracts the value of its first call (a per-process origin); MPICH
 * reads clock_gettime as is. Shifting clock_gettime from the start would
 * cancel in Open MPI's subtraction, so the shim's MPI_Init makes the first
 * MPI_Wtime call itself (the origin, unshifted) and only then shifts: from
 * there on every clock_gettime and gettimeofday of the chosen rank reads
 * `shift` ahead, which is what any library on that rank sees.
 *
 * The rank: IOK_TEST_CLOCK_SHIFT_RANK (world rank, from the launcher's
 * OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID) or
 * IOK_TEST_CLOCK_SHIFT_HOST (every rank on that host: one node's ranks).
 * IOK_TEST_CLOCK_DRIFT=R: its CLOCK_MONOTONIC also gains R seconds per
 * second from then on (a clock that drifts over the run). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long shift_ns; /* 0 until MPI_Init returns on the chosen rank */
static double rate;        /* IOK_TEST_CLOCK_DRIFT: the clock also runs this much fast */
static long long armed_ns; /* the real CLOCK_MONOTONIC when the shift started */
static int armed;

static int
chosen(void)
{
    const char *want = getenv("IOK_TEST_CLOCK_SHIFT_RANK");
    const char *host = getenv("IOK_TEST_CLOCK_SHIFT_HOST");
    if (host) {
        char me[256] = "";
        gethostname(me, sizeof me - 1);
        return !strcmp(me, host);
    }
    if (!want)
        return 0;
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return atoi(getenv(vars[i])) == atoi(want);
    return 0;
}

static void
arm(void)
{
    (void)PMPI_Wtime(); /* Open MPI's origin: taken at the first call, unshifted */
    const char *s = getenv("IOK_TEST_CLOCK_SHIFT"), *d = getenv("IOK_TEST_CLOCK_DRIFT");
    if (!s || !chosen())
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    armed_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    shift_ns = (long long)(atof(s) * 1e9);
    rate = d ? atof(d) : 0;
    armed = 1;
}

int
MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    arm();
    return rc;
}

int
MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    arm();
    return rc;
}

int
clock_gettime(clockid_t id, struct timespec *tp)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real(id, tp);
    if (rc == 0 && armed) {
        long long t = (long long)tp->tv_sec * 1000000000LL + tp->tv_nsec;
        /* the drift counted on the monotonic clock (a realtime reading's
         * would need its own origin; the rate is small either way) */
        long long ns = (long long)tp->tv_nsec + shift_ns +
                       (id == CLOCK_MONOTONIC ? (long long)(rate * (double)(t - armed_ns)) : 0);
        tp->tv_sec += (time_t)(ns / 1000000000LL);
        tp->tv_nsec = (long)(ns % 1000000000LL);
    }
    return rc;
}

int
gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    static int (*real)(struct timeval *restrict, void *restrict);
    if (!real)
        real = (int (*)(struct timeval *restrict, void *restrict))dlsym(RTLD_NEXT, "gettimeofday");
    int rc = real(tv, tz);
    if (rc == 0 && armed) {
        long long us = (long long)tv->tv_usec + shift_ns / 1000;
        tv->tv_sec += (time_t)(us / 1000000LL);
        tv->tv_usec = (long)(us % 1000000LL);
    }
    return rc;
}
