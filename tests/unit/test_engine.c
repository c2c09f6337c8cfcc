/* SPDX-License-Identifier: BSD-3-Clause */
/* The pass engine (src/core/engine*.c) driven by a recording backend and a
 * recording kernel: the calls in order, and what each timed region holds
 * (one backend call of its phase, nothing else), for a file's write pass,
 * a file's read pass and a group of two files interleaved; the results of
 * both shapes carry the same fields (phases per rank, marks, spans).
 * test_engine_planted.c builds the same test against an engine that does
 * the kernel's work inside the post region: it must fail. */
#include <string.h>

#include "check.h"
#include "core/run/run.h"

enum { NSTEPS = 3, NELEMS = 8, NLOG = 512 };

/* The event log: backend calls, the kernel's calls, regions opened/closed. */
static struct {
    char what[24];
    int file;
} logv[NLOG];
static int nlog;

static void
note(const char *what, int file)
{
    if (nlog < NLOG) {
        snprintf(logv[nlog].what, sizeof logv[nlog].what, "%s", what);
        logv[nlog++].file = file;
    }
}

static void
hook(int begin, enum iok_phase ph)
{
    if (ph == IOK_PH_COMPUTE && begin) /* --compute: an event of its own, outside every region */
        note("compute", -1);
    if (!iok_phase_is_io(ph))
        return;
    char w[24];
    snprintf(w, sizeof w, "%s %s", begin ? "[" : "]", iok_phase_names[ph]);
    note(w, -1);
}

/* ---- the recording backend: a handle is the file's index ---- */

static int
file_of(const char *path)
{
    return path[strlen(path) - 1] - '0'; /* paths end in their index */
}

static int
rec_create(void **h, const char *path, const struct iok_schema *s,
           const struct iok_backend_params *p)
{
    (void)s, (void)p;
    *h = (void *)(intptr_t)(file_of(path) + 1);
    note("create", file_of(path));
    return IOK_OK;
}

static int
rec_open(void **h, const char *path, const struct iok_schema *s, const struct iok_backend_params *p)
{
    (void)s, (void)p;
    *h = (void *)(intptr_t)(file_of(path) + 1);
    note("open", file_of(path));
    return IOK_OK;
}

#define FILE_OF(h) ((int)(intptr_t)(h)-1)

static int
rec_define(void *h)
{
    note("define", FILE_OF(h));
    return IOK_OK;
}

static int
rec_xfer(void *h, enum iok_dir dir, struct iok_reqlist *r)
{
    (void)r;
    note(dir == IOK_DIR_WRITE ? "xfer write" : "xfer read", FILE_OF(h));
    return IOK_OK;
}

static int
rec_wait(void *h)
{
    note("wait", FILE_OF(h));
    return IOK_OK;
}

static int
rec_flush(void *h)
{
    note("flush", FILE_OF(h));
    return IOK_OK;
}

static int
rec_close(void *h)
{
    note("close", FILE_OF(h));
    return IOK_OK;
}

static const char *
rec_version(void)
{
    return "recording 1";
}

static const struct iok_backend rec = {
    .abi = IOK_BACKEND_ABI,
    .name = "recording",
    .summary = "logs its calls",
    .ext = ".rec",
    .caps = IOK_CAP_NOIO | IOK_CAP_COLLECTIVE | IOK_CAP_INDEPENDENT | IOK_CAP_READWRITE,
    .version = rec_version,
    .create = rec_create,
    .define = rec_define,
    .open = rec_open,
    .xfer = rec_xfer,
    .wait = rec_wait,
    .flush = rec_flush,
    .close = rec_close,
};

/* ---- the recording kernel: one variable x[NELEMS * nprocs] per file ---- */

