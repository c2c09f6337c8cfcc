/* SPDX-License-Identifier: BSD-3-Clause */
/* One interleaved pass over a group of files (iok_filegroup, kernel.h): the
 * files its steps name are opened together, each step is one file's step of
 * the kernel's requests() in the order the kernel gives (the replay: the
 * trace's), and the files are closed together. A file the group both
 * writes and reads is created read-write (iok_backend_params.readwrite),
 * one it only writes write-only and one it only reads opened read-only, as
 * in a file's own passes, so a library's behaviour for those is unchanged.
 *
 * Timed as a pass (pass.c): each backend call alone in its timed region;
 * requests, data and checks as their own phases; the ranks agree after
 * each open, define and close and once per step, untimed. The span is the
 * earliest open start to the latest close end, less the suite's work the
 * least busy rank did. Its result is one pass: op write when the group
 * writes (read when it only reads), path the files joined by " + ", bytes
 * what it wrote and read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "iokernels/data.h"
#include "iokernels/error.h"

enum { G_W = 1, G_R = 2 };

struct gstate {
    const struct iok_run *run;
    struct iok_timeline tl;
    int phase_barriers;
    double t0, suite;
};

/* pending: this rank's failed call, not yet agreed on: no barrier (pass.c) */
static void
g_start(struct gstate *g, enum iok_phase p, int pending)
{
    if (g->phase_barriers && iok_phase_is_io(p) && pending == IOK_OK)
        iok_barrier(g->run->comm);
    g->t0 = iok_now();
}

static void
g_stop(struct gstate *g, enum iok_phase p)
{
    double t1 = iok_now();
    iok_timeline_add(&g->tl, p, g->t0, t1);
    if (!iok_phase_is_io(p))
        g->suite += t1 - g->t0;
}

static int
g_agree(struct gstate *g, int rc)
{
    double t = iok_now();
    rc = iok_agree(g->run->comm, rc);
    g->suite += iok_now() - t;
    return rc;
}

/* Rank 0 checks each file before any is opened: an output it may create,
 * an input of the backend's kind. */
static int
check_files(const struct iok_run *run, const struct iok_plan *plan, const unsigned char *mode,
            int iteration, int *claimed)
{
    const struct iok_backend *be = run->backend;
    int rc = IOK_OK;
    for (int f = 0; rc == IOK_OK && f < plan->nfiles; f++) {
        const struct iok_file_plan *fp = &plan->files[f];
        if (!mode[f] || run->rank != 0 || (be->caps & IOK_CAP_NOIO))
            continue;
        int over = run->core.overwrite || iteration > 0;
        if (mode[f] & G_W) {
            rc = iok_check_output_path(fp->path, over, !strcmp(be->name, "adios2"), &claimed[f]);
            if (rc == IOK_OK)
                rc = iok_check_output_room(fp->path, be->name, &fp->schema, 1, over);
        } else
            rc = iok_check_input_kind(fp->path, be->name, &fp->schema);
    }
    return rc;
}

/* The group's result, after the files are closed: bytes, phases, spans. */
static void
g_result(struct gstate *g, double open_start, double close_end, int64_t bytes, int64_t nreq,
         int64_t checked, int64_t bad, struct iok_pass_result *out)
{
    MPI_Comm comm = g->run->comm;
    iok_timeline_reduce(&g->tl, comm, out->ph);
    double own_io = 0;
    for (int p = 0; p < IOK_NPHASES; p++) {
        if (!iok_phase_is_io(p))
            continue;
        out->phase_sum += out->ph[p].job;
        for (int i = 0; i < g->tl.n[p]; i++)
            own_io += g->tl.t[p][2 * i + 1] - g->tl.t[p][2 * i];
    }
    out->io_rank = iok_stat_reduce(own_io, comm);
    double ends[2] = {-open_start, close_end}, ende[2], common;
    MPI_Allreduce(ends, ende, 2, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&g->suite, &common, 1, MPI_DOUBLE, MPI_MIN, comm);
    out->span_open_close = ende[0] + ende[1];
    out->span = out->io_time = out->span_open_close - common;
    out->span_unsynced = out->span;
    out->span_rank = iok_stat_reduce(close_end - open_start - g->suite, comm);
    out->span_suite = iok_stat_reduce(g->suite, comm);
    int64_t in[4] = {bytes, nreq, checked, bad}, sum[4];
    MPI_Allreduce(in, sum, 4, MPI_INT64_T, MPI_SUM, comm);
    out->bytes = sum[0];
    out->requests = sum[1];
    out->checked = sum[2];
    out->mismatches = sum[3];
    out->rank_bytes = iok_stat_reduce((double)bytes, comm);
    out->own_bytes = bytes;
    out->bandwidth = out->io_time > 0 ? (double)out->bytes / out->io_time : 0;
    out->peak_rss = iok_stat_reduce((double)iok_mem_peak_bytes(), comm);
    out->peak_rss_proc = iok_stat_reduce((double)iok_mem_process_peak_bytes(), comm);
}

