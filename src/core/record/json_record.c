/* SPDX-License-Identifier: BSD-3-Clause */
/* The machine-readable record of one run: one JSON object, appended as one
 * line to the --json file. Numbers as numbers, flags as booleans, the unit
 * in every name (_bytes, _seconds, _mib_s). Bump IOK_JSON_SCHEMA when a field
 * changes meaning or disappears, and keep schema/record.schema.json in step. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/record/record.h"
#include "core/run/run.h"
#include "iokernels/error.h"

#define IOK_JSON_SCHEMA 2

static const double MiB = 1048576.0;

static json_t *
stat_json(struct iok_stat s)
{
    return json_pack("{s:f, s:f, s:f}", "min", s.min, "avg", s.avg, "max", s.max);
}

static json_t *
samples_json(const double *bw, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_real(bw[i] / MiB));
    return a;
}

/* The ceiling that judges the pass (schema: pass.ceiling): its samples, the
 * best, the fraction, and whether the pass ran above it and why. */
static json_t *
ceiling_json(const struct iok_pass_result *p)
{
    const struct iok_ceiling *c = &p->ceiling;
    static const char *const kinds[] = {"none", "cached", "storage"};
    double ref = p->op == IOK_OP_WRITE ? c->bandwidth : c->read_bandwidth;
    json_t *cj = json_pack(
        "{s:s, s:I, s:i, s:b, s:f, s:f, s:o, s:s, s:b, s:f, s:f, s:o, s:b}", "method",
        "contiguous block per rank, one fresh file per write sample: MPI_File_write_at; reads of "
        "the pass's kind (MPI_File_read_at through the page cache, or O_DIRECT pread)",
        "bytes", (json_int_t)c->bytes, "samples", c->samples, "write_fsync", c->fsync,
        "write_seconds", c->time, "write_bandwidth_mib_s", c->bandwidth / MiB,
        "write_samples_mib_s", samples_json(c->write_bw, c->samples), "read_kind",
        kinds[c->read_kind], "direct_read", c->read_kind == IOK_CEIL_READ_STORAGE && c->direct,
        "read_seconds", c->read_time, "read_bandwidth_mib_s", c->read_bandwidth / MiB,
        "read_samples_mib_s",
        samples_json(c->read_bw, c->read_kind == IOK_CEIL_READ_NONE ? 0 : c->samples), "above",
        c->above);
    if (ref > 0) /* a write pass has no read ceiling */
        json_object_set_new(cj, "fraction", json_real(p->bandwidth / ref));
    if (c->above)
        json_object_set_new(cj, "reason", json_string(c->reason));
    return cj;
}

/* One clock for the job (clock.c): how far the ranks' clocks were apart
 * and how well that is known. */
static json_t *
clock_json(void)
{
    const struct iok_clock *c = &iok_clock;
    json_t *j = json_pack(
        "{s:b, s:s, s:i, s:f, s:f, s:f, s:f}", "corrected", c->synced, "method",
        "ping-pong with rank 0 before the passes, the round with the smallest round trip kept "
        "per rank; estimated again after them for the drift",
        "rounds", c->rounds, "offset_min_seconds", c->offset_min, "offset_max_seconds",
        c->offset_max, "offset_spread_seconds", c->offset_max - c->offset_min,
        "error_bound_seconds", c->error_max);
    if (c->drift_max >= 0) /* estimated again after the passes */
        json_object_set_new(j, "drift_max_seconds", json_real(c->drift_max));
    return j;
}

