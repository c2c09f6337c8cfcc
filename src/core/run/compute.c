/* SPDX-License-Identifier: BSD-3-Clause */
/* An application computes between its outputs (--compute), and may leave a
 * step's write in flight while it does (--async): the question is how much
 * of the write the library hides behind the computation.
 *
 * The computation follows each step of a write pass (and the last, before
 * flush and close), outside every timed I/O region, timed as its own phase
 * (compute, not I/O): a sleep or a spin (lib/pace.c). With --async the step
 * is posted, its list held (its buffers stay alive), the computation runs,
 * and the wait comes at the start of the next step, before its list is
 * built, or after the last step, before flush and close: the wait's time is
 * what the computation did not hide. Nothing reads the held buffers before
 * the wait: PnetCDF byte-swaps a pending iput's buffer in place (the write
 * sample is taken after it). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/run/run.h"
#include "iokernels/error.h"

/* The i-th number of the comma list (the last repeats); -1 when malformed. */
static double
nth(const char *text, int i)
{
    double v = -1;
    const char *s = text;
    for (int k = 0;; k++) {
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        if (end == s || errno || !(x >= 0) || x > 1e6 || (*end != ',' && *end != '\0'))
            return -1;
        v = x;
        if (k == i || *end == '\0')
            return v;
        s = end + 1;
    }
}

double
iok_compute_at(const char *text, int step)
{
    return text && text[0] ? nth(text, step) : 0;
}

/* --compute traced: each step's traced gap (iok_reqlist.gap), the kernel's. */
int
iok_compute_traced(const struct iok_core_opts *o)
{
    return o->compute && !strcmp(o->compute, "traced");
}

/* A list's length, or -1 when some item is no number of seconds. */
static int
list_ok(const char *text)
{
    int n = 1;
    for (const char *c = text; *c; c++)
        n += *c == ',';
    for (int i = 0; i < n; i++)
        if (nth(text, i) < 0)
            return -1;
    return n;
}

/* ROMIO 3.2.1 in OpenMPI 4.1 crashes in MPI_File_iwrite_at_all (segfault on
 * every rank, measured): the mpiio backend's collective nonblocking path.
 * Before any file is open OpenMPI has loaded no io component yet: the
 * selection (OMPI_MCA_io, setting 0) says whether ROMIO is picked. */
static int
romio_collective(const struct iok_run *run)
{
    struct iok_mpiio_layer l;
    if (strcmp(run->backend->name, "mpiio") || !run->collective ||
        run->api != IOK_API_NONBLOCKING || !iok_mpiio_layer(&l) || !strstr(l.mpi, "Open MPI"))
        return 0;
    const char *sel = l.setting[0].value;
    return !strncmp(l.io, "romio", 5) ||
           (sel[0] == '^' ? strstr(sel, "ompio") != NULL
                          : strstr(sel, "romio") != NULL && strstr(sel, "ompio") == NULL);
}

int
iok_compute_settle(const struct iok_run *run, const struct iok_core_opts *o)
{
    const struct iok_backend *be = run->backend;
    if (iok_compute_traced(o) && !(run->kernel_flags & IOK_KERNEL_TRACED_GAPS))
        return iok_error(IOK_EUSAGE,
                         "--compute traced: only the replay has traced gaps; give seconds");
    if (iok_compute_traced(o) && o->compute_spread > 0)
        return iok_error(IOK_EUSAGE, "--compute-spread: --compute traced computes each rank's "
                                     "own traced gaps; give seconds to spread");
    if (o->compute[0] && !iok_compute_traced(o) && list_ok(o->compute) < 0)
        return iok_error(IOK_EUSAGE, "--compute %s: give seconds >= 0, one number or a comma list",
                         o->compute);
    if (romio_collective(run))
        return iok_error(IOK_EUSAGE,
                         "%s: ROMIO 3.2.1's MPI_File_iwrite_at_all crashes (segfault) in OpenMPI "
                         "4.1: use --independent or OMPIO",
                         o->async ? "--async" : "--api nonblocking");
    if (o->async_reference && !o->async)
        return iok_error(IOK_EUSAGE, "--async-reference measures --async against synchronous "
                                     "iterations: add --async");
    if (o->async_reference && (o->iterations < 4 || o->iterations % 2))
        return iok_error(IOK_EUSAGE,
                         "--async-reference alternates --async and synchronous iterations in "
                         "ABBA order: give --iterations 4 or more, an even number (not %d)",
                         o->iterations);
    if (!o->async)
        return IOK_OK;
    if (!strcmp(be->name, "hdf5"))
        return iok_error(IOK_EUSAGE, "--async: the hdf5 backend has no asynchronous write (HDF5 "
                                     "1.10 has no asynchronous VOL): run without --async");
    if (!strcmp(be->name, "netcdf4"))
        return iok_error(IOK_EUSAGE, "--async: the netcdf4 backend has no asynchronous write "
                                     "(NetCDF-4 has none): run without --async");
    if (!(be->caps & IOK_CAP_NONBLOCKING) || (!be->wait && !(be->caps & IOK_CAP_NOIO)))
        return iok_error(IOK_EUSAGE,
                         "--async: the %s backend has no asynchronous write (no nonblocking "
                         "API): run without --async",
                         be->name);
    if (run->api != IOK_API_NONBLOCKING)
        return iok_error(IOK_EUSAGE,
                         "--async posts a step and completes it later: it needs --api "
                         "nonblocking, not --api %s",
                         iok_choice_name(IOK_API_CHOICES, o->api).s);
    return IOK_OK;
}