static int
kern_requests(const void *kopts, const struct iok_run *run, const struct iok_plan *plan, int file,
              int step, enum iok_op op, struct iok_reqlist *out)
{
    (void)kopts, (void)step, (void)op;
    note("requests", file);
    const struct iok_schema *s = &plan->files[file].schema;
    iok_reqlist_init(out);
    struct iok_access *a = iok_reqlist_add(out, s, 0, 1);
    if (!a)
        return IOK_EIO;
    a->starts[0] = (int64_t)run->rank * NELEMS;
    a->counts[0] = NELEMS;
    return iok_reqlist_finish(out, s);
}

static const struct iok_kernel kern = {.name = "recording", .requests = kern_requests};

static void
file_plan(struct iok_plan *plan, int f, int nprocs)
{
    struct iok_file_plan *fp;
    CHECK(iok_plan_add_file(plan, &fp) == IOK_OK && fp == &plan->files[f], "file %d planned", f);
    snprintf(fp->path, sizeof fp->path, "engine-test-file-%d", f);
    iok_schema_init(&fp->schema);
    int d = iok_schema_add_dim(&fp->schema, "n", (int64_t)NELEMS * nprocs, 0);
    iok_schema_add_var(&fp->schema, "x", IOK_DOUBLE, 1, &d);
    fp->nsteps = NSTEPS;
}

/* ---- checks ---- */

/* The call expected for each timed phase. */
static int
call_of_phase(const char *phase, const char *call)
{
    static const char *pairs[][2] = {{"open", "create"}, {"open", "open"}, {"define", "define"},
                                     {"post", "xfer"},   {"wait", "wait"}, {"flush", "flush"},
                                     {"close", "close"}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (!strcmp(pairs[i][0], phase) && !strncmp(pairs[i][1], call, strlen(pairs[i][1])))
            return 1;
    return 0;
}

/* Every region holds exactly one call, of its phase; every I/O call is in
 * a region. */
static void
check_regions(const char *shape)
{
    int inside = 0, calls = 0;
    const char *phase = NULL;
    for (int i = 0; i < nlog; i++) {
        const char *w = logv[i].what;
        if (w[0] == '[') {
            CHECK(!inside, "%s: a region opened inside another (event %d)", shape, i);
            inside = 1, calls = 0, phase = w + 2;
        } else if (w[0] == ']') {
            CHECK(inside && !strcmp(phase, w + 2), "%s: region %s closed unopened", shape, w + 2);
            CHECK(calls == 1, "%s: the %s region held %d calls, not one backend call", shape, w + 2,
                  calls);
            inside = 0;
        } else if (inside) {
            calls++;
            CHECK(call_of_phase(phase, w), "%s: the %s region holds '%s' (event %d)", shape, phase,
                  w, i);
        } else {
            CHECK(!strcmp(w, "requests") || !strcmp(w, "compute"),
                  "%s: backend call '%s' outside any timed region", shape, w);
        }
    }
}

/* The calls alone, without the regions, as "name:file name:file ...". */
static void
calls(char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < nlog && o < len; i++)
        if (logv[i].what[0] != '[' && logv[i].what[0] != ']')
            o += (size_t)snprintf(out + o, len - o, "%s%s:%d", o ? " " : "", logv[i].what,
                                  logv[i].file);
}

static void
check_result(const char *shape, const struct iok_run *run, const struct iok_pass_result *r,
             int posts)
{
    CHECK(r->ph[IOK_PH_POST].count == posts, "%s: %d posts counted, not %d", shape,
          r->ph[IOK_PH_POST].count, posts);
    CHECK(r->steps_done == posts, "%s: %d steps done, not %d", shape, r->steps_done, posts);
    CHECK(r->span > 0 && r->span_unsynced > 0, "%s: spans %g %g", shape, r->span, r->span_unsynced);
    if (run->rank == 0)
        CHECK(r->rank_phase && r->rank_span && r->rank_marks, "%s: no per-rank phases or marks",
              shape);
    CHECK(r->write_check_seconds < 0, "%s: a backend that moves no data has no write check", shape);
}