static json_t *
pass_json(const struct iok_run *run, const struct iok_pass_result *p)
{
    json_t *ph = json_object();
    for (int i = 0; i < IOK_NPHASES; i++) {
        if (p->ph[i].count == 0)
            continue;
        json_object_set_new(ph, iok_phase_names[i],
                            json_pack("{s:f, s:o, s:i, s:b}", "job_seconds", p->ph[i].job,
                                      "rank_seconds", stat_json(p->ph[i].rank), "count",
                                      p->ph[i].count, "io", iok_phase_is_io(i)));
    }
    json_t *j =
        json_pack("{s:s, s:o, s:i, s:I, s:I, s:o, s:f, s:o, s:f}", "op", iok_op_names[p->op],
                  "path", iok_json_text(p->path), "iteration", p->iteration, "bytes",
                  (json_int_t)p->bytes, "requests", (json_int_t)p->requests, "rank_bytes",
                  stat_json(p->rank_bytes), "io_seconds", p->io_time, "io_seconds_rank",
                  stat_json(p->io_rank), "bandwidth_mib_s", p->bandwidth / MiB);
    json_object_set_new(j, "phases", ph);
    json_object_set_new(j, "peak_rss_bytes", stat_json(p->peak_rss));
    json_object_set_new(j, "peak_rss_scope",
                        iok_json_text(p->peak_rss_process ? "process" : "pass"));
    json_object_set_new(j, "hints_in_effect", iok_pass_hints_json(p));
    /* io_seconds is the span; the barrier-separated phases' sum beside it */
    json_object_set_new(j, "span_seconds", json_real(p->span));
    json_object_set_new(j, "span_open_close_seconds", json_real(p->span_open_close));
    json_object_set_new(j, "span_unsynced_seconds", json_real(p->span_unsynced));
    json_object_set_new(j, "span_rank_seconds", stat_json(p->span_rank));
    json_object_set_new(j, "span_suite_rank_seconds", stat_json(p->span_suite));
    json_object_set_new(j, "io_phase_sum_seconds", json_real(p->phase_sum));
    json_object_set_new(j, "steps_planned", json_integer(p->steps_planned));
    json_object_set_new(j, "steps_done", json_integer(p->steps_done));
    json_object_set_new(j, "stonewalled", json_boolean(p->stonewalled));
    if (p->ceiling.measured)
        json_object_set_new(j, "ceiling", ceiling_json(p));
    json_object_set_new(j, "peak_rss_process_bytes", stat_json(p->peak_rss_proc));
    if (p->os.rchar >= 0)
        json_object_set_new(j, "os_bytes",
                            json_pack("{s:I, s:I, s:I, s:I}", "rchar", (json_int_t)p->os.rchar,
                                      "wchar", (json_int_t)p->os.wchar, "read_bytes",
                                      (json_int_t)p->os.read_bytes, "write_bytes",
                                      (json_int_t)p->os.write_bytes));
    if (p->cache[0])
        json_object_set_new(j, "cache_drop_method", iok_json_text(p->cache));
    json_object_set_new(j, "synced_before", json_boolean(p->synced_before));
    if (p->op == IOK_OP_WRITE && p->write_check_seconds >= 0)
        json_object_set_new(j, "write_check_seconds", json_real(p->write_check_seconds));
    json_object_set_new(j, "agree_every_steps", json_integer(p->agree_every));
    if (p->op == IOK_OP_WRITE && (run->core->compute[0] || run->core->async)) {
        /* --compute, --async: the computation, and the I/O it did not hide */
        json_object_set_new(j, "compute_seconds", stat_json(p->ph[IOK_PH_COMPUTE].rank));
        json_object_set_new(j, "exposed_io_seconds", stat_json(p->io_rank));
        json_object_set_new(j, "pending_bytes_max", json_integer((json_int_t)p->pending_bytes_max));
        json_object_set_new(j, "io_window_seconds", stat_json(p->io_window));
        json_object_set_new(j, "async", json_boolean(p->async));
        if (run->core->async_reference) /* the reference: outside the summaries */
            json_object_set_new(j, "reference", json_boolean(p->reference));
        if (p->async) { /* where the data moved, from the measured post and wait */
            const char *m = iok_overlap_moved(p->ph[IOK_PH_POST].rank.max,
                                              p->ph[IOK_PH_WAIT].rank.max, p->io_window.max);
            json_object_set_new(j, "data_moved", json_string(m[0] == 'd' ? "computation" : m + 7));
        }
    }
    if (p->start_state[0])
        json_object_set_new(j, "start_state", iok_json_text(p->start_state));
    if (p->op != IOK_OP_WRITE) {
        json_object_set_new(j, "page_cache_suspect", json_boolean(p->cache_suspect));
        if (p->source[0]) {
            json_object_set_new(j, "from_storage", json_boolean(p->from_storage));
            json_object_set_new(j, "from_storage_reason", iok_json_text(p->source));
            json_object_set_new(j, "read_source",
                                iok_json_text(!p->source_known  ? "unknown"
                                              : p->from_storage ? "storage"
                                                                : "page cache"));
        }
        json_object_set_new(j, "values_checked", json_integer(p->checked));
        json_object_set_new(j, "values_mismatched", json_integer(p->mismatches));
        if (p->first_bad[0])
            json_object_set_new(j, "first_mismatch", iok_json_text(p->first_bad));
    }
    (void)run;
    return j;
}

