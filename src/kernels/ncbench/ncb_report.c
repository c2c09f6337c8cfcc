/* SPDX-License-Identifier: BSD-3-Clause */
/* NetCDF-Bench report: the original's header block and per-pass tables
 * (min/avg/max over ranks of open, I/O and close time and of the
 * bandwidths), the verification result, then what the original lacks; or,
 * with -x parser, CSV with one row per pass and rank. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ncbench.h"

#define MIB 1048576.0

/* One rank's figures of one pass, as the original times them: it puts a
 * barrier before and after each of open (create + define, or open), the
 * I/O loop and close, and reads its own clock after each barrier, so each
 * rank's figures differ by how late it left each barrier. Here the same
 * with the core's marks: each rank's own clock after the pass's start
 * barrier (open), after the ranks' agreement that open succeeded (the
 * loop), after their agreement at the loop's end (close), and after their
 * agreement on close. The I/O time is the loop less the suite's time
 * inside it (request lists, data, checks: per step the least any rank
 * spent, as the core's span), which the original does not have. (A rank's
 * own suite time alone would leave in its figure its waits for ranks
 * slower at generating data, on more ranks than cores.) It is never less
 * than the time the rank's own I/O calls took (its exchange, post, wait and
 * flush phases): where the subtraction comes out below that (on more ranks
 * than cores the suite's work and the I/O cannot be told apart), the figure
 * is the I/O calls' own time and `own_calls` says so, instead of a clamp.
 * The bandwidths are the pass's bytes (all ranks) over this rank's time. */
struct ncb_rank {
    double open, io, close, bw_io, bw;
    double loop_less_suite; /* the subtraction, as it came out */
    int own_calls;          /* 1: io is the own I/O calls' time (see above) */
};

/* The loop's I/O phases (as the job-phase fallback below): not open,
 * define or close, which the original times apart. */
static const enum iok_phase loop_io[] = {IOK_PH_EXCHANGE, IOK_PH_POST, IOK_PH_WAIT, IOK_PH_FLUSH};

static double
own_io_calls(const struct iok_pass_result *p, int r)
{
    double t = 0;
    for (size_t k = 0; k < sizeof loop_io / sizeof *loop_io; k++)
        t += p->rank_phase[(size_t)r * IOK_NPHASES + loop_io[k]];
    return t;
}

static struct ncb_rank
rank_figures(const struct iok_pass_result *p, int r, int nprocs)
{
    (void)nprocs;
    struct ncb_rank f = {0};
    if (p->rank_marks) {
        const double *m = p->rank_marks + (size_t)r * IOK_NMARKS;
        f.open = m[IOK_MARK_LOOP] - m[IOK_MARK_OPEN];
        f.io = f.loop_less_suite = m[IOK_MARK_CLOSE] - m[IOK_MARK_LOOP] - m[IOK_MARK_SUITE];
        f.close = m[IOK_MARK_DONE] - m[IOK_MARK_CLOSE];
        double own = p->rank_phase ? own_io_calls(p, r) : 0;
        if (f.io < own) {
            f.io = own;
            f.own_calls = 1;
        }
    } else { /* the gather failed: the job's phase times */
        const struct iok_phase_result *ph = p->ph;
        f.open = ph[IOK_PH_OPEN].job + ph[IOK_PH_DEFINE].job;
        f.io = 0;
        for (size_t k = 0; k < sizeof loop_io / sizeof *loop_io; k++)
            f.io += ph[loop_io[k]].job;
        f.close = ph[IOK_PH_CLOSE].job;
    }
    double all = f.open + f.io + f.close;
    f.bw_io = f.io > 0 ? (double)p->bytes / f.io : 0;
    f.bw = all > 0 ? (double)p->bytes / all : 0;
    return f;
}

static int
pass_ranks(const struct iok_pass_result *p, int nprocs)
{
    return p->rank_marks ? nprocs : 1;
}

static int
pass_checked(const struct iok_run *run, const struct iok_pass_result *p)
{
    return p->op == IOK_OP_VERIFY || (p->op == IOK_OP_READ && run->core->verify);
}

static const char *
storage_name(const struct ncb_geom *g, int level, const struct iok_run *run)
{
    /* What the file is: chunking backends store a record variable, and a
     * compressed one, in chunks even without -c. (The original prints
     * "contiguous" whenever -c is not given, also for those chunked files.) */
    int chunks =
        g->chunked || ((g->unlimited || level > 0) && (run->backend->caps & IOK_CAP_CHUNKS));
    return chunks ? "chunked" : "contiguous";
}

/* ---- human ---- */

