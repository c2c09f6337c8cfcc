/* SPDX-License-Identifier: BSD-3-Clause */
/* replay: any application's I/O from a replay file (docs/kernels/replay.md;
 * a Darshan DXT trace converted by `iokernels-campaign trace2replay`, or
 * a kernel's run exported by --export-replay). Each traced file is a file
 * of the model: one byte variable of its extent (or the variables its
 * `data` lines describe), each segment a subarray; each rank's operations
 * run in its order, one step each, collective or independent as traced
 * where the backend can switch per call. The fidelity score compares what
 * the core handed the backend (its request log) with the trace. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"
#include "iokernels/kernel.h"
#include "iokernels/reqlog.h"
#include "replay_fidelity.h"
#include "replay_file.h"
#include "replay_plan.h"

/* The CHOICE options' values, in the order of their choices. */
enum replay_pace { REPLAY_PACE_FAST, REPLAY_PACE_TRACED };
enum replay_fold { REPLAY_FOLD_EXACT, REPLAY_FOLD_FOLD };
enum replay_order { REPLAY_ORDER_TRACED, REPLAY_ORDER_BY_FILE };

struct replay_opts {
    char dir[IOK_OPT_STRLEN];
    enum replay_pace pace;
    double max_gap;
    enum replay_fold fold;
    enum replay_order order;
    struct rp_trace *trace; /* not an option: what read_input parsed */
    char input[IOK_OPT_STRLEN];
};

static const struct iok_option replay_options[] = {
    {"dir", 0, IOK_OPT_STRING, offsetof(struct replay_opts, dir), ".",
     "directory the traced files are created in (each traced path flattened to one name in it)",
     .metavar = "DIR"},
    {"pace", 0, IOK_OPT_CHOICE, offsetof(struct replay_opts, pace), "fast",
     "fast: each rank's operations back to back; traced: keep the traced gaps (a rank sleeps "
     "before an operation until its traced start, outside the timed I/O calls)",
     "fast|traced"},
    {"max-gap", 0, IOK_OPT_DOUBLE, offsetof(struct replay_opts, max_gap), "60",
     "--pace traced: the longest sleep before an operation, in seconds; a longer traced gap is "
     "cut to it (one line says so) and the later operations keep their gaps after it; above 0",
     .max = "86400", .unit = "seconds"},
    {"ranks-from-trace", 0, IOK_OPT_CHOICE, offsetof(struct replay_opts, fold), "exact",
     "exact: the job's rank count must be the trace's; fold: trace rank r runs on job rank "
     "r % P, the trace ranks of one job rank one after the other",
     "exact|fold"},
    {"order", 0, IOK_OPT_CHOICE, offsetof(struct replay_opts, order), "traced",
     "traced: files open at the same time in the trace are opened together and each rank's "
     "operations on them run in its traced order, reads and writes as traced; by-file: one pass "
     "per file and kind (its writes, then its reads), in the order of their first operation",
     "traced|by-file"},
    {NULL}};

struct replay_state {
    struct rp_trace trace;
    struct rp_plan rp;
    int verify, pace;
    double max_gap; /* --max-gap */
    double *gap;    /* --compute traced: per op, the traced gap after it (its rank's next
                       operation's start less its end, cut to --max-gap); NULL otherwise */
    int cuts;       /* traced gaps this rank cut to it */
    int rank;
    double tmin;      /* --pace traced: the earliest traced start over every rank's operations */
    double cut;       /* the seconds --max-gap took out of this rank's traced gaps so far */
    int *file_traced; /* per plan file: its traced file */
    int have_fid;
    struct rp_fidelity fid;
    struct rp_groups groups; /* files open together (replay_interleave.c) */
    char by_file[320];       /* why interleaved files run file by file, "" if they do not */
};

static void
free_state(void *priv)
{
    struct replay_state *st = priv;
    rp_free(&st->trace);
    rp_plan_free(&st->rp);
    rp_groups_free(&st->groups);
    rp_fidelity_free(&st->fid);
    free(st->file_traced);
    free(st->gap);
    free(st);
}

