/* SPDX-License-Identifier: BSD-3-Clause */
/* One pass over one file: the only place where backend calls are timed.
 * Each timed region holds one backend call and nothing else; request
 * building, data generation and checking are timed as their own phases.
 * Ranks agree on the outcome outside the timed regions (after open, define
 * and close, once per step before its post, and after the last step), so a
 * failure on one rank ends the pass everywhere. The pass's time is its
 * open->close span (IOR's convention), less the suite's own work in it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "iokernels/data.h"
#include "iokernels/error.h"

int iok_abandoned;

/* Refuses to clobber a file the run did not create, and to write where it
 * cannot. Rank 0 looks; the caller agrees. Without --overwrite the path is
 * claimed at once (O_CREAT | O_EXCL, or mkdir for ADIOS2's folder): of two
 * runs started together one claims it and the other is told it exists
 * (a test of existence, then a create, let both through). *claimed: this
 * call made the path (empty), to remove if the pass fails before writing. */
int
iok_check_output_path(const char *path, int overwrite, int folder, int *claimed)
{
    char dir[PATH_MAX];
    iok_dirname(path, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0)
        return iok_error(IOK_EUSAGE,
                         "output directory %s does not exist: create it or choose another", dir);
    if (!S_ISDIR(st.st_mode))
        return iok_error(IOK_EUSAGE, "output directory %s is not a directory: choose another", dir);
    if (access(dir, W_OK) != 0)
        return iok_error(IOK_EUSAGE, "output directory %s is not writable (%s): choose another",
                         dir, strerror(errno));
    if (overwrite)
        return IOK_OK;
    int fd = -1;
    if (folder ? mkdir(path, 0755) == 0
               : (fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)) >= 0) {
        if (fd >= 0)
            close(fd);
        *claimed = 1;
        return IOK_OK;
    }
    if (errno == EEXIST)
        return iok_error(IOK_EUSAGE,
                         "output file %s exists: pass --overwrite to replace it, or remove it",
                         path);
    return iok_error(IOK_EUSAGE, "cannot create output file %s (%s): choose another", path,
                     strerror(errno));
}

/* A line on rank 0's terminal per record, outside every timed region: only
 * when stderr is a terminal (logs and pipes stay clean) or IOK_PROGRESS=1
 * asks (mpiexec hands the ranks pipes, not the terminal). */
static int
show_progress(void)
{
    int e = iok_env_progress(); /* IOK_PROGRESS, checked at start-up */
    return e >= 0 ? e : isatty(STDERR_FILENO);
}

static void
progress(const struct iok_run *run, enum iok_op op, const struct iok_file_plan *fp, int step)
{
    if (run->rank != 0 || fp->nsteps < 2 || !show_progress())
        return;
    fprintf(stderr, "\r%s %s: record %d of %d", iok_op_names[op], fp->path, step + 1, fp->nsteps);
    fflush(stderr);
}

/* The suite's own time inside the span is kept per segment: segment 0 is
 * open and define, 1 + s is step s, nseg - 1 what follows the last step.
 * Ranks meet at an agreement at the end of each, so every rank has the
 * same segments; the job's span subtracts, per segment, the least any rank
 * spent (the rank on the critical path waits least at an agreement: what
 * every rank spent there is the suite's cost, not the I/O's). */
struct pass_state {
    const struct iok_run *run;
    struct iok_timeline tl;
    double t0;
    int phase_barriers; /* --barriers phase */
    double work;        /* this rank's request lists, data, checks, hand-overs */
    double agreed;      /* this rank's time in the core's agreements */
    double *seg;        /* per segment: work + agreements */
    int nseg, cur;
    const char *wpath; /* a write pass's file: a failure there names a full disk */
    int io_rc;         /* this rank's last post/wait outcome, not yet agreed on */
    int err;           /* errno right after the call that failed (0: none) */
};

/* The outcome of a backend call, with the system error it left (read at
 * once: MPI's progress engine and later calls overwrite errno). */
