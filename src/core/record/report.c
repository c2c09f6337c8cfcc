/* SPDX-License-Identifier: BSD-3-Clause */
/* The block every kernel's report ends with: what the original benchmarks do
 * not say. Non-I/O phases, memory, verification, the ceiling, the bytes the
 * operating system saw, page-cache warnings, iteration statistics. */
#include <stdlib.h>
#include <string.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/record/record.h"
#include "core/run/run.h"
#include "iokernels/data.h"

static const double MiB = 1048576.0;

static const char *
read_kind_words(const struct iok_ceiling *c)
{
    if (c->read_kind == IOK_CEIL_READ_CACHED)
        return "reads through the page cache";
    return c->direct ? "O_DIRECT reads" : "reads from storage (pages dropped)";
}

/* The ceiling that judges the pass: its samples, the best, the fraction,
 * and a flag with the reason when the pass ran above it. */
static void
ceiling_lines(const struct iok_pass_result *p, FILE *out)
{
    const struct iok_ceiling *c = &p->ceiling;
    int writing = p->op == IOK_OP_WRITE;
    double best = writing ? c->bandwidth : c->read_bandwidth;
    const double *bw = writing ? c->write_bw : c->read_bw;
    if (!writing && c->read_kind == IOK_CEIL_READ_NONE)
        return;
    fprintf(out, "       ceiling: best of %d contiguous %s of the same bytes %.2f MiB/s (",
            c->samples,
            writing ? (c->fsync ? "MPI-IO writes, synced," : "MPI-IO writes, buffered,")
                    : read_kind_words(c),
            best / MiB);
    for (int i = 0; i < c->samples; i++)
        fprintf(out, "%s%.0f", i ? " " : "samples ", bw[i] / MiB);
    fprintf(out, "); this run %.1f%% of it\n", best > 0 ? 100.0 * p->bandwidth / best : 0.0);
    if (c->above)
        fprintf(out, "       ABOVE ITS CEILING (x%.2f): %s\n", p->bandwidth / best, c->reason);
}

static void
os_bytes(const struct iok_pass_result *p, const char *fstype, int fsync, FILE *out)
{
    if (p->os.rchar < 0) {
        fprintf(out, "       OS byte counts: /proc/self/io unreadable\n");
        return;
    }
    int w = p->op == IOK_OP_WRITE;
    int64_t dev = w ? p->os.write_bytes : p->os.read_bytes, sys = w ? p->os.wchar : p->os.rchar;
    fprintf(out, "       bytes: kernel %lld, OS %s %lld (%+.1f%%), %s %lld\n", (long long)p->bytes,
            w ? "write_bytes" : "read_bytes", (long long)dev,
            p->bytes ? 100.0 * ((double)dev - (double)p->bytes) / (double)p->bytes : 0.0,
            w ? "wchar" : "rchar", (long long)sys);
    /* header and alignment aside, storage should see what the kernel wrote:
     * where writes pass the block layer, and once they are flushed */
    if (!w || p->bytes <= 0 || llabs(dev - p->bytes) <= p->bytes / 10 + (1 << 20))
        return;
    if (!iok_fs_block_counted(fstype))
        fprintf(out,
                "       note: OS write_bytes counts the block layer, and %s writes do not pass "
                "it: the count says nothing about storage here\n",
                fstype);
    else if (fsync)
        fprintf(out,
                "       note: the OS counted %s bytes written to storage than the kernel, "
                "with --fsync (another writer on the node, or the file system's own "
                "journal and metadata)\n",
                dev < p->bytes ? "fewer" : "more");
    else
        fprintf(out,
                "       note: the OS counted %s bytes written to storage than the kernel "
                "(page cache not flushed yet? add --fsync)\n",
                dev < p->bytes ? "fewer" : "more");
}