void
iok_pass_compute(struct iok_pass *p, int step)
{
    const struct iok_run *run = p->run;
    double s = iok_compute_traced(run->core) ? p->gap : iok_compute_at(run->core->compute, step);
    double f = run->core->compute_spread;
    if (f > 0 && run->nprocs > 1) /* unequal ranks, the mean kept */
        s *= 1 - f + 2 * f * run->rank / (run->nprocs - 1);
    if (s <= 0)
        return;
    iok_pass_start(p, IOK_PH_COMPUTE);
    double t0 = p->t0;
    if (run->core->compute_kind == IOK_COMPUTE_SPIN)
        iok_spin_seconds(s);
    else
        iok_sleep_seconds(s);
    iok_pass_stop(p, IOK_PH_COMPUTE);
    if (p->pending_file) /* a write in flight meanwhile */
        p->hidden += iok_now() - t0;
}

/* --async-reference runs one synchronous warm-up iteration first (0),
 * outside the overlap and the summaries: the first iteration pays for the
 * process's first file creation and the library's first open (measured: 2
 * to 15 times a later one at 128^3), and would always fall on one side. */
int
iok_iterations_run(const struct iok_core_opts *o)
{
    return o->iterations + (o->async_reference ? 1 : 0);
}

/* ABBA after the warm-up: pairs (async, sync), (sync, async), (async,
 * sync), ...: iterations 1 async, 2 and 3 synchronous, 4 and 5 async, ...
 * (as mix.c's alone and together), so a drift of the machine falls on both
 * sides alike. */
int
iok_iteration_async(const struct iok_core_opts *o, int iteration)
{
    if (!o->async)
        return 0;
    if (!o->async_reference)
        return 1;
    int k = iteration - 1; /* iteration 0: the synchronous warm-up */
    return k >= 0 && (k % 2 == 0) == ((k / 2) % 2 == 0);
}

int
iok_pass_defers(const struct iok_pass *p, const struct iok_reqlist *target)
{
    /* asked of a write step (a file's write pass or an interleaved group's);
     * with --async-reference only in the ABBA order's async iterations */
    return iok_iteration_async(p->run->core, p->iteration) && !target->untimed;
}

void
iok_pass_hold(struct iok_pass *p, struct iok_pass_file *pf, struct iok_reqlist **target,
              const struct iok_schema *s)
{
    int64_t b = iok_reqlist_bytes(*target, s);
    p->pending_max = b > p->pending_max ? b : p->pending_max;
    p->pending = **target;
    iok_reqlist_init(*target);
    *target = &p->pending;
    p->pending_file = pf;
}

int
iok_pass_complete(struct iok_pass *p)
{
    struct iok_pass_file *pf = p->pending_file;
    if (!pf)
        return IOK_OK;
    iok_pass_start(p, IOK_PH_WAIT);
    int wrc = IOK_FAULTED(IOK_PH_WAIT, pf->path)
                  ? IOK_EIO
                  : iok_pass_called(p, iok_backend_wait(p->run->backend, pf->h));
    iok_pass_stop(p, IOK_PH_WAIT);
    p->io_rc = p->io_rc ? p->io_rc : wrc;
    if (pf->sample) { /* the values, as the buffers hold them again after the wait */
        double t = iok_now();
        iok_wsample_take(pf->sample, pf->s, &p->pending);
        iok_pass_suite(p, t, 0);
    }
    p->pending_file = NULL;
    iok_reqlist_free(&p->pending);
    return wrc;
}
