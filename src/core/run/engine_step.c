/* SPDX-License-Identifier: BSD-3-Clause */
/* One step of a pass (run.h): the kernel's list for one file's step,
 * its data, the exchange, the step's agreement, the post and the wait, each
 * alone in its timed region, then the check of what was read. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/run/run.h"
#include "iokernels/data.h"
#include "iokernels/error.h"

/* A line on rank 0's terminal per record, outside every timed region: only
 * when stderr is a terminal (logs and pipes stay clean) or IOK_PROGRESS=1
 * asks (mpiexec hands the ranks pipes, not the terminal); a file's pass of
 * several records only. */
static int
shown(const struct iok_pass *p, const struct iok_file_plan *fp)
{
    int e = iok_env_progress(); /* IOK_PROGRESS, checked at start-up */
    return p->run->rank == 0 && !p->group && fp->nsteps > 1 && (e >= 0 ? e : isatty(STDERR_FILENO));
}

static void
progress(const struct iok_pass *p, enum iok_op op, const struct iok_file_plan *fp, int step)
{
    if (!shown(p, fp))
        return;
    fprintf(stderr, "\r%s %s: record %d of %d", iok_op_names[op], fp->path, step + 1, fp->nsteps);
    fflush(stderr);
}

void
iok_pass_progress_end(const struct iok_pass *p)
{
    if (p->nfiles && shown(p, &p->plan->files[p->f[0].file]))
        fputc('\n', stderr);
}

/* The kernel's list for the step, checked, and the data a write hands over. */
static int
build(struct iok_pass *p, const struct iok_filegroup_step *st, const struct iok_schema *s)
{
    const struct iok_run *run = p->run;
    const int writing = st->op == IOK_OP_WRITE;
    const struct iok_run *who = !writing && p->shifted ? p->shifted : run;
    iok_pass_start(p, IOK_PH_REQUESTS);
    int rc = p->k->requests(p->kopts, who, p->plan, st->file, st->step, st->op, &p->rl);
    if (rc == IOK_OK)
        rc = iok_reqlist_check(&p->rl, s, p->plan->files[st->file].path);
    iok_pass_stop(p, IOK_PH_REQUESTS);
    if (p->io_rc) /* the previous step failed here: say so at the agreement */
        rc = p->io_rc;
    if (writing && rc == IOK_OK) {
        iok_pass_start(p, IOK_PH_DATAGEN);
        if (p->how == IOK_VALUES_ONCE && p->kept_file == st->file &&
            iok_reqlist_same_elements(&p->kept, &p->rl, s))
            iok_reqlist_take_buffers(&p->rl, &p->kept); /* they hold this step's values */
        else
            iok_data_fill(s, &p->rl, p->seed, p->how);
        iok_pass_stop(p, IOK_PH_DATAGEN);
    }
    return rc;
}

/* With an exchange the backend executes `io`, not the kernel's list. */
static int
exchange_out(struct iok_pass *p, const struct iok_filegroup_step *st, const struct iok_schema *s,
             int rc, struct iok_reqlist **target, int *agreed)
{
    if (!p->k->exchange)
        return rc;
    const int writing = st->op == IOK_OP_WRITE;
    enum iok_xstage xs = writing ? IOK_X_SEND : IOK_X_PREPARE;
    double t = iok_now();
    if (p->plan->exchange_is_handover) { /* nothing moves: the suite's own work, not I/O */
        if (rc == IOK_OK)
            rc = p->k->exchange(p->kopts, p->run, p->plan, st->file, st->step, xs, &p->rl, &p->io);
    } else { /* the exchange is collective: every rank enters it or none */
        iok_pass_suite(p, t, 0);
        if ((rc = iok_pass_agree(p, rc))) {
            *agreed = 1;
            return rc;
        }
        iok_pass_start(p, IOK_PH_EXCHANGE);
        rc = p->k->exchange(p->kopts, p->run, p->plan, st->file, st->step, xs, &p->rl, &p->io);
        iok_pass_stop(p, IOK_PH_EXCHANGE);
        t = iok_now();
    }
    if (rc == IOK_OK)
        rc = iok_reqlist_check(&p->io, s, p->plan->files[st->file].path);
    iok_pass_suite(p, t, 0);
    *target = &p->io;
    return rc;
}