/* What the headline time is, and the per-phase breakdown beside it. */
static void
span_lines(const struct iok_run *run, const struct iok_pass_result *p, FILE *out)
{
    static const enum iok_phase io[] = {IOK_PH_OPEN, IOK_PH_DEFINE, IOK_PH_EXCHANGE, IOK_PH_POST,
                                        IOK_PH_WAIT, IOK_PH_FLUSH,  IOK_PH_CLOSE};
    fprintf(out,
            "       time = open->close span less the suite's own work (adjusted, the headline); "
            "raw open->close span %.4f s (earliest open start to latest close end); the "
            "suite's own work max %.4f s per rank; adjusted per rank s: min %.4f avg %.4f max "
            "%.4f\n",
            p->span_open_close, p->span_suite.max, p->span_rank.min, p->span_rank.avg,
            p->span_rank.max);
    if (p->op == IOK_OP_WRITE && p->ph[IOK_PH_COMPUTE].count)
        fprintf(out, "       %s\n",
                p->async ? "with --async the computation is left out of the span too, so the "
                           "headline is the time the ranks were blocked in I/O: the bandwidth "
                           "the application sees, not the storage's (a write hidden behind the "
                           "computation costs nothing here; --async-reference measures the "
                           "synchronous side)"
                         : "the computation is left out of the span too: the headline is the "
                           "I/O's time alone");
    fprintf(out,
            "       clocks: one for the job, ranks' offsets against rank 0 spread %.3g s "
            "(estimated within %.2g s), corrected; the ranks' own clocks would give %.4f s\n",
            iok_clock.offset_max - iok_clock.offset_min, iok_clock.error_max, p->span_unsynced);
    fprintf(out, "       I/O phases, job s (barriers: %s):",
            iok_choice_name(IOK_BARRIERS_CHOICES, run->core->barriers).s);
    for (size_t i = 0; i < sizeof io / sizeof io[0]; i++)
        if (p->ph[io[i]].count)
            fprintf(out, " %s %.4f", iok_phase_names[io[i]], p->ph[io[i]].job);
    fprintf(out, "; sum %.4f\n", p->phase_sum);
    if (p->stonewalled)
        fprintf(out, "       stonewalled: --deadline %g s stopped the pass after %d of %d steps\n",
                run->core->deadline, p->steps_done, p->steps_planned);
}

/* --compute, --async: the computation after each step, and with --async the
 * I/O it left exposed (the rank's time blocked in I/O calls) of the I/O's
 * window (posted to completed, the computation in between included). */
static void
compute_line(const struct iok_run *run, const struct iok_pass_result *p, FILE *out)
{
    if (p->op != IOK_OP_WRITE || (!run->core->compute[0] && !run->core->async))
        return;
    const int traced = !strcmp(run->core->compute, "traced"); /* the replay's gaps */
    fprintf(out,
            "       compute (not I/O, %s): %s%s after each step%s, %.4f s per rank (min %.4f "
            "max %.4f)",
            iok_choice_name(IOK_COMPUTE_KIND_CHOICES, run->core->compute_kind).s,
            traced                  ? "its traced gap"
            : run->core->compute[0] ? run->core->compute
                                    : "0",
            traced ? "" : " s",
            run->core->compute_spread > 0 ? " (the mean over ranks: --compute-spread)" : "",
            p->ph[IOK_PH_COMPUTE].rank.avg, p->ph[IOK_PH_COMPUTE].rank.min,
            p->ph[IOK_PH_COMPUTE].rank.max);
    double post = p->ph[IOK_PH_POST].rank.max, wait = p->ph[IOK_PH_WAIT].rank.max;
    if (p->async) /* where the data moved: from the measured phases */
        fprintf(out,
                "; --async: exposed I/O %.4f s of %.4f s I/O (blocked in I/O calls, of the "
                "window from post to completion), %.2f MiB pending at most; the post took "
                "%.3g s, the wait %.3g s: the data moved %s",
                p->io_rank.max, p->io_window.max, p->pending_bytes_max / MiB, post, wait,
                iok_overlap_moved(post, wait, p->io_window.max));
    else if (run->core->async) /* --async-reference's other side */
        fprintf(out,
                "; synchronous reference of --async-reference: each wait right after its post, "
                "exposed I/O %.4f s",
                p->io_rank.max);
    fputc('\n', out);
}

/* --async-reference: the overlap against the synchronous iterations. */
static void
overlap_line(const struct iok_run *run, const struct iok_result *res, FILE *out)
{
    struct iok_overlap o;
    if (!run->core->async_reference || iok_overlap_of(run, res, &o))
        return;
    char line[512];
    iok_overlap_line(&o, line, sizeof line);
    fprintf(out, "%s\n", line);
    iok_overlap_free(&o);
}