/* Bytes the OS counted over the pass, summed over ranks (-1: unknown). */
static void
g_osbytes(MPI_Comm comm, const struct iok_osbytes *a, const struct iok_osbytes *b,
          struct iok_pass_result *out)
{
    int64_t d[4] = {b->rchar - a->rchar, b->wchar - a->wchar, b->read_bytes - a->read_bytes,
                    b->write_bytes - a->write_bytes},
            sum[4], low;
    MPI_Allreduce(d, sum, 4, MPI_INT64_T, MPI_SUM, comm);
    MPI_Allreduce(&a->rchar, &low, 1, MPI_INT64_T, MPI_MIN, comm);
    out->os = low < 0 ? (struct iok_osbytes){-1, -1, -1, -1}
                      : (struct iok_osbytes){sum[0], sum[1], sum[2], sum[3]};
}

/* Every written file holds what was written to it (write_check.c). */
static int
check_written_files(const struct iok_run *run, const struct iok_plan *plan,
                    const unsigned char *mode, int64_t *wbytes)
{
    MPI_Allreduce(MPI_IN_PLACE, wbytes, plan->nfiles, MPI_INT64_T, MPI_SUM, run->comm);
    for (int f = 0; f < plan->nfiles; f++) {
        if (!(mode[f] & G_W))
            continue;
        const struct iok_file_plan *fp = &plan->files[f];
        int rc = run->rank == 0 ? iok_check_written_kind(fp->path, run->backend->name, &fp->schema)
                                : IOK_OK;
        if (rc == IOK_OK)
            rc = iok_check_written(run->comm, fp->path, run->rank == 0, &fp->schema, wbytes[f]);
        IOK_TRY(iok_agree(run->comm, rc));
    }
    return IOK_OK;
}

int
iok_run_filegroup(const struct iok_kernel *k, const void *kopts, const struct iok_run *run,
                  const struct iok_plan *plan, int group, int iteration,
                  struct iok_pass_result *out)
{
    const struct iok_backend *be = run->backend;
    const struct iok_filegroup *gr = &plan->filegroups[group];
    const int nf = plan->nfiles, noio = (be->caps & IOK_CAP_NOIO) != 0;
    const uint64_t seed = (uint64_t)run->core.seed;
    const enum iok_values how = iok_values_named(run->core.values);
    unsigned char *mode = calloc((size_t)nf + 1, 1);
    void **h = calloc((size_t)nf + 1, sizeof *h);
    int *claimed = calloc((size_t)nf + 1, sizeof *claimed);
    int64_t *wbytes = calloc((size_t)nf + 1, sizeof *wbytes);
    struct gstate g = {.run = run, .phase_barriers = !strcmp(run->core.barriers, "phase")};
    struct iok_reqlist rl;
    int64_t bytes = 0, nreq = 0, checked = 0, bad = 0;
    char first_bad[512] = "";
    double open_start = 0, close_end = 0;
    int rc = IOK_OK, opened = 0;