static int
called(struct pass_state *ps, int rc)
{
    if (rc != IOK_OK && !ps->err)
        ps->err = errno;
    return rc;
}

static void
suite_add(struct pass_state *ps, double d, int is_agreement)
{
    if (is_agreement)
        ps->agreed += d;
    else
        ps->work += d;
    if (ps->seg && ps->cur < ps->nseg)
        ps->seg[ps->cur] += d;
}

/* --barriers phase: I/O phases start together, as IOR's -g: a barrier
 * (outside the timed region) so that the job time of a phase is its own
 * span, not the skew of the ranks' preceding work. */
static void
start(struct pass_state *ps, enum iok_phase p)
{
    /* A rank whose call failed goes on to its agreement, which is bounded:
     * its peers may be inside the library's own collective that the failed
     * call never entered (HDF5's H5Dwrite), where a barrier would wait with
     * them for ever. */
    if (ps->phase_barriers && iok_phase_is_io(p) && ps->io_rc == IOK_OK)
        iok_barrier(ps->run->comm);
    errno = 0; /* what the phase's call leaves is its own (called()) */
    ps->t0 = iok_now();
}

static void
stop(struct pass_state *ps, enum iok_phase p)
{
    double t1 = iok_now();
    iok_timeline_add(&ps->tl, p, ps->t0, t1);
    if (!iok_phase_is_io(p))
        suite_add(ps, t1 - ps->t0, 0);
}

/* Work of the suite inside the span that is no phase of its own (a
 * kernel's list hand-over, checks of exchanged lists). */
static double
suite_begin(void)
{
    return iok_now();
}

static void
suite_end(struct pass_state *ps, double t)
{
    suite_add(ps, iok_now() - t, 0);
}

/* An agreement inside the span: the suite's coordination, which no
 * original does. */
static int
agree(struct pass_state *ps, int rc)
{
    double t = suite_begin();
    if (rc && ps->wpath)
        iok_note_full(ps->wpath, ps->err);
    rc = iok_agree(ps->run->comm, rc);
    suite_add(ps, iok_now() - t, 1);
    return rc;
}

int
iok_run_pass(const struct iok_kernel *k, const void *kopts, const struct iok_run *run,
             const struct iok_plan *plan, int file, enum iok_op op, int iteration, int max_steps,
             struct iok_pass_result *out)
{
    const struct iok_backend *be = run->backend;
    const struct iok_file_plan *fp = &plan->files[file];
    const struct iok_schema *s = &fp->schema;
    struct iok_schema trimmed;
    struct iok_dim *tdims = NULL;
    const int writing = op == IOK_OP_WRITE;
    /* a backend that moves no bytes has nothing to check */
    const int checking = !(be->caps & IOK_CAP_NOIO) &&
                         (op == IOK_OP_VERIFY || (op == IOK_OP_READ && run->core.verify));
    const uint64_t seed = (uint64_t)run->core.seed;
    const enum iok_values how = iok_values_named(run->core.values);
    struct iok_backend_params params = {run->comm, run->collective, run->api, run->backend_opts,
                                        run->hints};
    struct pass_state ps = {.run = run, .phase_barriers = !strcmp(run->core.barriers, "phase")};
    const int handover = k->exchange && plan->exchange_is_handover;
    int planned = !fp->op_steps ? fp->nsteps : writing ? fp->nsteps_write : fp->nsteps_read;
    int nsteps = max_steps >= 0 && max_steps < planned ? max_steps : planned;
    double open_start = 0, opened = 0, close_start = 0, close_end = 0, loop = 0, done = 0;
    /* reading what a stonewalled write left: its records, not the plan's */
    if (!writing && nsteps < planned && s->ndims > 0 &&
        (tdims = malloc((size_t)s->ndims * sizeof *tdims))) {
        trimmed = *s;
        memcpy(tdims, s->dims, (size_t)s->ndims * sizeof *tdims);
        for (int d = 0; d < s->ndims; d++)
            if (tdims[d].unlimited && tdims[d].len > nsteps)
                tdims[d].len = nsteps;
        trimmed.dims = tdims;
        s = &trimmed;
    }
    /* --values once: the last step's list, whose buffers hold the values */
    struct iok_reqlist rl, io, kept;
    void *h = NULL;
    int64_t bytes = 0, nreq = 0, checked = 0, bad = 0;
    char first_bad[512] = "";
    int rc = IOK_OK;
    /* what this rank wrote, read back after the pass (write_sample.c) */
    int readback = writing && !(be->caps & IOK_CAP_NOIO) && !(k->flags & IOK_KERNEL_NO_READBACK);
    struct iok_wsample *sample = readback ? iok_wsample_new(s, seed, run->rank) : NULL;