static int
replay_read_input(const char *text, const char *path, const struct iok_optset *sets, int nsets)
{
    for (int i = 0; i < nsets; i++) {
        if (strcmp(sets[i].title, "replay"))
            continue;
        struct replay_opts *o = sets[i].base;
        if (!o->trace && !(o->trace = calloc(1, sizeof *o->trace)))
            return iok_error(IOK_EIO, "out of memory reading %s", path);
        snprintf(o->input, sizeof o->input, "%s", path);
        int rc = rp_parse(text, strlen(text), path, o->trace);
        if (rc != IOK_OK) { /* the run ends here: no state to free later */
            rp_free(o->trace);
            free(o->trace);
            o->trace = NULL;
        }
        return rc;
    }
    return iok_error(IOK_EIO, "replay: no option set of its own");
}

static int
has_reads(const struct rp_trace *t)
{
    for (int64_t i = 0; i < t->nops; i++)
        if (!t->ops[i].write)
            return 1;
    return 0;
}

static int
replay_configure(void *kopts, struct iok_core_opts *core, int (*given)(const char *name))
{
    struct replay_opts *o = kopts;
    if (!o->trace)
        return iok_error(IOK_EUSAGE, "replay needs a replay file: iokernels replay FILE "
                                     "(docs/kernels/replay.md says how to make one)");
    if (!(o->max_gap > 0)) /* an open lower bound: the table's ranges are closed */
        return iok_error(IOK_EUSAGE, "--max-gap must be above 0 seconds, not %g", o->max_gap);
    if (!strcmp(core->compute, "traced") && o->pace == REPLAY_PACE_TRACED)
        return iok_error(IOK_EUSAGE, "--compute traced and --pace traced both spend the traced "
                                     "gaps (as computation, as waits): give one");
    if (!given("backend"))
        strcpy(core->backend, "mpiio");
    if (!given("mode"))
        core->mode = has_reads(o->trace) ? IOK_MODE_BOTH : IOK_MODE_WRITE;
    return IOK_OK;
}

/* The traced path's flat name under --dir (rp_map_path), at parse time:
 * a name no file system takes fails here, not at a library's create. */
static int
map_path(const struct replay_opts *o, const char *traced, const char *ext, char *out, size_t len)
{
    int why = rp_map_path(o->dir, traced, ext, out, len);
    if (why == RP_MAP_NO_NAME)
        return iok_error(IOK_EUSAGE, "%s: the traced path '%s' has no name to map under %s",
                         o->input, iok_quote(traced), o->dir);
    if (why == RP_MAP_TOO_LONG)
        return iok_error(IOK_EUSAGE,
                         "%s: the traced path '%s' under --dir %s makes a path longer than the "
                         "%zu characters a path holds here: a shorter --dir",
                         o->input, iok_quote(traced), o->dir, len - 1);
    if (why == RP_MAP_NAME_MAX)
        return iok_error(IOK_EUSAGE,
                         "%s: the traced path '%s' flattens to the name %s of %zu bytes, more "
                         "than NAME_MAX (%d) a file name may have: shorten the path in the "
                         "replay file",
                         o->input, iok_quote(traced), out + strlen(o->dir) + 1,
                         strlen(out) - strlen(o->dir) - 1, NAME_MAX);
    return IOK_OK;
}

/* Files open at the same time in the trace: opened together, their
 * operations in traced order (--order traced), unless the run cannot (then
 * file by file, and the fidelity says why). */