static void
free_result(struct iok_pass_result *r)
{
    free(r->rank_phase);
    free(r->rank_span);
    free(r->rank_marks);
}

/* One file's pass: its calls in order, its regions, its result. */
static void
one_pass(const struct iok_run *run, const struct iok_plan *plan, int file, enum iok_op op,
         const char *shape, const char *want)
{
    char got[4096];
    struct iok_pass_result r;
    nlog = 0;
    int rc = iok_run_pass(&kern, NULL, run, plan, file, op, 0, -1, &r);
    CHECK(rc == IOK_OK, "%s: rc %d", shape, rc);
    check_regions(shape);
    calls(got, sizeof got);
    CHECK(!strcmp(got, want), "%s calls: %s", shape, got);
    check_result(shape, run, &r, NSTEPS);
    CHECK(r.op == op && !strcmp(r.path, plan->files[file].path), "%s: %d %s", shape, r.op, r.path);
    free_result(&r);
}

int
main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    iok_agree_init(iok_limits_note, iok_signals_job_failing);
    struct iok_run run;
    struct iok_core_opts core = {0};
    memset(&run, 0, sizeof run);
    run.core = &core;
    run.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(run.comm, &run.rank);
    MPI_Comm_size(run.comm, &run.nprocs);
    run.backend = &rec;
    run.collective = 1;
    run.hints = MPI_INFO_NULL;
    core.iterations = 1;
    core.seed = 7;
    core.fsync = 1;
    core.barriers = IOK_BARRIERS_PHASE;
    core.values = IOK_VALUES_FRESH;
    struct iok_plan *plan = calloc(1, sizeof *plan);
    file_plan(plan, 0, run.nprocs);
    file_plan(plan, 1, run.nprocs);
    iok_pass_hook = hook;
    char got[4096];
    struct iok_pass_result r;

    /* a file's write pass, then a file's read pass */
    one_pass(&run, plan, 0, IOK_OP_WRITE, "write pass",
             "create:0 define:0 requests:0 xfer write:0 wait:0 requests:0 xfer write:0 wait:0 "
             "requests:0 xfer write:0 wait:0 flush:0 close:0");
    one_pass(&run, plan, 1, IOK_OP_READ, "read pass",
             "open:1 requests:1 xfer read:1 wait:1 requests:1 xfer read:1 wait:1 requests:1 "
             "xfer read:1 wait:1 close:1");

    /* a group: file 0 written, file 1 read, interleaved */
    static const struct iok_filegroup_step steps[] = {
        {0, IOK_OP_WRITE, 0}, {1, IOK_OP_READ, 0}, {0, IOK_OP_WRITE, 1}, {1, IOK_OP_READ, 1}};
    static const struct iok_filegroup g = {4, steps};
    plan->nfilegroups = 1;
    plan->filegroups = &g;
    nlog = 0;
    int rc = iok_run_filegroup(&kern, NULL, &run, plan, 0, 0, &r);
    CHECK(rc == IOK_OK, "group: rc %d", rc);
    check_regions("group");
    calls(got, sizeof got);
    CHECK(!strcmp(got, "create:0 define:0 open:1 requests:0 xfer write:0 wait:0 requests:1 "
                       "xfer read:1 wait:1 requests:0 xfer write:0 wait:0 requests:1 xfer read:1 "
                       "wait:1 flush:0 close:0 close:1"),
          "group calls: %s", got);
    check_result("group", &run, &r, 4);
    CHECK(r.op == IOK_OP_WRITE && !strcmp(r.path, "engine-test-file-0 + engine-test-file-1"),
          "group: %d %s", r.op, r.path);
    free_result(&r);

    /* --compute after each write step, outside the timed regions; with
     * --async the step's wait comes after the compute, before the next
     * step's list; reads are neither computed after nor deferred */
    core.compute = "0.001";
    one_pass(&run, plan, 0, IOK_OP_WRITE, "write pass, --compute",
             "create:0 define:0 requests:0 xfer write:0 wait:0 compute:-1 requests:0 xfer write:0 "
             "wait:0 compute:-1 requests:0 xfer write:0 wait:0 compute:-1 flush:0 close:0");
    core.async = 1;
    one_pass(&run, plan, 0, IOK_OP_WRITE, "write pass, --async",
             "create:0 define:0 requests:0 xfer write:0 compute:-1 wait:0 requests:0 xfer write:0 "
             "compute:-1 wait:0 requests:0 xfer write:0 compute:-1 wait:0 flush:0 close:0");
    nlog = 0;
    CHECK(iok_run_pass(&kern, NULL, &run, plan, 0, IOK_OP_WRITE, 0, -1, &r) == IOK_OK, "async");
    CHECK(r.ph[IOK_PH_COMPUTE].count == NSTEPS && r.ph[IOK_PH_WAIT].count == NSTEPS &&
              r.pending_bytes_max == NELEMS * (int64_t)sizeof(double),
          "async: %d computes, %d waits, %lld bytes pending", r.ph[IOK_PH_COMPUTE].count,
          r.ph[IOK_PH_WAIT].count, (long long)r.pending_bytes_max);
    CHECK(r.io_window.min >= r.io_rank.min + NSTEPS * 0.001 - 1e-6,
          "async: the window %g holds the I/O %g and the computes", r.io_window.min, r.io_rank.min);
    free_result(&r);
    one_pass(&run, plan, 1, IOK_OP_READ, "read pass, --async",
             "open:1 requests:1 xfer read:1 wait:1 requests:1 xfer read:1 wait:1 requests:1 "
             "xfer read:1 wait:1 close:1");
    /* --async-reference: a synchronous warm-up (iteration 0), then ABBA:
     * 1 async, 2 and 3 synchronous, 4 and 5 async, ...; a synchronous
     * iteration's write waits right after its post, the result says which
     * it ran */
    core.async_reference = 1;
    core.iterations = 8;
    static const int abba[9] = {0, 1, 0, 0, 1, 1, 0, 0, 1};
    for (int it = 0; it < 9; it++)
        CHECK(iok_iteration_async(&core, it) == abba[it], "ABBA: iteration %d", it);
    CHECK(iok_iterations_run(&core) == 9, "8 iterations and the warm-up: %d",
          iok_iterations_run(&core));
    nlog = 0;
    CHECK(iok_run_pass(&kern, NULL, &run, plan, 0, IOK_OP_WRITE, 2, -1, &r) == IOK_OK, "sync");
    check_regions("write pass, synchronous reference");
    calls(got, sizeof got);
    CHECK(!strcmp(got, "create:0 define:0 requests:0 xfer write:0 wait:0 compute:-1 requests:0 "
                       "xfer write:0 wait:0 compute:-1 requests:0 xfer write:0 wait:0 compute:-1 "
                       "flush:0 close:0"),
          "synchronous reference calls: %s", got);
    CHECK(!r.async && r.pending_bytes_max == 0 && r.nstep_exposed == NSTEPS && r.step_exposed,
          "synchronous reference: async %d, %lld pending, %d steps timed", r.async,
          (long long)r.pending_bytes_max, r.nstep_exposed);
    free_result(&r);
    free(r.step_exposed);
    nlog = 0;
    CHECK(iok_run_pass(&kern, NULL, &run, plan, 0, IOK_OP_WRITE, 4, -1, &r) == IOK_OK, "async 4");
    CHECK(r.async && r.pending_bytes_max > 0, "iteration 4: async %d", r.async);
    free_result(&r);
    free(r.step_exposed);
    core.async_reference = 0;
    core.iterations = 1;
    core.compute = NULL;
    core.async = 0;

    iok_plan_free(plan);
    free(plan);
    int failures = check_summary(argc > 1 ? argv[1] : "test_engine");
    MPI_Finalize();
    return failures;
}