    memset(out, 0, sizeof *out);
    out->op = op;
    out->file = file;
    out->iteration = iteration;
    snprintf(out->path, sizeof out->path, "%s", fp->path);
    iok_timeline_init(&ps.tl);
    ps.nseg = nsteps + 2;
    ps.seg = calloc((size_t)ps.nseg, sizeof *ps.seg);
    iok_reqlist_init(&rl);
    iok_reqlist_init(&io);
    iok_reqlist_init(&kept);

    /* the file this rank opens: the shared one, or its own (file per process) */
    char path[IOK_OPT_STRLEN + 16];
    snprintf(path, sizeof path, "%s", fp->path);
    if (fp->per_rank) {
        int shift = writing ? 0 : fp->read_shift % run->nprocs;
        snprintf(path, sizeof path, "%s.%d", fp->path,
                 (run->rank + shift + run->nprocs) % run->nprocs);
        params.comm = MPI_COMM_SELF;
    }
    if (writing && !(be->caps & IOK_CAP_NOIO))
        ps.wpath = path;
    iok_signals_doing(writing             ? "the write"
                      : op == IOK_OP_READ ? "the read"
                                          : "the verify read-back",
                      path);
    /* the output a signal removes: one this run creates (without
     * --overwrite a later iteration's file is the first one's) */
    int partial = writing && !(be->caps & IOK_CAP_NOIO) && (run->rank == 0 || fp->per_rank) &&
                  (access(path, F_OK) != 0 || (iteration > 0 && !run->core.overwrite));
    /* a later iteration's file is the run's (removed before it: iteration_reset.c) */
    int claimed = 0;
    if ((run->rank == 0 || fp->per_rank) && !(be->caps & IOK_CAP_NOIO))
        rc = writing ? iok_check_output_path(path, run->core.overwrite || iteration > 0,
                                             !strcmp(be->name, "adios2"), &claimed)
                     : iok_check_input_kind(path, be->name, s);
    if (rc == IOK_OK && writing && (run->rank == 0 || fp->per_rank) && !(be->caps & IOK_CAP_NOIO))
        rc = iok_check_output_room(path, be->name, s, fp->per_rank ? run->nprocs : 1,
                                   run->core.overwrite || iteration > 0);
    if (rc == IOK_OK && (!ps.seg || (readback && !sample)))
        rc = iok_error(IOK_EIO, "out of memory for the timeline of %s", path);
    /* every rank removes a shared partial output on a signal (the first
     * one that can: mpiexec kills the others soon after) */
    int created[1] = {fp->per_rank ? 0 : partial};
    if ((rc = iok_agree_max(run->comm, rc, created, 1))) {
        if (claimed) /* the empty file this pass made, nothing written */
            iok_remove_output(path);
        goto done;
    }
    if (!fp->per_rank)
        partial = created[0];
    out->created = writing && partial;
    if (writing && !(be->caps & IOK_CAP_NOIO))
        snprintf(out->start_state, sizeof out->start_state, "%s",
                 out->created
                     ? "new file"
                     : "existing file: not the run's, truncated by the create (--overwrite)");
    /* no pass pays for the writeback of the one before it (iteration_reset.c) */
    if (!(be->caps & IOK_CAP_NOIO)) {
        iok_sync_node(run->comm, path);
        out->synced_before = 1;
    }
    if (!writing && run->core.drop_caches && !(be->caps & IOK_CAP_NOIO))
        iok_drop_caches(run->comm, path, fp->per_rank, out->cache, sizeof out->cache);