static int
plan_groups(const struct replay_opts *o, const struct iok_run *run, struct replay_state *st,
            struct iok_plan *plan)
{
    if (rp_groups_build(&st->trace, &st->rp, run->do_write, run->do_read, st->verify, 0,
                        &st->groups))
        return iok_error(IOK_EIO, "out of memory planning %s", o->input);
    if (!st->groups.n)
        return IOK_OK;
    char why[160] = "";
    if (o->order != REPLAY_ORDER_TRACED)
        snprintf(why, sizeof why, "--order by-file");
    else if (st->groups.needs_rw && !(run->backend->caps & IOK_CAP_READWRITE))
        snprintf(why, sizeof why,
                 "the %s backend does not open a file for reading and writing at once",
                 run->backend->name);
    if (!why[0]) { /* again, filling what a group reads before it writes it */
        rp_groups_free(&st->groups);
        if (rp_groups_build(&st->trace, &st->rp, run->do_write, run->do_read, st->verify, 1,
                            &st->groups))
            return iok_error(IOK_EIO, "out of memory planning %s", o->input);
        for (int f = 0; f < st->rp.nfiles; f++) {
            struct iok_file_plan *fp = &plan->files[f];
            fp->nsteps_write = (st->rp.files[f].nfill > 0) + st->rp.files[f].w.nsteps;
            fp->nsteps = fp->nsteps_write > fp->nsteps_read ? fp->nsteps_write : fp->nsteps_read;
        }
        plan->nfilegroups = st->groups.n;
        plan->filegroups = st->groups.g;
        return IOK_OK;
    }
    snprintf(st->by_file, sizeof st->by_file,
             "replayed one pass per file and kind (%s): the operations of files open at the same "
             "time in the trace, and a file's reads among its writes, are not in traced order",
             why);
    rp_groups_free(&st->groups);
    return IOK_OK;
}

/* --compute traced: per op, the gap the trace shows after it before its
 * rank's next operation (in the replay file's order, the order the rank
 * runs them), the computation the rank does there; 0 after its last, or
 * where a start or an end is unknown; cut to --max-gap as a pace's wait. */
static int
traced_gaps(struct replay_state *st)
{
    const struct rp_trace *t = &st->trace;
    st->gap = calloc((size_t)t->nops + 1, sizeof *st->gap);
    int *last = malloc(((size_t)t->ranks + 1) * sizeof *last);
    if (!st->gap || !last) {
        free(last);
        return iok_error(IOK_EIO, "out of memory for the traced gaps");
    }
    for (int r = 0; r < t->ranks; r++)
        last[r] = -1;
    for (int64_t i = 0; i < t->nops; i++) {
        const struct iok_logop *op = &t->ops[i];
        int prev = op->rank >= 0 && op->rank < t->ranks ? last[op->rank] : -1;
        if (prev >= 0 && op->start >= 0 && t->ops[prev].end >= 0) {
            double g = op->start - t->ops[prev].end;
            st->gap[prev] = g < 0 ? 0 : g > st->max_gap ? st->max_gap : g;
        }
        if (op->rank >= 0 && op->rank < t->ranks)
            last[op->rank] = (int)i;
    }
    free(last);
    return IOK_OK;
}

