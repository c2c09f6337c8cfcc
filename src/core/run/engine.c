/* SPDX-License-Identifier: BSD-3-Clause */
/* The pass engine (run.h): a file's pass and a group's interleaved pass
 * described as one list of steps over the files they open, then the same
 * phases for both: files, open, steps, flush, close, result. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/run/run.h"
#include "iokernels/error.h"

int iok_abandoned;
void (*iok_pass_hook)(int begin, enum iok_phase ph);

static void
add(struct iok_pass *p, double d, int is_agreement)
{
    if (is_agreement)
        p->agreed += d;
    else
        p->work += d;
    if (p->seg && p->cur < p->nseg)
        p->seg[p->cur] += d;
}

/* The suite's own time since `since`: in its segment, and in the rank's
 * totals (its work, or its time in agreements). */
void
iok_pass_suite(struct iok_pass *p, double since, int is_agreement)
{
    add(p, iok_now() - since, is_agreement);
}

/* --barriers phase: I/O phases start together, as IOR's -g: a barrier
 * (outside the timed region) so that the job time of a phase is its own
 * span, not the skew of the ranks' preceding work. A rank whose call
 * failed goes on to its agreement, which is bounded: its peers may be
 * inside the library's own collective that the failed call never entered
 * (HDF5's H5Dwrite), where a barrier would wait with them for ever. */
void
iok_pass_start(struct iok_pass *p, enum iok_phase ph)
{
    if (p->phase_barriers && iok_phase_is_io(ph) && p->io_rc == IOK_OK)
        iok_barrier(p->run->comm);
    if (iok_pass_hook)
        iok_pass_hook(1, ph);
    errno = 0; /* what the phase's call leaves is its own (iok_pass_called) */
    p->t0 = iok_now();
}

void
iok_pass_stop(struct iok_pass *p, enum iok_phase ph)
{
    double t1 = iok_now();
    if (iok_pass_hook)
        iok_pass_hook(0, ph);
    iok_timeline_add(&p->tl, ph, p->t0, t1);
    if (!iok_phase_is_io(ph))
        add(p, t1 - p->t0, 0);
}

/* An agreement inside the span: the suite's coordination, which no
 * original does. */
int
iok_pass_agree(struct iok_pass *p, int rc)
{
    double t = iok_now();
    if (rc && p->wpath)
        iok_note_full(p->wpath, p->err);
    rc = iok_agree(p->run->comm, rc);
    iok_pass_suite(p, t, 1);
    return rc;
}

/* The outcome of a backend call, with the system error it left (read at
 * once: MPI's progress engine and later calls overwrite errno). */
int
iok_pass_called(struct iok_pass *p, int rc)
{
    if (rc != IOK_OK && !p->err)
        p->err = errno;
    return rc;
}

/* Each file opened (created and defined when the pass writes it), in plan
 * order. On a failure the files already open are left open (see close). */
static int
open_files(struct iok_pass *p, struct iok_pass_result *out)
{
    const struct iok_backend *be = p->run->backend;
    (void)out;
    for (int i = 0; i < p->nfiles; i++) {
        struct iok_pass_file *f = &p->f[i];
        const int last = i == p->nfiles - 1, writing = f->mode & IOK_PF_WRITE;
        iok_pass_start(p, IOK_PH_OPEN);
        if (i == 0)
            p->open_start = p->t0;
        int rc = IOK_FAULTED(IOK_PH_OPEN, f->path) ? IOK_EIO
                 : writing                         ? be->create(&f->h, f->path, f->s, &f->params)
                                                   : be->open(&f->h, f->path, f->s, &f->params);
        iok_pass_stop(p, IOK_PH_OPEN);
        p->opened = iok_now();
        /* what follows the last "opened" mark is the steps' segments' */
        p->cur = last && !writing ? 1 : 0;
        if ((rc = iok_pass_agree(p, rc))) {
            iok_abandoned |= i > 0; /* the files open before it are left open */
            for (int j = 0; j < p->nfiles; j++)
                if (p->f[j].partial && p->f[j].mine) /* nothing written: not left behind */
                    iok_remove_output(p->f[j].path);
            return rc;
        }
        if (writing) {
            iok_pass_start(p, IOK_PH_DEFINE);
            rc = IOK_FAULTED(IOK_PH_DEFINE, f->path) ? IOK_EIO : be->define(f->h);
            iok_pass_stop(p, IOK_PH_DEFINE);
            p->opened = iok_now();
            p->cur = last ? 1 : 0;
            if ((rc = iok_pass_agree(p, rc)))
                return rc;
        }
    }
    return IOK_OK;
}