    /* --shift-ranks K: a read asks for what rank (r + K) mod P wrote (IOR's -C) */
    struct iok_run shifted = *run;
    if (!writing && run->core.shift_ranks)
        shifted.rank =
            (run->rank + run->core.shift_ranks % run->nprocs + run->nprocs) % run->nprocs;

    struct iok_osbytes os0, os1;
    /* where the high-water mark cannot be reset it covers the whole process */
    int reset = iok_mem_reset_peak() == 0, all_reset;
    MPI_Allreduce(&reset, &all_reset, 1, MPI_INT, MPI_MIN, run->comm);
    out->peak_rss_process = !all_reset;
    /* all ranks start the pass together, unless --barriers none */
    if (strcmp(run->core.barriers, "none") != 0)
        iok_barrier(run->comm);
    iok_osbytes_now(&os0);
    out->steps_planned = planned;

    if (partial)
        iok_signals_partial(path);
    start(&ps, IOK_PH_OPEN);
    open_start = ps.t0;
    rc = IOK_FAULTED(IOK_PH_OPEN, path) ? IOK_EIO
         : writing                      ? be->create(&h, path, s, &params)
                                        : be->open(&h, path, s, &params);
    stop(&ps, IOK_PH_OPEN);
    opened = iok_now();
    /* what follows the last "opened" mark is the steps' segments' */
    ps.cur = writing ? 0 : 1;
    if ((rc = agree(&ps, rc))) {
        if (partial) /* the file this run created, nothing written: not left behind */
            iok_remove_output(path);
        goto done;
    }
    if (writing) {
        start(&ps, IOK_PH_DEFINE);
        rc = IOK_FAULTED(IOK_PH_DEFINE, path) ? IOK_EIO : be->define(h);
        stop(&ps, IOK_PH_DEFINE);
        opened = iok_now();
        ps.cur = 1;
        if ((rc = agree(&ps, rc)))
            goto close;
    }
    loop = iok_now(); /* after the agreement: each rank's exit of it */
    double th = suite_begin();
    iok_pass_take_hints(run, h, out); /* what the library made of the hints: not I/O */
    suite_end(&ps, th);