static int
replay_plan(const void *kopts, const struct iok_run *run, struct iok_plan *plan)
{
    struct replay_opts *o = (struct replay_opts *)kopts;
    const struct rp_trace *t = o->trace;
    int fold = o->fold == REPLAY_FOLD_FOLD;
    if (!fold && t->ranks != run->nprocs)
        return iok_error(IOK_EUSAGE,
                         "%s traces %d ranks and this job has %d: run it with mpiexec -n %d, or "
                         "add --ranks-from-trace fold (trace rank r on job rank r %% %d)",
                         o->input, t->ranks, run->nprocs, t->ranks, run->nprocs);
    struct replay_state *st = calloc(1, sizeof *st);
    struct iok_schema *schemas = calloc((size_t)t->nfiles + 1, sizeof *schemas);
    int *file_traced = calloc((size_t)t->nfiles + 1, sizeof *file_traced);
    if (!st || !schemas || !file_traced) {
        free(st);
        free(schemas);
        free(file_traced);
        return iok_error(IOK_EIO, "out of memory planning %s", o->input);
    }
    st->trace = *t; /* the plan owns the trace from here on */
    free(o->trace);
    o->trace = NULL;
    plan->priv = st;
    plan->free_priv = free_state;
    st->file_traced = file_traced;
    st->verify = run->core->verify;
    st->pace = o->pace == REPLAY_PACE_TRACED;
    st->max_gap = o->max_gap;
    st->rank = run->rank;
    st->tmin = -1;
    if (!strcmp(run->core->compute, "traced") && traced_gaps(st) != IOK_OK) {
        free(schemas); /* the state, the plan's, is freed with it */
        return IOK_EIO;
    }
    for (int64_t i = 0; i < st->trace.nops; i++)
        if (st->trace.ops[i].start >= 0 && (st->tmin < 0 || st->trace.ops[i].start < st->tmin))
            st->tmin = st->trace.ops[i].start;
    int rc =
        rp_plan_build(&st->trace, run->nprocs, fold, o->input, &st->rp, schemas, st->trace.nfiles);
    int nplan = rc == IOK_OK ? st->rp.nfiles : 0; /* each schema the plan's, even after an error */
    for (int f = 0; f < nplan; f++) {
        struct iok_file_plan *fp;
        if (iok_plan_add_file(plan, &fp)) {
            rc = IOK_EIO;
            break;
        }
        const struct rp_fileplan *rf = &st->rp.files[f];
        fp->schema = schemas[f];
        st->file_traced[f] = rf->traced;
        /* a pass per kind the trace has: no read pass of a file it only
         * wrote, the write pass of a file it only read only its fill */
        fp->op_steps = 1;
        fp->nsteps_write = (rf->nfill > 0) + rf->w.nsteps;
        fp->nsteps_read = (run->do_read ? rf->r.nsteps : 0) + st->verify;
        fp->nsteps = fp->nsteps_write > fp->nsteps_read ? fp->nsteps_write : fp->nsteps_read;
        if (rc == IOK_OK)
            rc = map_path(o, st->trace.files[rf->traced].path, run->backend->ext, fp->path,
                          sizeof fp->path);
        for (int g = 0; rc == IOK_OK && g < f; g++)
            if (!strcmp(plan->files[g].path, fp->path))
                rc = iok_error(IOK_EUSAGE,
                               "%s: traced paths '%s' and '%s' both map to %s: replay them in "
                               "two runs",
                               o->input, iok_quote(st->trace.files[st->file_traced[g]].path),
                               iok_quote(st->trace.files[rf->traced].path), fp->path);
    }
    free(schemas);
    if (rc == IOK_OK)
        rc = plan_groups(o, run, st, plan);
    if (rc == IOK_OK && !iok_plan_pass_order(plan, 2 * plan->nfiles + st->groups.n))
        rc = IOK_EIO;
    if (rc == IOK_OK &&
        (plan->npass_order = rp_pass_order(&st->trace, &st->rp, st->groups.n ? &st->groups : NULL,
                                           plan->pass_order)) < 0)
        rc = iok_error(IOK_EIO, "out of memory planning %s", o->input);
    return rc;
}

/* --pace traced: when the op starts, in seconds after the pace origin
 * (iok_reqlist.pace_at): its traced start less the trace's earliest start
 * over every rank. The origin is one instant for all ranks (the exit of the
 * first step's agreement), so a rank whose first traced operation came
 * 0.5 s after another rank's waits 0.5 s, and the trace's first operation
 * is posted as soon as it can be (an origin taken earlier, while the first
 * step's requests are built, made it late by the agreement and every later
 * one early by as much). < 0: no wait. */