static json_t *
spread_json(const struct iok_spread *s, double scale)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f}", "min", s->min * scale, "max", s->max * scale,
                     "mean", s->mean * scale, "stddev", s->stddev * scale, "median",
                     s->median * scale);
}

/* Per op, over iterations, as IOR's summary: each iteration's bytes (all
 * files) over its time (the sum of its passes' open->close spans). */
static json_t *
iterations_json(const struct iok_result *res, int iterations)
{
    json_t *j = json_pack("{s:i}", "count", iterations);
    for (int op = 0; op < 3; op++) {
        struct iok_spread bw, t;
        int seen = iok_op_iterations(res, iterations, op, &bw, &t);
        if (seen)
            json_object_set_new(j, iok_op_names[op],
                                json_pack("{s:i, s:o, s:o}", "iterations", seen, "bandwidth_mib_s",
                                          spread_json(&bw, 1.0 / 1048576.0), "io_seconds",
                                          spread_json(&t, 1.0)));
    }
    return j;
}

static json_t *
options_json(const struct iok_json_input *in)
{
    json_t *all = json_object();
    for (int i = 0; i < in->nsets; i++) {
        const struct iok_optset *set = &in->sets[i];
        /* the core, the kernel, and only the backend in use */
        if (i > 1 && strcmp(set->title, in->run->backend->name) != 0)
            continue;
        json_t *o = json_object();
        for (const struct iok_option *opt = set->opts; opt && opt->name; opt++)
            if (strcmp(opt->name, "help") != 0)
                json_object_set_new(o, opt->name, iok_option_json(set, opt));
        json_object_set_new(all, i == 0 ? "core" : i == 1 ? "kernel" : "backend", o);
    }
    if (!json_object_get(all, "backend")) /* a backend without options */
        json_object_set_new(all, "backend", json_object());
    return all;
}

static json_t *
libraries_json(void)
{
    json_t *l = json_object();
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(mpi, &len);
    char *nl = strchr(mpi, '\n');
    if (nl)
        *nl = '\0';
    json_object_set_new(l, "mpi", iok_json_text(mpi));
    for (int i = 0; i < iok_backend_count(); i++) { /* those this run loaded */
        const struct iok_backend *b = iok_backend_loaded_at(i);
        if (b)
            json_object_set_new(l, b->name, iok_json_text(b->version()));
    }
    char jv[32];
    snprintf(jv, sizeof jv, "Jansson %s", JANSSON_VERSION);
    json_object_set_new(l, "jansson", iok_json_text(jv));
    return l;
}