    /* --agree-every K: the ranks meet every K steps, unless every rank must
     * enter the same library calls each step (collective transfers on a
     * shared file): there a failure must be known before the next step */
    const int every = run->core.agree_every > 1 && !(run->collective && !fp->per_rank)
                          ? run->core.agree_every
                          : 1;
    out->agree_every = every;
    for (int step = 0; step < nsteps; step++) {
        ps.cur = 1 + step;
        const int meet = step % every == 0;
        /* after the step's I/O, before the suite's CPU work (see below) */
        const int meet_io = run->nprocs > 1 && step % every == every - 1 &&
                            (checking || (writing && step + 1 < nsteps));
        start(&ps, IOK_PH_REQUESTS);
        rc = k->requests(kopts, &shifted, plan, file, step, op, &rl);
        if (rc == IOK_OK)
            rc = iok_reqlist_check(&rl, s, fp->path);
        stop(&ps, IOK_PH_REQUESTS);
        if (ps.io_rc) /* the previous step failed here: say so at the agreement */
            rc = ps.io_rc;
        if (writing && rc == IOK_OK) {
            start(&ps, IOK_PH_DATAGEN);
            if (how == IOK_VALUES_ONCE && iok_reqlist_same_elements(&kept, &rl, s))
                iok_reqlist_take_buffers(&rl, &kept); /* they hold this step's values */
            else
                iok_data_fill(s, &rl, seed, how);
            stop(&ps, IOK_PH_DATAGEN);
        }
        /* with an exchange, the backend executes `io`, not the kernel's list */
        struct iok_reqlist *target = &rl;
        if (k->exchange) {
            enum iok_xstage xs = writing ? IOK_X_SEND : IOK_X_PREPARE;
            double t = suite_begin();
            if (handover) { /* nothing moves: the suite's own work, not I/O */
                if (rc == IOK_OK)
                    rc = k->exchange(kopts, run, plan, file, step, xs, &rl, &io);
            } else { /* the exchange is collective: every rank enters it or none */
                suite_end(&ps, t);
                if ((rc = agree(&ps, rc)))
                    goto close;
                start(&ps, IOK_PH_EXCHANGE);
                rc = k->exchange(kopts, run, plan, file, step, xs, &rl, &io);
                stop(&ps, IOK_PH_EXCHANGE);
                t = suite_begin();
            }
            if (rc == IOK_OK)
                rc = iok_reqlist_check(&io, s, fp->path);
            suite_end(&ps, t);
            target = &io;
        }
        /* one agreement per step, untimed: the lists, the call counts, the deadline */
        int stop_now = meet && run->core.deadline > 0 && step > 0 &&
                       iok_now() - open_start >= run->core.deadline;
        double t = suite_begin();
        if (rc && writing)
            iok_note_full(path, ps.err);
        rc = iok_step_agree(run, run->comm, h, !fp->per_rank, rc, target, &stop_now, meet);
        suite_add(&ps, iok_now() - t, 1);
        if (rc && !meet) { /* said at the next meeting; this rank posts nothing till then */
            ps.io_rc = rc;
            iok_reqlist_free(&rl);
            iok_reqlist_free(&io);
            if (meet_io && (rc = agree(&ps, ps.io_rc))) /* the others meet there */
                goto close;
            rc = IOK_OK;
            continue;
        }
        if (rc)
            goto close;
        if (stop_now) { /* stonewalled: no rank posts this step */
            out->stonewalled = 1;
            iok_reqlist_free(&rl);
            iok_reqlist_free(&io);
            break;
        }
        /* A rank whose post failed still enters the wait and the exchange
         * (the same collectives as the others); its failure reaches the
         * others at the agreement after them. */
        /* the suite's own step (iok_reqlist.untimed): its calls are its work */
        const int untimed = target->untimed;
        if (target->paced) { /* a paced replay's traced start: not I/O */
            t = suite_begin();
            iok_reqlist_pace(target);
            suite_end(&ps, t);
        }
        double posted = untimed ? suite_begin() : (start(&ps, IOK_PH_POST), ps.t0);
        ps.io_rc = IOK_FAULTED(IOK_PH_POST, path)
                       ? IOK_EIO
                       : called(&ps, be->xfer(h, writing ? IOK_DIR_WRITE : IOK_DIR_READ, target));
        if (!untimed) {
            stop(&ps, IOK_PH_POST);
            start(&ps, IOK_PH_WAIT);
        }
        int wrc = IOK_FAULTED(IOK_PH_WAIT, path) ? IOK_EIO : called(&ps, iok_backend_wait(be, h));
        double waited = iok_now();
        if (untimed)
            suite_end(&ps, posted);
        else
            stop(&ps, IOK_PH_WAIT);
        ps.io_rc = ps.io_rc ? ps.io_rc : wrc;
        if (sample) { /* what the backend was handed, for the check after the pass */
            double t = suite_begin();
            iok_wsample_take(sample, s, target);
            suite_end(&ps, t);
        }
        int level = target->level == IOK_LEVEL_RUN || !(be->caps & IOK_CAP_CALL_LEVEL)
                        ? (run->collective ? IOK_LEVEL_COLL : IOK_LEVEL_INDEP)
                        : (int)target->level;
        /* A rank that joins a collective call with nothing made that call:
         * logged (the replay's score sees it). An independent call with
         * nothing to move is not made (mpiio) and not logged. */
        int made = level == IOK_LEVEL_COLL || iok_reqlist_bytes(target, s) > 0;
        if (iok_log && ps.io_rc == IOK_OK && !untimed && made && op != IOK_OP_VERIFY &&
            iteration == 0) {
            double t = suite_begin();
            ps.io_rc =
                iok_reqlog_add(iok_log, run->rank, s, file, writing, level, posted, waited, target);
            suite_end(&ps, t);
        }
        if (k->exchange && !writing) {
            if (handover) {
                t = suite_begin();
                wrc = k->exchange(kopts, run, plan, file, step, IOK_X_RETURN, &rl, &io);
                suite_end(&ps, t);
            } else {
                start(&ps, IOK_PH_EXCHANGE);
                wrc = k->exchange(kopts, run, plan, file, step, IOK_X_RETURN, &rl, &io);
                stop(&ps, IOK_PH_EXCHANGE);
            }
            ps.io_rc = ps.io_rc ? ps.io_rc : wrc;
        }
        /* Every rank ends the step's I/O here before any rank starts the
         * suite's CPU work that follows (checking these values, generating
         * the next step's data): with more ranks than cores that work would
         * run beside a slower rank's I/O (an aggregator still writing) and
         * slow it down, a cost no original has. The suite's time; it also
         * ends a failed step at once. */
        if (meet_io && (rc = agree(&ps, ps.io_rc)))
            goto close;
        if (checking && ps.io_rc == IOK_OK) {
            start(&ps, IOK_PH_CHECK);
            bad += iok_data_check(s, &rl, seed, how, &checked, first_bad, sizeof first_bad);
            stop(&ps, IOK_PH_CHECK);
        }
        /* bytes as the backend moved them; requests as the backend executed them */
        for (int i = 0; i < target->n && !untimed; i++)
            nreq += target->acc[i].nsub;
        bytes += untimed ? 0 : iok_reqlist_bytes(target, s);
        iok_reqlist_free(&kept);
        if (how == IOK_VALUES_ONCE && writing) { /* the next step may write its buffers again */
            kept = rl;
            iok_reqlist_init(&rl);
        }
        iok_reqlist_free(&rl);
        iok_reqlist_free(&io);
        out->steps_done++;
        progress(run, op, fp, step);
    }
    if (run->rank == 0 && fp->nsteps > 1 && show_progress())
        fputc('\n', stderr);
    ps.cur = ps.nseg - 1;
    /* the last step's outcome, with --fsync's (every rank enters the flush) */
    if (writing && run->core.fsync) {
        start(&ps, IOK_PH_FLUSH);
        int frc = called(&ps, be->flush(h));
        stop(&ps, IOK_PH_FLUSH);
        ps.io_rc = ps.io_rc ? ps.io_rc : frc;
    }
    if ((rc = agree(&ps, ps.io_rc)))
        goto close;

close:
    if (h && rc != IOK_OK) {
        /* Every rank agreed on a failure: the file is left open. A library's
         * collective close after a failure on one rank can wait forever
         * (HDF5's metadata differ between the ranks after a failed define),
         * and the run ends with the error anyway, unfinalized (main). */
        iok_abandoned = 1;
        h = NULL;
    }
    if (h) {
        /* Every rank holds a handle here: open/create failures went to done. */
        int crc;
        start(&ps, IOK_PH_CLOSE);
        close_start = ps.t0;
        crc = IOK_FAULTED(IOK_PH_CLOSE, path) ? IOK_EIO : called(&ps, be->close(h));
        stop(&ps, IOK_PH_CLOSE);
        close_end = iok_now();
        if (crc && writing)
            iok_note_full(path, ps.err);
        crc = iok_agree(run->comm, crc);
        done = iok_now(); /* each rank's exit of the agreement after close */
        if (rc == IOK_OK)
            rc = crc;
    }
    if (rc)
        goto done;