static double
pace(struct replay_state *st, const struct iok_logop *op)
{
    if (!st->pace || op->start < 0)
        return -1;
    double elapsed = iok_pace_elapsed();
    if (elapsed < 0) /* the iteration's first step: no origin yet, no cut */
        st->cut = elapsed = 0;
    double at = op->start - st->tmin - st->cut;
    double wait = at - elapsed;
    if (wait > st->max_gap) { /* a trace's idle hour (or a bad start) is no I/O pattern */
        if (st->cuts++ == 0)
            fprintf(stderr,
                    "iokernels: note: replay: rank %d: a traced gap of %.6g s before an operation "
                    "is cut to %g s (--max-gap); later cuts on this rank are not told\n",
                    st->rank, wait, st->max_gap);
        st->cut += wait - st->max_gap; /* the later operations keep their gaps after it */
        at -= wait - st->max_gap;
    }
    return at;
}

/* This rank's written bytes of the file, merged: what --verify reads back.
 * In the verify pass (--mode write) it is the pass, timed as every kernel's
 * read-back; after the traced reads of a read pass it is the suite's own
 * step, untimed. */
static int
verify_step(const struct replay_state *st, const struct rp_fileplan *fp, const struct iok_schema *s,
            int me, int untimed, struct iok_reqlist *out)
{
    const struct rp_trace *t = &st->trace;
    int64_t n = 0;
    for (int k = 0; k < fp->w.nsteps; k++) {
        int oi = fp->w.op[(size_t)k * st->rp.nprocs + me];
        n += oi >= 0 ? t->ops[oi].nseg : 0;
    }
    struct iok_logseg *segs = malloc((size_t)(n ? n : 1) * sizeof *segs);
    if (!segs)
        return iok_error(IOK_EIO, "out of memory for the replay's read-back");
    n = 0;
    for (int k = 0; k < fp->w.nsteps; k++) {
        int oi = fp->w.op[(size_t)k * st->rp.nprocs + me];
        for (int64_t j = 0; oi >= 0 && j < t->ops[oi].nseg; j++)
            segs[n++] = t->segs[t->ops[oi].seg0 + j];
    }
    n = iok_segs_merge(segs, n, IOK_SEGS_SORTED);
    int rc = rp_requests(fp, s, segs, n, 1, out);
    free(segs);
    out->untimed = untimed;
    out->level = IOK_LEVEL_COLL;
    return rc;
}

static int
trace_step(struct replay_state *st, const struct rp_fileplan *fp, const struct rp_sched *sc, int k,
           const struct iok_schema *s, int me, struct iok_reqlist *out)
{
    int oi = sc->op[(size_t)k * st->rp.nprocs + me];
    const struct iok_logop *op = oi >= 0 ? &st->trace.ops[oi] : NULL;
    double pace_at = op ? pace(st, op) : -1;
    int64_t n = op ? op->nseg : 0;
    int rc = rp_requests(fp, s, n ? st->trace.segs + op->seg0 : NULL, n, 0, out);
    out->level = sc->level[k];
    out->idle = !op;
    out->paced = st->pace; /* idle too: every rank's origin is the same step's */
    out->pace_at = pace_at;
    out->gap = op && op->write && st->gap ? st->gap[oi] : 0; /* --compute traced */
    return rc;
}

static int
replay_requests(const void *kopts, const struct iok_run *run, const struct iok_plan *plan, int file,
                int step, enum iok_op op, struct iok_reqlist *out)
{
    (void)kopts;
    struct replay_state *st = plan->priv;
    const struct rp_fileplan *fp = &st->rp.files[file];
    const struct iok_schema *s = &plan->files[file].schema;
    int me = run->rank, P = run->nprocs;
    if (op == IOK_OP_WRITE) {
        if (fp->nfill && step == 0) { /* bytes read, never written: rank p every P-th range */
            struct iok_logseg *mine = malloc((size_t)(fp->nfill / P + 1) * sizeof *mine);
            int64_t n = 0;
            if (!mine)
                return iok_error(IOK_EIO, "out of memory for the replay's fill");
            for (int64_t i = me; i < fp->nfill; i += P)
                mine[n++] = fp->fill[i];
            int rc = rp_requests(fp, s, mine, n, 1, out);
            free(mine);
            out->untimed = 1;
            out->level = IOK_LEVEL_COLL;
            return rc;
        }
        int k = step - (fp->nfill > 0);
        if (k < fp->w.nsteps)
            return trace_step(st, fp, &fp->w, k, s, me, out);
    } else if (op == IOK_OP_READ && step < fp->r.nsteps) {
        return trace_step(st, fp, &fp->r, step, s, me, out);
    } else if (st->verify && step == (op == IOK_OP_READ ? fp->r.nsteps : 0)) {
        return verify_step(st, fp, s, me, op == IOK_OP_READ, out);
    }
    /* nothing of this pass in this step: every rank joins with nothing */
    int rc = rp_requests(fp, s, NULL, 0, 0, out);
    out->untimed = 1;
    out->idle = 1;
    return rc;
}