/* A read's exchange hands the data back to the kernel's list. */
static int
exchange_back(struct iok_pass *p, const struct iok_filegroup_step *st)
{
    if (!p->k->exchange || st->op == IOK_OP_WRITE)
        return IOK_OK;
    int rc;
    if (p->plan->exchange_is_handover) {
        double t = iok_now();
        rc = p->k->exchange(p->kopts, p->run, p->plan, st->file, st->step, IOK_X_RETURN, &p->rl,
                            &p->io);
        iok_pass_suite(p, t, 0);
    } else {
        iok_pass_start(p, IOK_PH_EXCHANGE);
        rc = p->k->exchange(p->kopts, p->run, p->plan, st->file, st->step, IOK_X_RETURN, &p->rl,
                            &p->io);
        iok_pass_stop(p, IOK_PH_EXCHANGE);
    }
    return rc;
}

/* The post and the wait, each alone in its timed region (a step the kernel
 * marks untimed, the suite's own, counted as its work); *posted, *waited:
 * the rank's clock around them. A rank whose post failed still enters the
 * wait and the exchange (the same collectives as the others); its failure
 * reaches the others at the agreement after them. */
static void
transfer(struct iok_pass *p, struct iok_pass_file *pf, int writing, struct iok_reqlist *target,
         int defer, double *posted, double *waited)
{
    const struct iok_backend *be = p->run->backend;
    const int untimed = target->untimed;
    if (target->paced) { /* a paced replay's traced start: not I/O */
        double t = iok_now();
        iok_reqlist_pace(target);
        iok_pass_suite(p, t, 0);
    }
    *posted = untimed ? iok_now() : (iok_pass_start(p, IOK_PH_POST), p->t0);
#ifdef IOK_ENGINE_PLANTED /* tests/unit/test_engine_planted.c: the suite's work in a timed region  \
                           */
    struct iok_reqlist junk;
    iok_reqlist_init(&junk);
    p->k->requests(p->kopts, p->run, p->plan, p->steps[0].file, 0, p->steps[0].op, &junk);
    iok_reqlist_free(&junk);
#endif
    p->io_rc =
        IOK_FAULTED(IOK_PH_POST, pf->path)
            ? IOK_EIO
            : iok_pass_called(p, be->xfer(pf->h, writing ? IOK_DIR_WRITE : IOK_DIR_READ, target));
    if (!untimed) {
        iok_pass_stop(p, IOK_PH_POST);
        if (defer) { /* --async: waited for after the compute (compute.c) */
            *waited = iok_now();
            return;
        }
        iok_pass_start(p, IOK_PH_WAIT);
    }
    int wrc = IOK_FAULTED(IOK_PH_WAIT, pf->path) ? IOK_EIO
                                                 : iok_pass_called(p, iok_backend_wait(be, pf->h));
    *waited = iok_now();
    if (untimed)
        iok_pass_suite(p, *posted, 0);
    else
        iok_pass_stop(p, IOK_PH_WAIT);
    p->io_rc = p->io_rc ? p->io_rc : wrc;
}

/* The request log (--export-replay): the first iteration's calls as made.
 * A rank that joins a collective call with nothing made that call (the
 * replay's score sees it); an independent call with nothing to move is not
 * made (mpiio) and not logged. */
static void
log_calls(struct iok_pass *p, const struct iok_filegroup_step *st, const struct iok_schema *s,
          const struct iok_reqlist *target, double posted, double waited)
{
    const struct iok_run *run = p->run;
    const struct iok_backend *be = run->backend;
    int level = target->level == IOK_LEVEL_RUN || !(be->caps & IOK_CAP_CALL_LEVEL)
                    ? (run->collective ? IOK_LEVEL_COLL : IOK_LEVEL_INDEP)
                    : (int)target->level;
    int made = level == IOK_LEVEL_COLL || iok_reqlist_bytes(target, s) > 0;
    if (iok_log && p->io_rc == IOK_OK && !target->untimed && made && st->op != IOK_OP_VERIFY &&
        p->iteration == 0) {
        double t = iok_now();
        p->io_rc = iok_reqlog_add(iok_log, run->rank, s, st->file, st->op == IOK_OP_WRITE, level,
                                  posted, waited, target);
        iok_pass_suite(p, t, 0);
    }
}

/* What the step moved, and the lists it leaves (--values once keeps a
 * write's, whose buffers the next step of the file may write again). */
static void
count(struct iok_pass *p, struct iok_pass_file *pf, const struct iok_filegroup_step *st,
      const struct iok_schema *s, const struct iok_reqlist *target)
{
    const int writing = st->op == IOK_OP_WRITE;
    if (!target->untimed) { /* bytes and requests as the backend executed them */
        for (int a = 0; a < target->n; a++)
            p->nreq += target->acc[a].nsub;
        int64_t b = iok_reqlist_bytes(target, s);
        p->bytes += b;
        pf->wbytes += writing ? b : 0;
    }
    iok_reqlist_free(&p->kept);
    if (p->how == IOK_VALUES_ONCE && writing) {
        p->kept = p->rl;
        p->kept_file = st->file;
        iok_reqlist_init(&p->rl);
    }
    iok_reqlist_free(&p->rl);
    iok_reqlist_free(&p->io);
}