static void
line_geom(FILE *out, const char *label, const int64_t d[NCB_NDIMS])
{
    char buf[160];
    snprintf(buf, sizeof buf, "%" PRId64 ":%" PRId64 ":%" PRId64 ":%" PRId64 " x %zu", d[0], d[1],
             d[2], d[3], sizeof(int));
    fprintf(out, "%-40s %20s %-20s\n", label, buf, "bytes");
}

static void
line_size(FILE *out, const char *label, int64_t bytes)
{
    char pretty[48];
    ncb_pretty_size(bytes, pretty, sizeof pretty);
    fprintf(out, "%-40s %20" PRId64 " %-20s (%s)\n", label, bytes, "bytes", pretty);
}

static void
line_text(FILE *out, const char *label, const char *value)
{
    fprintf(out, "%-40s %20s\n", label, value);
}

static void
header(const struct ncb_opts *o, const struct ncb_geom *g, const struct iok_run *run, FILE *out)
{
    const int64_t esz = (int64_t)sizeof(int);
    fprintf(out, "Benchtool (datatype: int) \n");
    line_geom(out, "Data geometry (t:x:y:z x sizeof(type))", g->data);
    line_geom(out, "Block geometry (t:x:y:z x sizeof(type))", g->block);
    if (g->chunked)
        line_geom(out, "Chunk geometry (t:x:y:z x sizeof(type))", g->chunk);
    line_size(out, "Datasize", ncb_elems(g->data) * esz);
    line_size(out, "Blocksize", ncb_elems(g->block) * esz);
    if (g->chunked)
        line_size(out, "Chunksize", ncb_elems(g->chunk) * esz);
    line_text(out, "I/O Access", run->collective ? "collective" : "independent");
    line_text(out, "Storage", storage_name(g, o->level, run));
    line_text(out, "File length", g->unlimited ? "unlimited" : "fixed");
    if (o->fill)
        line_text(out, "Fill value", "yes"); /* the original's two labels */
    else
        line_text(out, "File value", "no");
    if (o->fpp)
        line_text(out, "Files", "one per process");
    if (o->level > 0) {
        char z[32];
        snprintf(z, sizeof z, "deflate %d", o->level);
        line_text(out, "Compression", z);
    }
}

/* Says once which block the ranks move (the original: one line per rank). */
static void
who_line(const struct ncb_opts *o, const struct iok_run *run, const struct iok_pass_result *p,
         FILE *out)
{
    if (o->fpp && p->op == IOK_OP_WRITE)
        fprintf(out, "every rank r writes its own file %s.r\n", p->path);
    else if (o->fpp && run->nprocs > 1)
        fprintf(out, "rank r reads the file %s.((r + 1) %% %d), written by another rank\n", p->path,
                run->nprocs);
    else if (o->fpp)
        fprintf(out, "the only rank reads its own file %s.0\n", p->path);
    else if (p->op == IOK_OP_WRITE)
        fprintf(out, "every rank writes its own block on file %s\n", p->path);
    else if (run->nprocs == 1)
        fprintf(out, "the only rank reads its own block on file %s\n", p->path);
    else
        fprintf(out,
                "rank r reads the block written by rank (r + 1) %% %d on file %s (not its own, "
                "which may still be in its page cache)\n",
                run->nprocs, p->path);
}

static void
row(FILE *out, const char *id, const char *label, struct iok_stat s, const char *unit)
{
    fprintf(out, "%-20s %-40s %20.10f %20.10f %20.10f %-20s\n", id, label, s.min, s.avg, s.max,
            unit);
}

/* Says which ranks' I/O time is their own I/O calls' time, not the loop
 * less the suite's work (rank_figures), and what the subtraction gave. */
static void
own_calls_note(const struct iok_run *run, const struct iok_pass_result *p, FILE *out)
{
    int n = pass_ranks(p, run->nprocs), first = 1;
    for (int r = 0; r < n; r++) {
        struct ncb_rank f = rank_figures(p, r, run->nprocs);
        if (!f.own_calls)
            continue;
        if (first)
            fprintf(out, "I/O time of rank(s)");
        fprintf(out, " %d (loop less suite work %.6f s, own I/O calls %.6f s)", r,
                f.loop_less_suite, f.io);
        first = 0;
    }
    if (!first)
        fprintf(out, ": the suite's own work could not be separated from the I/O (more ranks "
                     "than cores?), so these figures are the rank's own I/O calls' time, not "
                     "the loop less the suite's work\n");
}