static struct rp_fidelity *
fidelity(const struct iok_run *run, const struct iok_plan *plan, const struct iok_result *res)
{
    struct replay_state *st = plan->priv;
    if (!st || !res->log)
        return NULL;
    if (st->have_fid)
        return &st->fid;
    struct rp_fidelity *f = &st->fid;
    if (rp_fidelity(&st->trace, res->log, run->nprocs, st->file_traced, run->do_write, run->do_read,
                    f) != IOK_OK)
        return NULL;
    int fold = st->rp.fold && st->trace.ranks != run->nprocs;
    if (rp_sequences(&st->trace, res->log, run->nprocs, fold, st->file_traced, run->do_write,
                     run->do_read, &f->seq) == IOK_OK)
        f->have_seq = 1;
    char why[256];
    if (fold) {
        snprintf(why, sizeof why,
                 "folded: %d trace ranks on %d, trace ranks r, r + %d, ... one after the other "
                 "on rank r (scored as one sequence per job rank)",
                 st->trace.ranks, run->nprocs, run->nprocs);
        rp_fidelity_reason(f, why);
    }
    if (st->by_file[0])
        rp_fidelity_reason(f, st->by_file);
    if (!st->trace.ended) /* format 1: a cut file looks whole, its check lines gone */
        rp_fidelity_reason(f, "cut? the replay file has no 'end' line (format 1), so a file cut "
                              "short cannot be told from a whole one: convert the trace again "
                              "(format 2)");
    if (run->backend->caps & IOK_CAP_NOIO) {
        snprintf(why, sizeof why,
                 "the %s backend moves no bytes: the requests handed to it are scored, not a "
                 "file's",
                 run->backend->name);
        rp_fidelity_reason(f, why);
    } else if (strcmp(run->backend->name, "mpiio")) {
        snprintf(why, sizeof why,
                 "%s sets the offsets in its own layout: the requests handed to the library "
                 "are scored (as the mpiio layout's bytes), not the file's offsets",
                 run->backend->name);
        rp_fidelity_reason(f, why);
    }
    f->nnotes = st->trace.nnotes;
    f->notes = st->trace.notes;
    for (int64_t i = 0; i < st->trace.nops; i++)
        f->posix_ops +=
            st->trace.ops[i].posix && (st->trace.ops[i].write ? run->do_write : run->do_read);
    f->cov_traced = st->trace.cov_traced;
    f->cov_counted = st->trace.cov_counted;
    st->have_fid = 1;
    return f;
}