    memset(out, 0, sizeof *out);
    out->write_check_seconds = -1; /* its files' sizes are checked, untimed: not measured */
    iok_reqlist_init(&rl);
    iok_timeline_init(&g.tl);
    if (!mode || !h || !claimed || !wbytes)
        rc = iok_error(IOK_EIO, "out of memory for an interleaved pass");
    else if (k->exchange) /* its lists move between ranks per file: not here */
        rc = iok_error(IOK_EIO,
                       "kernel %s has an exchange and a file group (a kernel bug: a "
                       "group runs the kernel's lists as they are)",
                       k->name);
    for (int i = 0; rc == IOK_OK && i < gr->nsteps; i++)
        mode[gr->steps[i].file] |= gr->steps[i].op == IOK_OP_WRITE ? G_W : G_R;
    int writes = 0, first = -1;
    for (int f = 0; rc == IOK_OK && f < nf; f++) {
        if (!mode[f])
            continue;
        writes |= mode[f] & G_W;
        first = first < 0 ? f : first;
        size_t n = strlen(out->path);
        snprintf(out->path + n, sizeof out->path - n, "%s%s", n ? " + " : "", plan->files[f].path);
        if (mode[f] == (G_W | G_R) && !(be->caps & IOK_CAP_READWRITE))
            rc = iok_error(IOK_EIO,
                           "%s cannot open %s for reading and writing at once (a kernel "
                           "bug: it grouped the file's reads with its writes)",
                           be->name, plan->files[f].path);
    }
    out->op = writes ? IOK_OP_WRITE : IOK_OP_READ;
    out->file = first < 0 ? 0 : first;
    out->iteration = iteration;
    out->steps_planned = gr->nsteps;
    out->agree_every = 1;
    if (rc == IOK_OK)
        rc = check_files(run, plan, mode, iteration, claimed);
    if ((rc = iok_agree(run->comm, rc)))
        goto done;
    iok_signals_doing("the interleaved pass", out->path);
    for (int f = 0; f < nf && !noio; f++)
        if (mode[f])
            iok_sync_node(run->comm, plan->files[f].path);
    out->synced_before = !noio;
    for (int f = 0; f < nf && !noio && run->core.drop_caches; f++)
        if (mode[f] == G_R) /* files the group creates are in no cache yet */
            iok_drop_caches(run->comm, plan->files[f].path, 0, out->cache, sizeof out->cache);
    out->created = writes && !noio;
    int reset = iok_mem_reset_peak() == 0, all_reset;
    MPI_Allreduce(&reset, &all_reset, 1, MPI_INT, MPI_MIN, run->comm);
    out->peak_rss_process = !all_reset;
    if (strcmp(run->core.barriers, "none") != 0)
        iok_barrier(run->comm);
    struct iok_osbytes os0, os1;
    iok_osbytes_now(&os0);

    /* open: each file in plan order, the written ones created and defined */
    open_start = iok_now();
    for (int f = 0; f < nf; f++) {
        if (!mode[f])
            continue;
        struct iok_backend_params params = {run->comm,  run->collective,
                                            run->api,   run->backend_opts,
                                            run->hints, mode[f] == (G_W | G_R)};
        const struct iok_file_plan *fp = &plan->files[f];
        g_start(&g, IOK_PH_OPEN, IOK_OK);
        rc = IOK_FAULTED(IOK_PH_OPEN, fp->path) ? IOK_EIO
             : mode[f] & G_W                    ? be->create(&h[f], fp->path, &fp->schema, &params)
                                                : be->open(&h[f], fp->path, &fp->schema, &params);
        g_stop(&g, IOK_PH_OPEN);
        if ((rc = g_agree(&g, rc)))
            goto close;
        opened++;
        if (mode[f] & G_W) {
            g_start(&g, IOK_PH_DEFINE, IOK_OK);
            rc = IOK_FAULTED(IOK_PH_DEFINE, fp->path) ? IOK_EIO : be->define(h[f]);
            g_stop(&g, IOK_PH_DEFINE);
            if ((rc = g_agree(&g, rc)))
                goto close;
        }
    }
    double th = iok_now();
    iok_pass_take_hints(run, h[first], out); /* the first file's: not I/O */
    g.suite += iok_now() - th;