/* --fsync: each written file flushed (every rank enters the flush), then
 * the last step's outcome agreed on. */
static int
flush_files(struct iok_pass *p)
{
    const struct iok_backend *be = p->run->backend;
    for (int i = 0; i < p->nfiles && p->run->core->fsync; i++) {
        if (!(p->f[i].mode & IOK_PF_WRITE))
            continue;
        iok_pass_start(p, IOK_PH_FLUSH);
        int frc = iok_pass_called(p, be->flush(p->f[i].h));
        iok_pass_stop(p, IOK_PH_FLUSH);
        p->io_rc = p->io_rc ? p->io_rc : frc;
    }
    return iok_pass_agree(p, p->io_rc);
}

/* Every file closed, one agreement after all. After an agreed failure the
 * files are left open: a library's collective close after a failure on one
 * rank can wait forever (HDF5's metadata differ between the ranks after a
 * failed define), and the run ends with the error anyway, unfinalized
 * (main). */
static int
close_files(struct iok_pass *p, int rc)
{
    const struct iok_backend *be = p->run->backend;
    int opened = 0;
    for (int i = 0; i < p->nfiles; i++)
        opened |= p->f[i].h != NULL;
    if (!opened)
        return rc;
    if (rc != IOK_OK) {
        iok_abandoned = 1;
        for (int i = 0; i < p->nfiles; i++)
            p->f[i].h = NULL;
        return rc;
    }
    int crc = IOK_OK;
    for (int i = 0; i < p->nfiles; i++) {
        struct iok_pass_file *f = &p->f[i];
        iok_pass_start(p, IOK_PH_CLOSE);
        if (i == 0)
            p->close_start = p->t0;
        int c = IOK_FAULTED(IOK_PH_CLOSE, f->path) ? IOK_EIO : iok_pass_called(p, be->close(f->h));
        iok_pass_stop(p, IOK_PH_CLOSE);
        p->close_end = iok_now();
        f->h = NULL;
        if (c && (f->mode & IOK_PF_WRITE))
            iok_note_full(f->path, p->err);
        crc = crc ? crc : c;
    }
    crc = iok_agree(p->run->comm, crc);
    p->done = iok_now(); /* each rank's exit of the agreement after close */
    return crc;
}

/* The steps, in order; a stonewalled step ends them. */
static int
run_steps(struct iok_pass *p, struct iok_pass_result *out)
{
    for (int i = 0; i < p->nsteps; i++) {
        int outcome, rc = iok_pass_step(p, i, &outcome);
        if (rc)
            return rc;
        if (outcome == IOK_STEP_STONEWALLED) {
            out->stonewalled = 1;
            break;
        }
        out->steps_done += outcome == IOK_STEP_DONE;
    }
    iok_pass_complete(p); /* --async: the last step's wait, before flush and close */
    iok_pass_progress_end(p);
    p->cur = p->nseg - 1;
    return IOK_OK;
}

static void
free_pass(struct iok_pass *p)
{
    for (int i = 0; p->f && i < p->nfiles; i++) {
        iok_wsample_free(p->f[i].sample);
        free(p->f[i].tdims);
    }
    free(p->f);
    free(p->slot);
    free(p->own_steps);
    free(p->shifted);
    iok_reqlist_free(&p->rl);
    iok_reqlist_free(&p->io);
    iok_reqlist_free(&p->kept);
    if (!p->pending_file) /* else a failed pass left a request that may still use it */
        iok_reqlist_free(&p->pending);
    iok_timeline_free(&p->tl);
    free(p->seg);
}