static void
replay_report(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
              const struct iok_result *res, FILE *out)
{
    const struct replay_opts *o = kopts;
    struct replay_state *st = plan->priv;
    const struct rp_trace *t = &st->trace;
    fprintf(out, "Replay of %s (replay format %d)%s%s\n", o->input, t->version,
            t->source ? ": " : "", t->source ? t->source : "");
    if (st->rp.fold && t->ranks != run->nprocs)
        fprintf(out, "Ranks: %d traced on %d (folded: trace rank r on rank r %% %d, in turn)\n",
                t->ranks, run->nprocs, run->nprocs);
    else
        fprintf(out, "Ranks: %d, as traced\n", t->ranks);
    fprintf(out,
            "Paths: each traced path flattened to one name under %s (its components joined "
            "by '_', the backend's extension added)\n",
            o->dir);
    for (int f = 0; f < plan->nfiles; f++) {
        const struct rp_fileplan *fp = &st->rp.files[f];
        fprintf(out, "  %s -> %s (%lld bytes, %d write steps, %d read steps)\n",
                t->files[fp->traced].path, plan->files[f].path, (long long)fp->extent, fp->w.nsteps,
                fp->r.nsteps);
        if (fp->nfill && st->groups.n && st->groups.of_pass[2 * f] >= 0)
            fprintf(out,
                    "  filled first: %lld bytes in %lld ranges the trace reads before it writes "
                    "them or never writes (before its group's steps, outside the timed I/O)\n",
                    (long long)fp->fill_bytes, (long long)fp->nfill);
        else if (fp->nfill)
            fprintf(out,
                    "  filled first: %lld bytes in %lld ranges the trace reads but never writes "
                    "(the write pass's first step, outside the timed I/O)\n",
                    (long long)fp->fill_bytes, (long long)fp->nfill);
    }
    if (st->groups.n)
        fprintf(out,
                "Order: as traced; %d group%s of files open at the same time in the trace, each "
                "opened together and run as one pass%s\n",
                st->groups.n, st->groups.n == 1 ? "" : "s",
                st->groups.needs_rw ? " (a file both written and read created read-write)" : "");
    else if (st->by_file[0])
        fprintf(out, "Order: %s\n", st->by_file);
    if (st->rp.nskipped)
        fprintf(out, "  %d traced files without reads or writes: not created\n", st->rp.nskipped);
    if (run->backend->caps & IOK_CAP_CALL_LEVEL)
        fprintf(out, "Levels: as traced (collective or independent per call; POSIX calls "
                     "independent)\n");
    else
        fprintf(out, "Levels: every call %s (the run's level: %s cannot switch per call)\n",
                run->collective ? "collective" : "independent", run->backend->name);
    fprintf(out, "Pace: %s\n",
            st->pace ? "traced (before an operation a rank sleeps until its traced start, "
                       "outside its timed I/O calls; the pass's span holds the traced gaps, as "
                       "the application's did)"
                     : "as fast as possible");
    if (st->verify)
        fprintf(out, "Verify: every written byte read back and checked (after the traced reads, "
                     "untimed, when there are some), and every traced read checked\n");
    struct rp_fidelity *fid = fidelity(run, plan, res);
    if (fid && !(run->do_write && run->do_read))
        fprintf(out, "Fidelity against the trace's %s only (--mode %s)\n",
                run->do_write ? "writes" : "reads",
                iok_choice_name(IOK_MODE_CHOICES, run->core->mode).s);
    if (fid)
        rp_fidelity_report(fid, out);
    else
        fprintf(out, "Fidelity: not computed (no request log)\n");
}

static char *
replay_json(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
            const struct iok_result *res)
{
    (void)kopts;
    struct rp_fidelity *fid = fidelity(run, plan, res);
    return fid ? rp_fidelity_json(fid) : NULL;
}

const struct iok_kernel iok_kernel_replay = {
    .name = "replay",
    .flags = IOK_KERNEL_REQLOG | IOK_KERNEL_NO_READBACK | IOK_KERNEL_TRACED_GAPS,
    .summary = "any application's I/O from a replay file (a Darshan DXT trace, a kernel's "
               "--export-replay), with a fidelity score",
    .options = replay_options,
    .opts_size = sizeof(struct replay_opts),
    .default_barriers = "pass",
    .read_input = replay_read_input,
    .configure = replay_configure,
    .plan = replay_plan,
    .requests = replay_requests,
    .report = replay_report,
    .json_key = "fidelity",
    .json_value = replay_json,
};