static void
table(const struct iok_run *run, const struct iok_pass_result *p, FILE *out)
{
    struct iok_stat s[5];
    int n = pass_ranks(p, run->nprocs);
    for (int r = 0; r < n; r++) {
        struct ncb_rank f = rank_figures(p, r, run->nprocs);
        double v[5] = {f.open, f.io, f.close, f.bw_io / MIB, f.bw / MIB};
        for (int k = 0; k < 5; k++) {
            if (r == 0 || v[k] < s[k].min)
                s[k].min = v[k];
            if (r == 0 || v[k] > s[k].max)
                s[k].max = v[k];
            s[k].avg = (r == 0 ? 0 : s[k].avg) + v[k] / n;
        }
    }
    const char *id = p->op == IOK_OP_WRITE ? "benchmark:write" : "benchmark:read";
    fprintf(out, "%-20s %-40s %20s %20s %20s %-20s\n", "", "", "min", "avg", "max", "");
    row(out, id, "Open time", s[0], "secs");
    row(out, id, "I/O time", s[1], "secs");
    row(out, id, "Close time", s[2], "secs");
    row(out, id, "I/O Performance (w/o open/close)", s[3], "MiB/s");
    row(out, id, "I/O Performance", s[4], "MiB/s");
    own_calls_note(run, p, out);
}

static void
verdict(const struct iok_pass_result *p, FILE *out)
{
    if (p->mismatches == 0)
        fprintf(out, "TEST PASSED: %" PRId64 " values checked, all as written\n", p->checked);
    else
        fprintf(out, "TEST FAILED: %" PRId64 " of %" PRId64 " values differ; first: %s\n",
                p->mismatches, p->checked, p->first_bad);
}

static void
human(const struct ncb_opts *o, const struct ncb_geom *g, const struct iok_run *run,
      const struct iok_result *res, FILE *out)
{
    header(o, g, run, out);
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        who_line(o, run, p, out);
        /* a read-back for --verify is a check, not a benchmark: no table */
        if (p->op == IOK_OP_WRITE || (p->op == IOK_OP_READ && !o->verify_only))
            table(run, p, out);
        if (pass_checked(run, p))
            verdict(p, out);
    }
}

/* ---- parser: CSV, raw seconds and bytes ---- */

static void
csv_text(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void
csv_dims(FILE *out, const int64_t d[NCB_NDIMS])
{
    for (int k = 0; k < NCB_NDIMS; k++)
        fprintf(out, ",%" PRId64, d[k]);
}

static void
csv(const struct ncb_opts *o, const struct ncb_geom *g, const struct iok_run *run,
    const struct iok_result *res, FILE *out)
{
    fprintf(out,
            "benchmark,rank,nprocs,nn,ppn,backend,file,files,io_access,storage,file_length,fill,"
            "deflate,data_t,data_x,data_y,data_z,block_t,block_x,block_y,block_z,chunk_t,"
            "chunk_x,chunk_y,chunk_z,bytes,open_s,io_s,close_s,io_bandwidth_Bps,"
            "bandwidth_Bps,checked,mismatches,io_s_basis\n");
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        int checked = pass_checked(run, p);
        for (int r = 0; r < pass_ranks(p, run->nprocs); r++) {
            struct ncb_rank f = rank_figures(p, r, run->nprocs);
            fprintf(out, "%s,%d,%d,%" PRId64 ",%" PRId64 ",", iok_op_names[p->op],
                    p->rank_marks ? r : -1, run->nprocs, g->nn, g->ppn);
            csv_text(out, run->backend->name);
            fputc(',', out);
            csv_text(out, p->path);
            fprintf(out, ",%s,%s,%s,%s,%d,%d", o->fpp ? "per-process" : "shared",
                    run->collective ? "collective" : "independent", storage_name(g, o->level, run),
                    g->unlimited ? "unlimited" : "fixed", o->fill, o->level);
            csv_dims(out, g->data);
            csv_dims(out, g->block);
            csv_dims(out, g->chunk);
            fprintf(out, ",%" PRId64 ",%.9f,%.9f,%.9f,%.1f,%.1f,", p->bytes, f.open, f.io, f.close,
                    f.bw_io, f.bw);
            if (checked)
                fprintf(out, "%" PRId64 ",%" PRId64, p->checked, p->mismatches);
            else
                fputc(',', out);
            /* loop-less-suite: the original's way less the suite's work;
             * own-io-calls: the rank's I/O calls' own time (rank_figures) */
            fprintf(out, ",%s\n",
                    !p->rank_marks ? "job-phases"
                    : f.own_calls  ? "own-io-calls"
                                   : "loop-less-suite");
        }
    }
}

void
ncb_report(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
           const struct iok_result *res, FILE *out)
{
    const struct ncb_opts *o = kopts;
    const struct ncb_state *st = plan->priv;
    if (o->format == NCB_FORMAT_PARSER)
        csv(o, &st->g, run, res, out);
    else
        human(o, &st->g, run, res, out);
}