/* The phases of every pass, from files checked to the result. */
static int
run_pass(struct iok_pass *p, struct iok_pass_result *out, int rc)
{
    const struct iok_run *run = p->run;
    rc = iok_pass_files(p, out, rc);
    if (rc)
        goto done;
    /* where the high-water mark cannot be reset it covers the whole process */
    int reset = iok_mem_reset_peak() == 0, all_reset;
    MPI_Allreduce(&reset, &all_reset, 1, MPI_INT, MPI_MIN, run->comm);
    out->peak_rss_process = !all_reset;
    /* all ranks start the pass together, unless --barriers none */
    if (run->core->barriers != IOK_BARRIERS_NONE)
        iok_barrier(run->comm);
    struct iok_osbytes os0, os1;
    iok_osbytes_now(&os0);
    out->steps_planned = p->planned;
    iok_pass_arm_signals(p);
    if ((rc = open_files(p, out))) {
        rc = close_files(p, rc);
        goto done;
    }
    p->loop = iok_now(); /* after the agreement: each rank's exit of it */
    double th = iok_now();
    iok_pass_take_hints(run, p->f[0].h, out); /* what the library made of the hints: not I/O */
    iok_pass_suite(p, th, 0);
    if ((rc = run_steps(p, out)) == IOK_OK)
        rc = flush_files(p);
    if ((rc = close_files(p, rc)))
        goto done;
    iok_signals_partial(NULL); /* closed: whole */
    for (int i = 0; i < p->nfiles; i++)
        if (p->f[i].mode & IOK_PF_WRITE)
            iok_fault_written(p->f[i].path); /* IOK_FAULT=written: a file that lost its data */
    iok_osbytes_now(&os1);
    iok_pass_reduce(p, &os0, &os1, out);
    if ((rc = iok_pass_check_written(p, out)) == IOK_OK)
        rc = iok_pass_mismatches(p, out);
done:
    iok_pass_remove_failed(p, rc);
    free_pass(p);
    return rc;
}

/* A pass's common start: its state, its timeline, one segment per step. */
static int
begin(struct iok_pass *p, const struct iok_kernel *k, const void *kopts, const struct iok_run *run,
      const struct iok_plan *plan, int iteration, int nfiles, int nsteps)
{
    *p = (struct iok_pass){.k = k,
                           .kopts = kopts,
                           .run = run,
                           .plan = plan,
                           .iteration = iteration,
                           .nfiles = nfiles,
                           .nsteps = nsteps,
                           .every = 1,
                           .kept_file = -1,
                           .seed = (uint64_t)run->core->seed,
                           .how = run->core->values,
                           .phase_barriers = run->core->barriers == IOK_BARRIERS_PHASE};
    if (run->core->shift_ranks && (p->shifted = malloc(sizeof *p->shifted))) {
        *p->shifted = *run;
        p->shifted->rank =
            (run->rank + run->core->shift_ranks % run->nprocs + run->nprocs) % run->nprocs;
    }
    iok_timeline_init(&p->tl);
    iok_reqlist_init(&p->rl);
    iok_reqlist_init(&p->io);
    iok_reqlist_init(&p->kept);
    iok_reqlist_init(&p->pending);
    p->nseg = nsteps + 2;
    p->seg = calloc((size_t)p->nseg, sizeof *p->seg);
    p->f = calloc((size_t)(nfiles ? nfiles : 1), sizeof *p->f);
    p->slot = malloc((size_t)(plan->nfiles ? plan->nfiles : 1) * sizeof *p->slot);
    for (int f = 0; p->slot && f < plan->nfiles; f++)
        p->slot[f] = -1;
    return p->seg && p->f && p->slot && (p->shifted || !run->core->shift_ranks)
               ? IOK_OK
               : iok_error(IOK_EIO, "out of memory for the pass of %s", plan->files[0].path);
}

/* Which side of --async-reference a write pass ran on: --async, or the
 * synchronous reference (its warm-up too), left out of the summaries. */
static void
mark_side(struct iok_pass_result *out, const struct iok_run *run, int writing, int iteration)
{
    out->async = writing && iok_iteration_async(run->core, iteration);
    out->reference = writing && run->core->async_reference && !out->async;
}