    iok_signals_partial(NULL); /* closed: whole */
    if (writing)
        iok_fault_written(path); /* IOK_FAULT=written: a file that lost its data */
    iok_osbytes_now(&os1);
    int64_t osd[4] = {os1.rchar - os0.rchar, os1.wchar - os0.wchar, os1.read_bytes - os0.read_bytes,
                      os1.write_bytes - os0.write_bytes},
            oss[4], osmin[4];
    MPI_Allreduce(osd, oss, 4, MPI_INT64_T, MPI_SUM, run->comm);
    MPI_Allreduce(&os0.rchar, osmin, 1, MPI_INT64_T, MPI_MIN, run->comm);
    out->os = osmin[0] < 0 ? (struct iok_osbytes){-1, -1, -1, -1}
                           : (struct iok_osbytes){oss[0], oss[1], oss[2], oss[3]};
    if (!writing && !(be->caps & IOK_CAP_NOIO)) /* each node's counts, for the verdict */
        iok_read_nodes(run->comm, path, bytes, os0.read_bytes < 0 ? -1 : osd[2], out);
    iok_timeline_reduce(&ps.tl, run->comm, out->ph);
    double own_io = 0, suite = ps.work + ps.agreed;
    for (int p = 0; p < IOK_NPHASES; p++) {
        if (!iok_phase_is_io(p))
            continue;
        out->phase_sum += out->ph[p].job;
        for (int i = 0; i < ps.tl.n[p]; i++)
            own_io += ps.tl.t[p][2 * i + 1] - ps.tl.t[p][2 * i];
    }
    out->io_rank = iok_stat_reduce(own_io, run->comm);
    /* the span, IOR's way (earliest open start to latest close end), less
     * the suite's work every rank did in each segment (see pass_state);
     * each rank's own span less all of its own suite work */
    double own_span = close_end - open_start - suite;
    /* on the job's clock (clock.c), and on each rank's own clock as it
     * reads it: what the span would be without the correction */
    double ends[4] = {-open_start, close_end, -(open_start + iok_clock.offset),
                      close_end + iok_clock.offset},
           ende[4];
    MPI_Allreduce(ends, ende, 4, MPI_DOUBLE, MPI_MAX, run->comm);
    double common = 0, steps_common = 0;
    MPI_Allreduce(MPI_IN_PLACE, ps.seg, ps.nseg, MPI_DOUBLE, MPI_MIN, run->comm);
    for (int i = 0; i < ps.nseg; i++) {
        common += ps.seg[i];
        steps_common += i > 0 ? ps.seg[i] : 0;
    }
    out->span_open_close = ende[1] + ende[0];
    out->span = out->span_open_close - common;
    out->span_unsynced = ende[3] + ende[2] - common;
    out->span_rank = iok_stat_reduce(own_span, run->comm);
    out->span_suite = iok_stat_reduce(suite, run->comm);
    out->io_time = out->span;
    int64_t in[3] = {bytes, nreq, checked}, sum[3], badsum;
    MPI_Allreduce(in, sum, 3, MPI_INT64_T, MPI_SUM, run->comm);
    MPI_Allreduce(&bad, &badsum, 1, MPI_INT64_T, MPI_SUM, run->comm);
    out->bytes = sum[0];
    out->requests = sum[1];
    out->checked = sum[2];
    out->mismatches = badsum;
    out->rank_bytes = iok_stat_reduce((double)bytes, run->comm);
    out->own_bytes = bytes;
    out->bandwidth = out->io_time > 0 ? (double)out->bytes / out->io_time : 0;
    /* a write the file does not hold is no result, whatever the library
     * said (write_check.c, write_sample.c); untimed, after the span */
    out->write_check_seconds = -1;
    if (writing && !(be->caps & IOK_CAP_NOIO)) {
        double tc = iok_now();
        int mine = fp->per_rank || run->rank == 0;
        rc = mine ? iok_check_written_kind(path, be->name, s) : IOK_OK;
        if (rc == IOK_OK)
            rc = iok_check_written(run->comm, path, mine, s, fp->per_rank ? bytes : out->bytes);
        if ((rc = iok_agree(run->comm, rc)))
            goto done;
        /* a stonewalled file holds fewer records than its schema: its kind
         * and size are checked, its values by --verify */
        if (sample && !out->stonewalled &&
            (rc = iok_wsample_check(run, &params, path, s, !fp->per_rank, sample)))
            goto done;
        tc = iok_now() - tc;
        MPI_Allreduce(&tc, &out->write_check_seconds, 1, MPI_DOUBLE, MPI_MAX, run->comm);
    }
    out->peak_rss = iok_stat_reduce((double)iok_mem_peak_bytes(), run->comm);
    out->peak_rss_proc = iok_stat_reduce((double)iok_mem_process_peak_bytes(), run->comm);
    /* each rank's own phase totals, gathered on rank 0 for per-rank reports */
    enum { NOWN = IOK_NPHASES + 1 + IOK_NMARKS };
    double own[NOWN];
    for (int p = 0; p < IOK_NPHASES; p++)
        own[p] = iok_timeline_own(&ps.tl, p);
    own[IOK_NPHASES] = own_span;
    double *mk = own + IOK_NPHASES + 1;
    mk[IOK_MARK_OPEN] = open_start;
    mk[IOK_MARK_OPENED] = opened;
    mk[IOK_MARK_CLOSE] = close_start;
    mk[IOK_MARK_CLOSED] = close_end;
    mk[IOK_MARK_SUITE] = steps_common;
    mk[IOK_MARK_LOOP] = loop;
    mk[IOK_MARK_DONE] = done;
    double *all = run->rank == 0 ? malloc((size_t)run->nprocs * NOWN * sizeof *all) : NULL;
    int gather = run->rank != 0 || all != NULL;
    MPI_Bcast(&gather, 1, MPI_INT, 0, run->comm);
    if (gather)
        MPI_Gather(own, NOWN, MPI_DOUBLE, all, NOWN, MPI_DOUBLE, 0, run->comm);
    if (all) { /* split into the per-phase table and the spans */
        out->rank_phase = malloc((size_t)run->nprocs * IOK_NPHASES * sizeof *out->rank_phase);
        out->rank_span = malloc((size_t)run->nprocs * sizeof *out->rank_span);
        out->rank_marks = malloc((size_t)run->nprocs * IOK_NMARKS * sizeof *out->rank_marks);
        for (int r = 0; out->rank_phase && out->rank_span && out->rank_marks && r < run->nprocs;
             r++) {
            memcpy(out->rank_phase + (size_t)r * IOK_NPHASES, all + (size_t)r * NOWN,
                   IOK_NPHASES * sizeof *all);
            out->rank_span[r] = all[(size_t)r * NOWN + IOK_NPHASES];
            memcpy(out->rank_marks + (size_t)r * IOK_NMARKS,
                   all + (size_t)r * NOWN + IOK_NPHASES + 1, IOK_NMARKS * sizeof *all);
        }
        free(all);
    }
    if (badsum > 0) {
        int mine = bad ? run->rank : run->nprocs, lowest;
        MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, run->comm);
        memcpy(out->first_bad, first_bad, sizeof first_bad);
        MPI_Bcast(out->first_bad, sizeof out->first_bad, MPI_CHAR, lowest, run->comm);
        /* The lowest rank with a mismatch names it (iok_agree prints it). */
        int vrc = bad ? iok_error(IOK_EVERIFY,
                                  "verify failed: %lld of %lld values differ in %s; first: %s",
                                  (long long)badsum, (long long)sum[2], path, first_bad)
                      : IOK_OK;
        rc = iok_agree(run->comm, vrc);
    }
done:
    /* A failed write leaves no partial file of the run's behind (a file
     * short of its data, or holding zeros where a write was lost), unless
     * --keep-partial asks for it; out->created: the ranks agreed that the
     * file is the run's own (new, or a later iteration's). Its line is
     * printed already. */
    if (rc != IOK_OK && out->created && !run->core.keep_partial && (run->rank == 0 || fp->per_rank))
        iok_remove_output(path);
    iok_wsample_free(sample);
    free(tdims);
    iok_reqlist_free(&rl);
    iok_reqlist_free(&io);
    iok_reqlist_free(&kept);
    iok_timeline_free(&ps.tl);
    free(ps.seg);
    return rc;
}