void
iok_report_core(const struct iok_run *run, const struct iok_plan *plan,
                const struct iok_result *res, FILE *out)
{
    char fstype[64] = "unknown";
    int64_t free_bytes;
    fprintf(out, "-- iokernels --\n");
    fprintf(out, "backend                  : %s (%s), %s, %s API\n", run->backend->name,
            run->backend->version(), run->collective ? "collective" : "independent",
            iok_choice_name(IOK_API_CHOICES, run->core->api).s);
    if (run->backend->caps & IOK_CAP_HINTS) /* the backends that write through MPI-IO */
        iok_mpiio_layer_report(out);
    if (plan->nfiles) {
        iok_fs_describe(plan->files[0].path, fstype, sizeof fstype, &free_bytes);
        fprintf(out, "file system              : %s, %.1f GiB free\n", fstype,
                free_bytes / (1024.0 * MiB));
    }
    char crowd[96]; /* every line stating a result says when the ranks outnumber the cores */
    iok_cores_words(run->cores, crowd, sizeof crowd);
    if (run->cores && run->cores->nnodes) {
        const struct iok_node_cores *n = &run->cores->node[run->cores->worst];
        fprintf(out,
                "cores                    : %d usable for %d rank%s on %s (online %d, affinity "
                "%d, cgroup quota ",
                n->usable_cores, n->ranks, n->ranks == 1 ? "" : "s", n->host, n->online_cpus,
                n->affinity_cpus);
        if (n->cgroup_cpus > 0)
            fprintf(out, "%.2f", n->cgroup_cpus);
        else
            fprintf(out, "none");
        fprintf(out, ", %d hardware thread%s per core)%s%s%s\n", n->hw_threads_per_core,
                n->hw_threads_per_core == 1 ? "" : "s",
                run->cores->nnodes > 1 ? ", the most crowded of the nodes" : "",
                crowd[0] ? ": " : "",
                crowd[0] ? "OVERSUBSCRIBED, times include CPU contention" : "");
    }
    fprintf(out, "input parsing + planning : %12.4f s\n", res->parse_time);
    if (run->core->fsync)
        fprintf(out, "fsync                    : inside the timed write (flush phase)\n");
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        if (run->core->iterations > 1)
            fprintf(out, "[iteration %d] ", p->iteration);
        fprintf(out,
                "%-6s %s: %.2f MiB in %.4f s (adjusted span), %.2f MiB/s, %lld requests as "
                "executed%s%s%s\n",
                iok_op_names[p->op], p->path, p->bytes / MiB, p->io_time, p->bandwidth / MiB,
                (long long)p->requests, crowd[0] ? "; " : "", crowd,
                /* the read's source ends the line, as it always has */
                !p->source[0]      ? ""
                : !p->source_known ? " [source unknown]"
                : p->from_storage  ? " [from storage]"
                                   : " [PAGE CACHE]");
        span_lines(run, p, out);
        fprintf(out, "       not I/O: requests %.4f s, data generation %.4f s%s, check %.4f s",
                p->ph[IOK_PH_REQUESTS].rank.max, p->ph[IOK_PH_DATAGEN].rank.max,
                p->op == IOK_OP_WRITE && run->core->values == IOK_VALUES_ONCE
                    ? " (--values once: every record the first's)"
                    : "",
                p->ph[IOK_PH_CHECK].rank.max);
        if (p->ph[IOK_PH_EXCHANGE].count)
            fprintf(out, "; exchange (I/O) %.4f s", p->ph[IOK_PH_EXCHANGE].job);
        fputc('\n', out);
        compute_line(run, p, out);
        fprintf(out, "       peak memory per rank (MiB): min %.1f avg %.1f max %.1f%s\n",
                p->peak_rss.min / MiB, p->peak_rss.avg / MiB, p->peak_rss.max / MiB,
                p->peak_rss_process ? " (since the process started: could not reset VmHWM)" : "");
        os_bytes(p, fstype, run->core->fsync, out);
        if (p->cache[0])
            fprintf(out, "       page cache dropped before the read: %s\n", p->cache);
        if (p->source[0])
            fprintf(out, "       read %s %s\n", p->source_known ? "from" : "source", p->source);
        iok_hints_report(run, p, out);
        if (p->op != IOK_OP_WRITE && (run->core->verify || p->op == IOK_OP_VERIFY))
            fprintf(out, "       verify: %lld values checked, %lld mismatches%s%s\n",
                    (long long)p->checked, (long long)p->mismatches,
                    p->first_bad[0] ? "; first: " : "", p->first_bad);
        if (p->ceiling.measured)
            ceiling_lines(p, out);
    }
    if (res->npasses) {
        const struct iok_stat *m = &res->pass[res->npasses - 1].peak_rss_proc;
        fprintf(out,
                "peak memory of the process per rank (MiB): min %.1f avg %.1f max %.1f "
                "(whole run; /usr/bin/time sees only the last pass's, as each pass "
                "resets the high-water mark)\n",
                m->min / MiB, m->avg / MiB, m->max / MiB);
    }
    if (run->core->iterations > 1)
        iok_report_iterations(run, res, out);
    overlap_line(run, res, out);
}