int
iok_run_pass(const struct iok_kernel *k, const void *kopts, const struct iok_run *run,
             const struct iok_plan *plan, int file, enum iok_op op, int iteration, int max_steps,
             struct iok_pass_result *out)
{
    const struct iok_file_plan *fp = &plan->files[file];
    const int writing = op == IOK_OP_WRITE;
    int planned = !fp->op_steps ? fp->nsteps : writing ? fp->nsteps_write : fp->nsteps_read;
    int nsteps = max_steps >= 0 && max_steps < planned ? max_steps : planned;
    struct iok_pass p;
    memset(out, 0, sizeof *out);
    out->op = op;
    out->file = file;
    out->iteration = iteration;
    mark_side(out, run, writing, iteration);
    snprintf(out->path, sizeof out->path, "%s", fp->path);
    int rc = begin(&p, k, kopts, run, plan, iteration, 1, nsteps);
    p.planned = planned;
    p.op = op;
    if (rc == IOK_OK && !(p.own_steps = calloc((size_t)(nsteps ? nsteps : 1), sizeof *p.steps)))
        rc = iok_error(IOK_EIO, "out of memory for the steps of %s", fp->path);
    for (int s = 0; rc == IOK_OK && s < nsteps; s++)
        p.own_steps[s] = (struct iok_filegroup_step){.file = file, .op = op, .step = s};
    p.steps = p.own_steps;
    if (rc == IOK_OK) {
        p.slot[file] = 0;
        p.f[0] = (struct iok_pass_file){.file = file, .mode = writing ? IOK_PF_WRITE : IOK_PF_READ};
        /* reading what a stonewalled write left: its records, not the plan's */
        rc = iok_pass_file_init(&p, &p.f[0], !writing && nsteps < planned ? nsteps : -1);
    }
    /* --agree-every K: the ranks meet every K steps, unless every rank must
     * enter the same library calls each step (collective transfers on a
     * shared file): there a failure must be known before the next step */
    if (run->core->agree_every > 1 && !(run->collective && !fp->per_rank))
        p.every = run->core->agree_every;
    out->agree_every = p.every;
    return run_pass(&p, out, rc);
}

/* Group g's files, in plan order, each opened for what its steps do. */
static int
group_files(struct iok_pass *p, const struct iok_filegroup *gr, struct iok_pass_result *out)
{
    const struct iok_backend *be = p->run->backend;
    int *mode = calloc((size_t)p->plan->nfiles + 1, sizeof *mode), shared = 0, rc = IOK_OK;
    p->nfiles = 0;
    if (!mode)
        return iok_error(IOK_EIO, "out of memory opening a group of %d files", p->plan->nfiles);
    for (int i = 0; i < gr->nsteps; i++)
        mode[gr->steps[i].file] |= gr->steps[i].op == IOK_OP_WRITE ? IOK_PF_WRITE : IOK_PF_READ;
    for (int file = 0; file < p->plan->nfiles && rc == IOK_OK; file++) {
        if (!mode[file])
            continue;
        const struct iok_file_plan *fp = &p->plan->files[file];
        size_t len = strlen(out->path);
        snprintf(out->path + len, sizeof out->path - len, "%s%s", len ? " + " : "", fp->path);
        if (mode[file] == (IOK_PF_WRITE | IOK_PF_READ) && !(be->caps & IOK_CAP_READWRITE)) {
            rc = iok_error(IOK_EIO,
                           "%s cannot open %s for reading and writing at once (a kernel "
                           "bug: it grouped the file's reads with its writes)",
                           be->name, fp->path);
            break;
        }
        struct iok_pass_file *f = &p->f[p->nfiles];
        p->slot[file] = p->nfiles++;
        *f = (struct iok_pass_file){.file = file, .mode = mode[file]};
        p->writes |= mode[file] & IOK_PF_WRITE;
        shared |= !fp->per_rank;
        rc = iok_pass_file_init(p, f, -1);
    }
    free(mode);
    if (rc == IOK_OK && p->run->core->agree_every > 1 && !(p->run->collective && shared))
        p->every = p->run->core->agree_every;
    return rc;
}

int
iok_run_filegroup(const struct iok_kernel *k, const void *kopts, const struct iok_run *run,
                  const struct iok_plan *plan, int group, int iteration,
                  struct iok_pass_result *out)
{
    const struct iok_filegroup *gr = &plan->filegroups[group];
    struct iok_pass p;
    memset(out, 0, sizeof *out);
    out->iteration = iteration;
    int rc = begin(&p, k, kopts, run, plan, iteration, plan->nfiles, gr->nsteps);
    p.group = 1;
    p.steps = gr->steps;
    p.planned = gr->nsteps;
    if (rc == IOK_OK && k->exchange) /* its lists move between ranks per file: not here */
        rc = iok_error(IOK_EIO,
                       "kernel %s has an exchange and a file group (a kernel bug: a "
                       "group runs the kernel's lists as they are)",
                       k->name);
    if (rc == IOK_OK)
        rc = group_files(&p, gr, out);
    else
        p.nfiles = 0;
    out->op = p.writes ? IOK_OP_WRITE : IOK_OP_READ;
    mark_side(out, run, p.writes, iteration);
    out->file = p.f && p.nfiles ? p.f[0].file : 0;
    out->agree_every = p.every;
    return run_pass(&p, out, rc);
}