static json_t *
build(const struct iok_json_input *in, const char *hosts)
{
    const struct iok_run *run = in->run;
    const struct iok_result *res = in->res;
    char date[64], fstype[64] = "unknown";
    int64_t free_bytes = -1;
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    if (in->plan->nfiles > 0)
        iok_fs_describe(in->plan->files[0].path, fstype, sizeof fstype, &free_bytes);

    json_t *passes = json_array(), *files = json_array(), *argv = json_array();
    int64_t wbytes = 0, rbytes = 0, mism = 0, checked = 0;
    double wtime = 0, rtime = 0, mem_max = 0;
    int reads = 0, stored = 0, unknown = 0;
    const char *first_bad = NULL;
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        json_array_append_new(passes, pass_json(run, p));
        if (p->op == IOK_OP_WRITE && p->reference) {
            /* --async-reference's synchronous passes: the overlap's, not the run's */
        } else if (p->op == IOK_OP_WRITE) {
            wbytes += p->bytes;
            wtime += p->io_time;
        } else if (p->op == IOK_OP_READ) {
            rbytes += p->bytes;
            rtime += p->io_time;
            if (p->source[0]) {
                reads++;
                stored += p->from_storage;
                unknown += !p->source_known;
            }
        }
        mism += p->mismatches;
        checked += p->checked;
        if (!first_bad && p->first_bad[0])
            first_bad = p->first_bad;
        if (p->peak_rss.max > mem_max)
            mem_max = p->peak_rss.max;
    }
    for (int f = 0; f < in->plan->nfiles; f++)
        json_array_append_new(files, iok_json_text(in->plan->files[f].path));
    for (int i = 0; i < in->argc; i++)
        json_array_append_new(argv, iok_json_text(in->argv[i]));
    int any_check = run->core->verify;

    json_t *j = json_object();
    json_object_set_new(j, "schema_version", json_integer(IOK_JSON_SCHEMA));
    json_object_set_new(j, "kernel", iok_json_text(in->kernel->name));
    json_object_set_new(
        j, "backend",
        iok_json_text(in->kernel->flags & IOK_KERNEL_TOOL ? "none" : run->backend->name));
    json_object_set_new(j, "mode",
                        iok_json_text(iok_choice_name(IOK_MODE_CHOICES, run->core->mode).s));
    json_object_set_new(j, "io", iok_json_text(run->collective ? "coll" : "indep"));
    json_object_set_new(j, "api",
                        iok_json_text(iok_choice_name(IOK_API_CHOICES, run->core->api).s));
    json_object_set_new(
        j, "barriers", iok_json_text(iok_choice_name(IOK_BARRIERS_CHOICES, run->core->barriers).s));
    json_object_set_new(j, "time_convention",
                        iok_json_text("adjusted open-close span: earliest open start to latest "
                                      "close end on the job's clock, less the suite's own work "
                                      "inside it (each pass's span_open_close_seconds keeps the "
                                      "raw span)"));
    if (iok_clock.rounds > 0) /* a run a signal ends before the estimate has none */
        json_object_set_new(j, "clock", clock_json());
    if (run->core->deadline > 0)
        json_object_set_new(j, "deadline_seconds", json_real(run->core->deadline));
    json_object_set_new(j, "nprocs", json_integer(run->nprocs));
    json_object_set_new(j, "argv", argv);
    json_object_set_new(j, "options", options_json(in));
    json_object_set_new(j, "hints", iok_hints_json(run));
    json_object_set_new(j, "files", files);
    json_object_set_new(j, "parse_seconds", json_real(res->parse_time));
    json_object_set_new(j, "parse_seconds_rank", stat_json(res->parse_rank));
    json_t *sum = json_pack("{s:I, s:f, s:f, s:I, s:f, s:f, s:f}", "write_bytes",
                            (json_int_t)wbytes, "write_seconds", wtime, "write_bandwidth_mib_s",
                            wtime > 0 ? wbytes / wtime / MiB : 0.0, "read_bytes",
                            (json_int_t)rbytes, "read_seconds", rtime, "read_bandwidth_mib_s",
                            rtime > 0 ? rbytes / rtime / MiB : 0.0, "peak_rss_max_bytes", mem_max);
    /* every read pass came from storage (null: no read pass that moved data) */
    json_object_set_new(sum, "read_from_storage",
                        reads && !unknown ? json_boolean(stored == reads) : json_null());
    json_object_set_new(j, "summary", sum);
    /* the thresholds the verdicts above used, for readers of the record */
    json_object_set_new(j, "thresholds",
                        json_pack("{s:f, s:f}", "ceiling_margin", IOK_CEILING_MARGIN,
                                  "from_storage_fraction", IOK_FROM_STORAGE_FRACTION));
    json_object_set_new(j, "iterations", iterations_json(res, iok_iterations_run(run->core)));
    json_object_set_new(j, "passes", passes);
    struct iok_overlap o;
    if (run->core->async_reference && iok_overlap_of(run, res, &o) == 0) {
        json_object_set_new(j, "overlap", iok_overlap_json(&o));
        iok_overlap_free(&o);
    }
    /* the whole process (every pass; /usr/bin/time sees only the last), per rank */
    if (res->npasses)
        json_object_set_new(j, "peak_rss_process_bytes",
                            stat_json(res->pass[res->npasses - 1].peak_rss_proc));
    json_t *v = json_pack("{s:b, s:I, s:I, s:b}", "enabled", any_check, "values_checked",
                          (json_int_t)checked, "values_mismatched", (json_int_t)mism, "ok",
                          any_check && mism == 0);
    if (first_bad)
        json_object_set_new(v, "first_mismatch", iok_json_text(first_bad));
    json_object_set_new(j, "verify", v);
    json_object_set_new(j, "libraries", libraries_json());
    json_object_set_new(j, "environment", iok_env_json(hosts, run->nprocs, run->cores));
    json_object_set_new(j, "date", iok_json_text(date));
    json_object_set_new(
        j, "filesystem",
        json_pack("{s:s, s:I}", "type", fstype, "free_bytes", (json_int_t)free_bytes));
    if (in->kernel->json_key && in->kernel->json_value) { /* the kernel's own field */
        char *text = in->kernel->json_value(in->kernel_opts, run, in->plan, res);
        json_t *kv = text ? json_loads(text, 0, NULL) : NULL;
        if (kv)
            json_object_set_new(j, in->kernel->json_key, kv);
        free(text);
    }
    json_object_set_new(j, "status", iok_json_text("completed"));
    json_object_set_new(j, "exit_code", json_integer(in->status));
    json_object_set_new(j, "iokernels_version", iok_json_text(IOK_VERSION));
    return j;
}