    for (int i = 0; i < gr->nsteps; i++) {
        const struct iok_filegroup_step *st = &gr->steps[i];
        const struct iok_file_plan *fp = &plan->files[st->file];
        const struct iok_schema *s = &fp->schema;
        const int writing = st->op == IOK_OP_WRITE;
        g_start(&g, IOK_PH_REQUESTS, IOK_OK);
        rc = k->requests(kopts, run, plan, st->file, st->step, st->op, &rl);
        if (rc == IOK_OK)
            rc = iok_reqlist_check(&rl, s, fp->path);
        g_stop(&g, IOK_PH_REQUESTS);
        if (writing && rc == IOK_OK) {
            g_start(&g, IOK_PH_DATAGEN, IOK_OK);
            iok_data_fill(s, &rl, seed, how);
            g_stop(&g, IOK_PH_DATAGEN);
        }
        int stop_now = 0;
        double t = iok_now();
        rc = iok_step_agree(run, run->comm, h[st->file], 1, rc, &rl, &stop_now, 1);
        g.suite += iok_now() - t;
        if (rc)
            goto close;
        if (rl.paced) { /* a paced replay's traced start: not I/O (pass.c) */
            t = iok_now();
            iok_reqlist_pace(&rl);
            g.suite += iok_now() - t;
        }
        const int untimed = rl.untimed;
        double posted = untimed ? iok_now() : (g_start(&g, IOK_PH_POST, IOK_OK), g.t0);
        int io_rc = IOK_FAULTED(IOK_PH_POST, fp->path)
                        ? IOK_EIO
                        : be->xfer(h[st->file], writing ? IOK_DIR_WRITE : IOK_DIR_READ, &rl);
        if (!untimed) {
            g_stop(&g, IOK_PH_POST);
            g_start(&g, IOK_PH_WAIT, io_rc);
        }
        int wrc = IOK_FAULTED(IOK_PH_WAIT, fp->path) ? IOK_EIO : iok_backend_wait(be, h[st->file]);
        double waited = iok_now();
        if (untimed)
            g.suite += waited - posted;
        else
            g_stop(&g, IOK_PH_WAIT);
        io_rc = io_rc ? io_rc : wrc;
        int level = rl.level == IOK_LEVEL_RUN || !(be->caps & IOK_CAP_CALL_LEVEL)
                        ? (run->collective ? IOK_LEVEL_COLL : IOK_LEVEL_INDEP)
                        : (int)rl.level;
        /* logged as pass.c does: a collective call made with nothing too */
        int made = level == IOK_LEVEL_COLL || iok_reqlist_bytes(&rl, s) > 0;
        if (iok_log && io_rc == IOK_OK && !untimed && made && iteration == 0) {
            t = iok_now();
            io_rc = iok_reqlog_add(iok_log, run->rank, s, st->file, writing, level, posted, waited,
                                   &rl);
            g.suite += iok_now() - t;
        }
        if ((rc = g_agree(&g, io_rc)))
            goto close;
        if (!writing && run->core.verify && !noio) {
            g_start(&g, IOK_PH_CHECK, IOK_OK);
            bad += iok_data_check(s, &rl, seed, how, &checked, first_bad, sizeof first_bad);
            g_stop(&g, IOK_PH_CHECK);
        }
        if (!untimed) {
            for (int a = 0; a < rl.n; a++)
                nreq += rl.acc[a].nsub;
            bytes += iok_reqlist_bytes(&rl, s);
            wbytes[st->file] += writing ? iok_reqlist_bytes(&rl, s) : 0;
        }
        iok_reqlist_free(&rl);
        out->steps_done++;
    }
    if (writes && run->core.fsync) {
        int frc = IOK_OK;
        for (int f = 0; f < nf; f++)
            if (mode[f] & G_W) {
                g_start(&g, IOK_PH_FLUSH, IOK_OK);
                int r = be->flush(h[f]);
                g_stop(&g, IOK_PH_FLUSH);
                frc = frc ? frc : r;
            }
        rc = g_agree(&g, frc);
    }

close:
    if (rc != IOK_OK && opened) {
        iok_abandoned = 1; /* as pass.c: a failed file is left open */
        goto done;
    }
    for (int f = 0; f < nf && opened; f++) {
        if (!h[f])
            continue;
        g_start(&g, IOK_PH_CLOSE, IOK_OK);
        int crc = IOK_FAULTED(IOK_PH_CLOSE, plan->files[f].path) ? IOK_EIO : be->close(h[f]);
        g_stop(&g, IOK_PH_CLOSE);
        close_end = iok_now();
        h[f] = NULL;
        rc = rc ? rc : crc;
    }
    if ((rc = iok_agree(run->comm, rc)))
        goto done;
    iok_signals_partial(NULL);
    iok_osbytes_now(&os1);
    g_osbytes(run->comm, &os0, &os1, out);
    if (!writes && !noio) /* each node's counts, for the cache verdict */
        iok_read_nodes(run->comm, plan->files[first].path, bytes,
                       os0.read_bytes < 0 ? -1 : os1.read_bytes - os0.read_bytes, out);
    g_result(&g, open_start, close_end, bytes, nreq, checked, bad, out);
    if (!noio)
        rc = check_written_files(run, plan, mode, wbytes);
    if (rc == IOK_OK && out->mismatches > 0) {
        int mine = bad ? run->rank : run->nprocs, lowest;
        MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, run->comm);
        memcpy(out->first_bad, first_bad, sizeof first_bad);
        MPI_Bcast(out->first_bad, sizeof out->first_bad, MPI_CHAR, lowest, run->comm);
        rc = iok_agree(run->comm,
                       bad ? iok_error(IOK_EVERIFY,
                                       "verify failed: %lld of %lld values differ in %s; first: %s",
                                       (long long)out->mismatches, (long long)out->checked,
                                       out->path, first_bad)
                           : IOK_OK);
    }
done:
    for (int f = 0; rc != IOK_OK && !opened && claimed && f < nf; f++)
        if (claimed[f]) /* the empty files this pass made, nothing written */
            iok_remove_output(plan->files[f].path);
    iok_reqlist_free(&rl);
    iok_timeline_free(&g.tl);
    free(mode);
    free(h);
    free(claimed);
    free(wbytes);
    return rc;
}
