/* SPDX-License-Identifier: BSD-3-Clause */
/* Timelines of phases and their reduction across ranks. */
#include <stdlib.h>
#include <string.h>

#include "core/measure/measure.h"

const char *const iok_phase_names[] = {"requests", "datagen", "exchange", "open",  "define", "post",
                                       "wait",     "flush",   "close",    "check", "compute"};
_Static_assert(sizeof iok_phase_names / sizeof iok_phase_names[0] == IOK_NPHASES,
               "one name per enum iok_phase");
const char *const iok_op_names[3] = {"write", "read", "verify"};

int
iok_phase_is_io(enum iok_phase p)
{
    return p != IOK_PH_REQUESTS && p != IOK_PH_DATAGEN && p != IOK_PH_CHECK && p != IOK_PH_COMPUTE;
}

void
iok_timeline_init(struct iok_timeline *tl)
{
    memset(tl, 0, sizeof *tl);
}

void
iok_timeline_free(struct iok_timeline *tl)
{
    for (int p = 0; p < IOK_NPHASES; p++)
        free(tl->t[p]);
    memset(tl, 0, sizeof *tl);
}

void
iok_timeline_add(struct iok_timeline *tl, enum iok_phase p, double begin, double end)
{
    if (tl->n[p] == tl->cap[p]) {
        int ncap = tl->cap[p] ? 2 * tl->cap[p] : 64;
        double *t = realloc(tl->t[p], 2 * (size_t)ncap * sizeof *t);
        if (!t)
            return; /* an occurrence lost to memory exhaustion: counts stay consistent below */
        tl->t[p] = t;
        tl->cap[p] = ncap;
    }
    tl->t[p][2 * tl->n[p]] = begin;
    tl->t[p][2 * tl->n[p] + 1] = end;
    tl->n[p]++;
}

double
iok_timeline_own(const struct iok_timeline *tl, enum iok_phase p)
{
    double own = 0;
    for (int i = 0; i < tl->n[p]; i++)
        own += tl->t[p][2 * i + 1] - tl->t[p][2 * i];
    return own;
}

struct iok_stat
iok_stat_reduce(double v, MPI_Comm comm)
{
    int np;
    MPI_Comm_size(comm, &np);
    double in[3] = {v, -v, v}, mm[2], sum;
    MPI_Allreduce(in, mm, 2, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&in[2], &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    struct iok_stat s = {-mm[1], sum / np, mm[0]};
    return s;
}

void
iok_timeline_reduce(const struct iok_timeline *tl, MPI_Comm comm,
                    struct iok_phase_result out[IOK_NPHASES])
{
    int counts[IOK_NPHASES], cmin[IOK_NPHASES], cmax[IOK_NPHASES];
    memcpy(counts, tl->n, sizeof counts);
    MPI_Allreduce(counts, cmin, IOK_NPHASES, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(counts, cmax, IOK_NPHASES, MPI_INT, MPI_MAX, comm);
    for (int p = 0; p < IOK_NPHASES; p++) {
        out[p].rank = iok_stat_reduce(iok_timeline_own(tl, p), comm);
        out[p].count = cmax[p];
        out[p].job = 0;
        int n = cmin[p];
        if (n == 0)
            continue;
        if (n != cmax[p]) { /* ranks ran different occurrences: only the spread is known */
            out[p].job = out[p].rank.max;
            continue;
        }
        /* earliest begin and latest end of each occurrence, in one reduction:
         * negate the begins so that MAX gives the minimum */
        double *t = malloc(2 * (size_t)n * sizeof *t), *r = malloc(2 * (size_t)n * sizeof *r);
        for (int i = 0; i < n; i++) {
            t[2 * i] = -tl->t[p][2 * i];
            t[2 * i + 1] = tl->t[p][2 * i + 1];
        }
        MPI_Allreduce(t, r, 2 * n, MPI_DOUBLE, MPI_MAX, comm);
        for (int i = 0; i < n; i++)
            out[p].job += r[2 * i + 1] + r[2 * i];
        free(t);
        free(r);
    }
}