char *
iok_json_terminated_prefix(const struct iok_json_input *in)
{
    char *hosts = NULL;
    int rc = iok_env_gather(in->run->comm, &hosts); /* collective: every rank */
    if (rc || in->run->rank != 0) {
        free(hosts);
        return NULL;
    }
    json_t *j = build(in, hosts);
    free(hosts);
    /* the signal handler appends status, signal, exit_code and the rest */
    json_object_del(j, "exit_code");
    json_object_del(j, "status");
    char *line = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(j);
    size_t len = line ? strlen(line) : 0;
    if (len < 2 || line[len - 1] != '}') {
        free(line);
        return NULL;
    }
    line[len - 1] = '\0';
    return line;
}

int
iok_json_line(const struct iok_json_input *in, char **line)
{
    char *hosts = NULL;
    *line = NULL;
    int rc = iok_env_gather(in->run->comm, &hosts); /* collective: every rank */
    if (rc || in->run->rank != 0) {
        free(hosts);
        return rc;
    }
    json_t *j = build(in, hosts);
    free(hosts);
    *line = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(j);
    return *line ? IOK_OK : iok_error(IOK_EIO, "cannot encode the JSON record");
}

int
iok_json_append(const char *path, const struct iok_json_input *in)
{
    char *line = NULL;
    int rc = iok_json_line(in, &line); /* collective: every rank */
    if (rc || in->run->rank != 0)
        return rc;
    /* one write() of the whole line, O_APPEND: concurrent runs never interleave */
    size_t len = strlen(line);
    line[len] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL, 0644), created = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0)
        rc = iok_error(IOK_EIO, "cannot open --json file %s (%s): check the path", path,
                       strerror(errno));
    else {
        off_t before = lseek(fd, 0, SEEK_END);
        /* one write() of the whole line, so that records never interleave;
         * a short one sets no errno: one more write of the rest names the
         * cause (ENOSPC, EFBIG, EDQUOT, EIO), and the part is taken back */
        ssize_t n = write(fd, line, len + 1);
        int werr = n < 0 ? errno : 0;
        if (n >= 0 && n < (ssize_t)(len + 1) && write(fd, line + n, len + 1 - (size_t)n) < 0)
            werr = errno;
        if (n > 0 && n != (ssize_t)(len + 1) && before >= 0 && ftruncate(fd, before) != 0 && !werr)
            werr = errno; /* a partial line would break the file's other records */
        char what[96];
        snprintf(what, sizeof what, "a short write: %lld of %lld bytes, no error given",
                 (long long)n, (long long)(len + 1));
        if (n != (ssize_t)(len + 1))
            rc = iok_error(IOK_EIO,
                           "cannot write the JSON record to %s (%s): free space there or choose "
                           "another --json file",
                           path, werr ? strerror(werr) : what);
    }
    if (fd >= 0)
        close(fd);
    if (rc && created) /* no empty file of its own left behind */
        unlink(path);
    free(line);
    return rc;
}