int
iok_pass_step(struct iok_pass *p, int i, int *outcome)
{
    const struct iok_run *run = p->run;
    const struct iok_backend *be = run->backend;
    const struct iok_filegroup_step *st = &p->steps[i];
    struct iok_pass_file *pf = &p->f[p->slot[st->file]];
    const struct iok_schema *s = pf->s;
    const int writing = st->op == IOK_OP_WRITE;
    const int checking = !(be->caps & IOK_CAP_NOIO) &&
                         (st->op == IOK_OP_VERIFY || (st->op == IOK_OP_READ && run->core->verify));
    const int meet = i % p->every == 0;
    /* after the step's I/O, before the suite's CPU work (see below) */
    const int meet_io = run->nprocs > 1 && i % p->every == p->every - 1 &&
                        (checking || (writing && i + 1 < p->nsteps));
    p->cur = 1 + i;
    iok_pass_complete(p); /* --async: the previous step's wait, before this step's list */
    p->wpath = writing && !(be->caps & IOK_CAP_NOIO) ? pf->path : NULL;
    *outcome = IOK_STEP_SKIPPED;
    struct iok_reqlist *target = &p->rl;
    int agreed = 0; /* a collective exchange's agreement before it failed: every rank knows */
    int rc = exchange_out(p, st, s, build(p, st, s), &target, &agreed);
    p->gap = p->rl.gap; /* --compute traced: the kernel's, before the lists move on */
    const int app_step = !target->untimed; /* not the suite's own (a replay's fill) */
    if (agreed)
        return rc;
    /* one agreement per step, untimed: the lists, the call counts, the deadline */
    int stop_now = meet && run->core->deadline > 0 && i > 0 &&
                   iok_now() - p->open_start >= run->core->deadline;
    double t = iok_now();
    if (rc && writing)
        iok_note_full(pf->path, p->err);
    rc = iok_step_agree(run, run->comm, pf->h, !pf->per_rank, rc, target, &stop_now, meet);
    iok_pass_suite(p, t, 1);
    if (rc && !meet) { /* said at the next meeting; this rank posts nothing till then */
        p->io_rc = rc;
        iok_reqlist_free(&p->rl);
        iok_reqlist_free(&p->io);
        return meet_io ? iok_pass_agree(p, p->io_rc) : IOK_OK; /* the others meet there */
    }
    if (rc)
        return rc;
    if (stop_now) { /* stonewalled: no rank posts this step */
        *outcome = IOK_STEP_STONEWALLED;
        iok_reqlist_free(&p->rl);
        iok_reqlist_free(&p->io);
        return IOK_OK;
    }
    double posted, waited;
    const int defer = writing && iok_pass_defers(p, target);
    transfer(p, pf, writing, target, defer, &posted, &waited);
    if (defer) /* its buffers stay alive until its wait */
        iok_pass_hold(p, pf, &target, s);
    /* what the backend was handed, for the check after the pass; a deferred
     * step's after its wait (compute.c): PnetCDF byte-swaps a pending
     * iput's buffer in place until then */
    if (pf->sample && !defer) {
        t = iok_now();
        iok_wsample_take(pf->sample, s, target);
        iok_pass_suite(p, t, 0);
    }
    log_calls(p, st, s, target, posted, waited);
    int xrc = exchange_back(p, st);
    p->io_rc = p->io_rc ? p->io_rc : xrc;
    /* Every rank ends the step's I/O here before any rank starts the
     * suite's CPU work that follows (checking these values, generating the
     * next step's data): with more ranks than cores that work would run
     * beside a slower rank's I/O (an aggregator still writing) and slow it
     * down, a cost no original has. The suite's time; it also ends a failed
     * step at once. */
    if (meet_io && (rc = iok_pass_agree(p, p->io_rc)))
        return rc;
    if (checking && p->io_rc == IOK_OK) {
        iok_pass_start(p, IOK_PH_CHECK);
        p->bad += iok_data_check(s, &p->rl, p->seed, p->how, &p->checked, p->first_bad,
                                 sizeof p->first_bad);
        iok_pass_stop(p, IOK_PH_CHECK);
    }
    count(p, pf, st, s, target);
    /* --compute: after each of the application's write steps (an
     * interleaved group's too), outside the timed I/O */
    if (writing && app_step)
        iok_pass_compute(p, st->step);
    *outcome = IOK_STEP_DONE;
    progress(p, st->op, &p->plan->files[st->file], st->step);
    return IOK_OK;
}
