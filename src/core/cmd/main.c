/* SPDX-License-Identifier: BSD-3-Clause */
/* iokernels: one binary, one subcommand per kernel.
 *
 *   iokernels KERNEL [options] [input-file]
 *
 * Options come from three tables (core, kernel, backends) and three sources,
 * later ones winning: built-in defaults, the kernel's input file, the
 * command line. Then the kernel plans the run, the core executes the plan on
 * the backend pass by pass, the kernel prints its report and the core
 * appends the JSON record. Only this file ends the process. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <unistd.h>

#include "core/cmd/cmd.h"
#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/mix/mix.h"
#include "core/record/record.h"
#include "core/run/run.h"
#include "iokernels/reqlog.h"
#include "iokernels/error.h"
#include "iokernels/input.h"

#define MAX_SETS 32

static struct iok_cmdline cmdline;
static double start_wtime; /* MPI_Wtime() right after MPI_Init */
static struct iok_optset sets[MAX_SETS];
static int nsets;

static int
given(const char *name)
{
    return iok_cmdline_has(&cmdline, sets, nsets, name);
}

static void
usage(FILE *out)
{
    fprintf(out, "usage: iokernels KERNEL [options] [input-file]\n"
                 "       iokernels KERNEL --help [--json] | iokernels --list [--json] | "
                 "iokernels --version\n"
                 "       iokernels --check-batch < CASES   (KERNEL --check for each stdin line "
                 "[\"RANKS\", \"KERNEL\", \"ARG\", ...])\n\n"
                 "kernels:\n");
    for (int i = 0; i < iok_kernel_count(); i++)
        fprintf(out, "  %-10s %s\n", iok_kernel_at(i)->name, iok_kernel_at(i)->summary);
    fprintf(out, "  %-10s %s\n", "ceiling",
            "probe plain contiguous I/O of this file system (--size, --dir)");
    fprintf(out, "  %-10s %s\n", "mix",
            "several kernels at once on split ranks: alone and together (--part N:KERNEL ...)");
}

static void
list_backends(FILE *out)
{
    fprintf(out, "backends:\n");
    for (int i = 0; i < iok_backend_count(); i++) {
        const struct iok_backend *b = iok_backend_at(i);
        if (b)
            fprintf(out, "  %-10s %s [%s]\n", b->name, b->summary, b->version());
        else
            fprintf(out, "  %-10s not loaded: %s\n", iok_backend_name_at(i),
                    iok_backend_error_at(i));
    }
    /* the capability flags of backend.h, for tools that check a sweep first */
    fprintf(out, "capabilities:\n");
    for (int i = 0; i < iok_backend_count(); i++) {
        const struct iok_backend *b = iok_backend_at(i);
        if (!b)
            continue;
        fprintf(out, "  %-10s", b->name);
        for (const struct iok_cap_word *w = iok_cap_words; w->word; w++)
            if (b->caps & w->cap)
                fprintf(out, " %s", w->word);
        fputc('\n', out);
    }
}

static void
kernel_help(const struct iok_kernel *k, FILE *out)
{
    fprintf(out, "usage: iokernels %s [options]%s\n%s\n", k->name,
            k->read_input || k->input_by_path ? " [input-file]" : "", k->summary);
    if (k->default_input)
        fprintf(out, "input file: %s when none is named (built-in defaults if it is absent)\n",
                k->default_input);
    for (int i = 0; i < nsets; i++) {
        if (!sets[i].opts || !sets[i].opts->name)
            continue;
        fprintf(out, "\n%s options:\n", sets[i].title);
        iok_opts_help(&sets[i], out);
    }
    fprintf(out, "\nbarriers: %s by default for %s (what its original does)\n",
            k->default_barriers ? k->default_barriers : "phase", k->name);
    if (!k->original_hints || !k->original_hints->key)
        return;
    fprintf(out, "hints its original sets itself (before --hints; --no-original-hints: none):");
    for (const struct iok_kernel_hint *h = k->original_hints; h->key; h++)
        fprintf(out, " %s=%s%s%s", h->key, h->value, h->backend ? " on " : "",
                h->backend ? h->backend : "");
    fputc('\n', out);
}

/* A backend module that did not load: a usage error, unless it was out of
 * memory (module.c says so: ulimit -v), a runtime failure. */
static int
load_status(const char *why)
{
    return why && strstr(why, "out of memory") ? IOK_EIO : IOK_EUSAGE;
}

/* Settles the core's choices after the kernel has configured them. */
static int
settle_core(struct core_flags *cf, struct iok_run *run)
{
    struct iok_core_opts *o = &cf->o;
    if (cf->collective && cf->independent)
        return iok_error(IOK_EUSAGE, "--collective and --independent exclude each other");
    if (!o->backend[0])
        strcpy(o->backend, iok_backend_known("pnetcdf") ? "pnetcdf" : "mpiio");
    if (o->mode == IOK_MODE_UNSET)
        o->mode = IOK_MODE_WRITE;
    if (o->api == IOK_CHOICE_UNSET)
        o->api = IOK_API_BLOCKING;
    if (o->io == IOK_IO_UNSET)
        o->io = cf->independent ? IOK_IO_INDEP : IOK_IO_COLL;
    run->backend = iok_backend_find(o->backend);
    for (int i = 0; !run->backend && i < iok_backend_count(); i++)
        if (!strcmp(iok_backend_name_at(i), o->backend)) /* its module did not load */
            return iok_error(load_status(iok_backend_error_at(i)), "backend %s: %s", o->backend,
                             iok_backend_error_at(i));
    if (!run->backend) {
        char names[512] = "";
        for (int i = 0; i < iok_backend_count(); i++)
            strcat(strcat(names, i ? ", " : ""), iok_backend_name_at(i));
        return iok_error(IOK_EUSAGE, "unknown backend '%s': this build has %s", o->backend, names);
    }
    unsigned caps = run->backend->caps;
    run->collective = o->io != IOK_IO_INDEP;
    run->api = (enum iok_api)o->api;
    IOK_TRY(iok_compute_settle(run, o)); /* --compute, --async: before the API's checks */
    if (run->api == IOK_API_NONBLOCKING && !(caps & IOK_CAP_NONBLOCKING))
        return iok_error(IOK_EUSAGE, "backend %s has no nonblocking API: use --api blocking",
                         o->backend);
    if (run->api == IOK_API_VARN && !(caps & IOK_CAP_VARN))
        return iok_error(IOK_EUSAGE, "backend %s has no varn API: use --api blocking", o->backend);
    if (run->collective && !(caps & IOK_CAP_COLLECTIVE))
        return iok_error(IOK_EUSAGE, "backend %s has no collective transfers: use --independent",
                         o->backend);
    if (!run->collective && !(caps & IOK_CAP_INDEPENDENT))
        return iok_error(IOK_EUSAGE, "backend %s has no independent transfers: use --collective",
                         o->backend);
    if (o->barriers == IOK_BARRIERS_KERNEL)
        o->barriers = run->kernel_default_barriers
                          ? iok_choice_index(IOK_BARRIERS_CHOICES, run->kernel_default_barriers)
                          : IOK_BARRIERS_PHASE;
    /* the ranges of --deadline, --iterations, ... are the table's
     * (core_options.c), enforced as each value is parsed */
    if (cf->check_ranks[0] && !cf->check)
        return iok_error(IOK_EUSAGE, "--ranks goes with --check: drop it, or add --check");
    if ((run->kernel_flags & IOK_KERNEL_TOOL) &&
        (o->verify || o->ceiling || o->iterations != 1 || o->drop_caches || o->fsync))
        return iok_error(IOK_EUSAGE, "this subcommand is a tool, not a benchmark: drop --verify, "
                                     "--ceiling, --iterations, --drop-caches and --fsync");
    if (o->shift_ranks && !(run->kernel_flags & IOK_KERNEL_SHIFTABLE))
        return iok_error(IOK_EUSAGE, "--shift-ranks: this kernel's reads cannot be shifted");
    if (o->verify && (caps & IOK_CAP_NOIO))
        return iok_error(IOK_EUSAGE, "backend %s moves no data: --verify cannot check it",
                         o->backend);
    if (o->fsync && !run->backend->flush)
        return iok_error(IOK_EUSAGE, "backend %s cannot flush: drop --fsync", o->backend);
    if (o->json[0] && run->rank == 0) { /* before any I/O, not after it */
        /* Checked, not created: a job ended by a signal, a kill or an abort
         * leaves no empty file behind; the record creates it at the end. */
        int fd = open(o->json, O_WRONLY | O_APPEND);
        char dir[PATH_MAX];
        iok_dirname(o->json, dir, sizeof dir);
        struct stat st;
        if (fd < 0 && errno == ENOENT && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
            return iok_error(IOK_EUSAGE, "cannot create --json file %s: %s is not a folder",
                             o->json, dir);
        if (fd < 0 && errno == ENOENT && access(dir, W_OK) != 0)
            return iok_error(IOK_EUSAGE, "cannot create --json file %s in %s (%s): check the path",
                             o->json, dir, strerror(errno));
        if (fd < 0 && errno != ENOENT)
            return iok_error(IOK_EUSAGE, "cannot open --json file %s (%s): check the path", o->json,
                             strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    run->do_write = o->mode != IOK_MODE_READ;
    run->do_read = o->mode != IOK_MODE_WRITE;
    run->core = o;
    return IOK_OK;
}

static struct iok_pass_result *
next_pass(struct iok_result *res)
{
    if (res->npasses == res->cap) {
        int ncap = res->cap ? 2 * res->cap : 16;
        struct iok_pass_result *p = realloc(res->pass, (size_t)ncap * sizeof *p);
        if (!p)
            return NULL;
        res->pass = p;
        res->cap = ncap;
    }
    return &res->pass[res->npasses];
}

/* With --ceiling, after the last pass: the probe for each pass of the first
 * iteration, later iterations carrying its figures; then every pass judged
 * against its ceiling. After the last pass, never between a write and its
 * read: the probe's writes would change the page cache (and the dirty
 * pages) the read finds. */
static int
probe_ceilings(const struct iok_run *run, struct iok_result *res)
{
    for (int i = 0; run->core->ceiling && i < res->npasses; i++) {
        struct iok_pass_result *p = &res->pass[i];
        if (p->iteration != 0) { /* same file and op, first iteration */
            for (int j = 0; j < res->npasses; j++)
                if (res->pass[j].iteration == 0 && res->pass[j].file == p->file &&
                    res->pass[j].op == p->op)
                    p->ceiling = res->pass[j].ceiling;
            continue;
        }
        /* reads against a probe of their kind: past the page cache when
         * theirs was dropped, else through it */
        enum iok_ceiling_read kind = p->op == IOK_OP_WRITE ? IOK_CEIL_READ_NONE
                                     : p->cache[0]         ? IOK_CEIL_READ_STORAGE
                                                           : IOK_CEIL_READ_CACHED;
        int rc = iok_ceiling_probe(run->comm, p->path, p->own_bytes, run->core->fsync, kind,
                                   run->core->ceiling_samples, &p->ceiling);
        if (rc)
            return rc;
    }
    for (int i = 0; i < res->npasses; i++)
        iok_ceiling_judge(run, &res->pass[i]); /* above its ceiling: flagged, with a reason */
    return IOK_OK;
}

/* --iterations times: the write passes (one per file), then the read passes
 * (or the read-back of --verify), or in the plan's pass_order; then the
 * ceiling probes (probe_ceilings). */
/* Group g's interleaved pass (engine.c), after each file it writes is
 * reset for the iteration as a write pass's is. */
static int
run_filegroup(const struct iok_kernel *k, const void *kopts, const struct iok_run *run,
              const struct iok_plan *plan, int g, int it, struct iok_result *res, int *verify_rc)
{
    const struct iok_filegroup *gr = &plan->filegroups[g];
    char state[96] = "";
    int rc = IOK_OK;
    for (int f = 0; f < plan->nfiles && rc == IOK_OK; f++)
        for (int i = 0; i < gr->nsteps; i++)
            if (gr->steps[i].file == f && gr->steps[i].op == IOK_OP_WRITE) {
                rc = iok_iteration_reset(run, plan, f, it, res, state, sizeof state);
                break;
            }
    struct iok_pass_result *p = rc ? NULL : next_pass(res);
    if (rc || !p)
        return rc ? rc : iok_agree(run->comm, iok_error(IOK_EIO, "out of memory for results"));
    rc = iok_run_filegroup(k, kopts, run, plan, g, it, p);
    if (rc == IOK_EVERIFY) { /* keep going: the report shows it */
        *verify_rc = rc;
        rc = IOK_OK;
        iok_error_clear();
    }
    if (rc == IOK_OK) {
        iok_read_source(run, p);
        res->npasses++;
    }
    return rc;
}

static int
run_passes(const struct iok_kernel *k, const void *kopts, const struct iok_run *run,
           const struct iok_plan *plan, struct iok_result *res, int *verify_rc)
{
    int rc = IOK_OK, nf = plan->nfiles, n = plan->npass_order ? plan->npass_order : 2 * nf;
    if (!iok_plan_order_valid(plan))
        return iok_agree(run->comm, iok_error(IOK_EIO, "the kernel's pass order lists a pass "
                                                       "twice, out of range, or a file's read "
                                                       "before its write (a kernel bug)"));
    for (int it = 0; it < iok_iterations_run(run->core); it++) {
        iok_pace_reset(); /* a paced replay keeps its gaps in every iteration */
        for (int i = 0; i < n; i++) {
            int e = plan->npass_order ? plan->pass_order[i] : 2 * (i % nf) + i / nf;
            if (e < 0) { /* IOK_PASS_FILEGROUP: files open together, interleaved */
                if ((rc = run_filegroup(k, kopts, run, plan, IOK_PASS_GROUP_OF(e), it, res,
                                        verify_rc)))
                    return rc;
                continue;
            }
            int round = e % 2, f = e / 2;
            enum iok_op op = round == 0 ? IOK_OP_WRITE : run->do_read ? IOK_OP_READ : IOK_OP_VERIFY;
            if (round == 0 ? !run->do_write : !run->do_read && !run->core->verify)
                continue;
            const struct iok_file_plan *fp = &plan->files[f];
            if (fp->op_steps && !(op == IOK_OP_WRITE ? fp->nsteps_write : fp->nsteps_read))
                continue; /* no pass of this kind: the file is not opened for it */
            struct iok_pass_result *p = next_pass(res);
            if (!p)
                return iok_agree(run->comm, iok_error(IOK_EIO, "out of memory for results"));
            /* after a stonewalled write, read and check what was written */
            int max_steps = -1;
            for (int j = 0; op != IOK_OP_WRITE && j < res->npasses; j++)
                if (res->pass[j].iteration == it && res->pass[j].file == f &&
                    res->pass[j].op == IOK_OP_WRITE && res->pass[j].stonewalled)
                    max_steps = res->pass[j].steps_done;
            char state[sizeof p->start_state] = "";
            if (op == IOK_OP_WRITE &&
                (rc = iok_iteration_reset(run, plan, f, it, res, state, sizeof state)))
                return rc;
            rc = iok_run_pass(k, kopts, run, plan, f, op, it, max_steps, p);
            if (state[0])
                snprintf(p->start_state, sizeof p->start_state, "%s", state);
            if (rc == IOK_EVERIFY) { /* keep going: the report shows it */
                *verify_rc = rc;
                rc = IOK_OK;
                iok_error_clear(); /* printed already; a later error has its own */
            }
            if (rc)
                return rc;
            iok_read_source(run, p);
            res->npasses++;
        }
    }
    return rc ? rc : probe_ceilings(run, res);
}

static int
wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    return 0;
}

/* Whether an argument is one of backend NAME's options (--NAME-...). */
static int
names_backend_option(const char *name, int argc, char **argv)
{
    size_t n = strlen(name);
    for (int i = 0; i < argc; i++)
        if (!strncmp(argv[i], "--", 2) && !strncmp(argv[i] + 2, name, n) && argv[i][2 + n] == '-')
            return 1;
    return 0;
}

/* Adds backend B's option set (B NULL: its module failed to load; the
 * reason is recorded and reported when the backend is chosen). */
static void
add_backend_options(const struct iok_backend *b, void **bopts)
{
    if (!b || !b->options || nsets >= MAX_SETS)
        return;
    bopts[nsets] = calloc(1, b->opts_size);
    sets[nsets] = (struct iok_optset){b->name, b->options, bopts[nsets]};
    nsets++;
}

/* One run of a kernel, from its options to its record (run_kernel). */
struct kernel_run {
    const struct iok_kernel *k;
    struct iok_member_run *m; /* NULL: a run on the whole job; else a mix member's (mix.c) */
    int argc;
    char **argv;
    struct iok_run run;
    FILE *rout;       /* where rank 0's report goes */
    int wrank, wsize; /* IOK_FAULT names a rank of the job, in a mix too */
    struct core_flags cf;
    void *kopts;
    void *bopts[MAX_SETS];
    struct iok_plan *plan; /* on the heap: ~290 KB, more than a small stack (ulimit -s 256) */
    struct iok_result res;
    struct iok_reqlog mylog, alllog; /* the request log, when kept */
    char *text;                      /* the kernel's input file */
    char input_name[4];              /* a one-character input name as MPI-IO is handed it */
    double t0;                       /* the start of the parse */
    char said[IOK_OPT_STRLEN + 16];  /* the rank counts checked, for the line that says so */
    struct iok_cores cores;          /* the cores under the ranks (run.cores) */
};

/* The option sets (core, kernel, the backends named or all for the help),
 * their defaults, the command line split over them. Agreed. */
static int
kr_options(struct kernel_run *kr, int *json_help)
{
    const struct iok_kernel *k = kr->k;
    nsets = 0;
    sets[nsets++] = (struct iok_optset){"core", iok_core_options, &kr->cf};
    sets[nsets++] = (struct iok_optset){k->name, k->options, kr->kopts};
    /* A backend's options (--NAME-...) are known once its module is loaded:
     * those of the backends the command line names, or all for the help. */
    int all_backends = wants_help(kr->argc, kr->argv), rc = IOK_OK;
    for (int i = 0; i < iok_backend_count() && nsets < MAX_SETS; i++) {
        const char *name = iok_backend_name_at(i);
        int named = names_backend_option(name, kr->argc, kr->argv);
        if (!all_backends && !named)
            continue;
        const struct iok_backend *b = iok_backend_at(i);
        if (!b && named && !rc) /* its options are unknown: say why, not "unknown" */
            rc = iok_error(load_status(iok_backend_error_at(i)),
                           "the --%s-... options: backend %s: %s", name, name,
                           iok_backend_error_at(i));
        add_backend_options(b, kr->bopts);
    }
    for (int i = 0; i < nsets; i++)
        iok_opts_defaults(&sets[i]);
    kr->t0 = MPI_Wtime();
    *json_help = iok_help_as_json(&kr->argc, kr->argv);
    if (rc == IOK_OK)
        rc = iok_cmdline_split(kr->argc, kr->argv, sets, nsets, &cmdline);
    if (rc == IOK_OK && cmdline.npos > 1)
        rc = iok_error(IOK_EUSAGE, "expected at most one input file, got '%s' and '%s'",
                       cmdline.pos[0], cmdline.pos[1]);
    if (rc == IOK_OK && cmdline.npos == 1 && !k->read_input && !k->input_by_path)
        rc = iok_error(IOK_EUSAGE, "kernel %s takes no input file (got '%s')", k->name,
                       cmdline.pos[0]);
    if (rc == IOK_OK && (!kr->plan || !kr->kopts))
        rc = iok_error(IOK_EIO, "out of memory for the run's plan");
    return iok_agree(kr->run.comm, rc);
}

/* The kernel's input file: its path handed over (read by the kernel in
 * parallel), or its text read once and applied. Agreed. */
static int
kr_input(struct kernel_run *kr)
{
    const struct iok_kernel *k = kr->k;
    struct iok_run *run = &kr->run;
    int rc = IOK_OK;
    if (k->input_by_path && cmdline.npos) {
        run->input_path = cmdline.pos[0];
        if (strlen(run->input_path) < sizeof kr->input_name) { /* read through MPI-IO */
            snprintf(kr->input_name, sizeof kr->input_name, "%s", run->input_path);
            iok_mpiio_name(kr->input_name, sizeof kr->input_name);
            run->input_path = kr->input_name;
        }
        if (run->rank == 0 && access(run->input_path, R_OK) != 0)
            rc =
                iok_error(IOK_EUSAGE, "cannot open input file %s: check the path", run->input_path);
        if (rc == IOK_OK && run->rank == 0)
            rc = iok_mpiio_path_check(run->input_path, run->nprocs, "input file");
        return iok_agree(run->comm, rc);
    }
    if (!k->read_input || k->input_by_path || !(cmdline.npos || k->default_input))
        return IOK_OK;
    const char *path = cmdline.npos ? cmdline.pos[0] : k->default_input;
    /* a named file must exist; the default one may be absent (built-in defaults) */
    IOK_TRY(iok_read_shared_text(path, "input file", run->comm, cmdline.npos == 0, &kr->text));
    if (!kr->text)
        return IOK_OK;
    run->input_path = path;
    return iok_agree(run->comm, k->read_input(kr->text, path, sets, nsets));
}

/* The command line over the input file, the kernel's configure, the
 * core's settled choices, the fault, the hints, the backend's options.
 * Agreed. */
static int
kr_configure(struct kernel_run *kr)
{
    const struct iok_kernel *k = kr->k;
    struct iok_run *run = &kr->run;
    run->kernel_flags = k->flags;
    run->kernel_default_barriers = k->default_barriers;
    run->original_hints = k->original_hints;
    int rc = iok_cmdline_apply(&cmdline, sets, nsets);
    if (rc == IOK_OK && k->configure)
        rc = k->configure(kr->kopts, &kr->cf.o, given);
    if (rc == IOK_OK && kr->cf.o.async && !given("api")) /* posts now, completes later */
        kr->cf.o.api = IOK_API_NONBLOCKING;
    if (rc == IOK_OK)
        rc = settle_core(&kr->cf, run);
    if (rc == IOK_OK)
        rc = iok_fault_init(kr->wrank, kr->wsize);
    if (rc == IOK_OK) /* outside every timed region: once per run */
        rc = iok_hints_build(run->core, run->original_hints, run->backend->name, run->comm,
                             &run->hints);
    IOK_TRY(iok_agree(run->comm, rc));
    for (int i = 0; i < nsets; i++)
        if (!strcmp(sets[i].title, run->backend->name))
            run->backend_opts = kr->bopts[i];
    if (!run->backend_opts && run->backend->options) { /* chosen, none of its options given */
        int before = nsets;
        add_backend_options(run->backend, kr->bopts);
        if (nsets > before) {
            iok_opts_defaults(&sets[before]);
            run->backend_opts = kr->bopts[before];
        }
    }
    return IOK_OK;
}

/* The rank rules for the job's count, or for those of --check --ranks;
 * *plan_it: the job's count is among them (the plan needs the ranks it is
 * for). Agreed. */
static int
kr_rank_rules(struct kernel_run *kr, int *plan_it)
{
    const struct iok_run *run = &kr->run;
    int counts[64] = {run->nprocs}, ncounts = 1, rc = IOK_OK;
    *plan_it = 0;
    if (kr->cf.check_ranks[0])
        rc = iok_rank_counts(kr->cf.check_ranks, counts, 64, &ncounts);
    for (int i = 0; rc == IOK_OK && i < ncounts; i++) {
        rc = iok_rank_rules(kr->k, kr->kopts, counts[i]);
        *plan_it |= counts[i] == run->nprocs;
    }
    snprintf(kr->said, sizeof kr->said, "%s rank%s",
             kr->cf.check_ranks[0] ? kr->cf.check_ranks : "",
             ncounts == 1 && counts[0] == 1 ? "" : "s");
    if (!kr->cf.check_ranks[0])
        snprintf(kr->said, sizeof kr->said, "%d rank%s", run->nprocs, run->nprocs == 1 ? "" : "s");
    return iok_agree(run->comm, rc);
}

/* The kernel's plan, its paths and memory checked; the kernel's original
 * hints, when plan() found them, built into the run's. Agreed. */
static int
kr_plan(struct kernel_run *kr)
{
    struct iok_run *run = &kr->run;
    struct iok_plan *plan = kr->plan;
    int rc = kr->k->plan(kr->kopts, run, plan);
    if (rc == IOK_OK)
        iok_plan_mpiio_names(run, plan);
    if (rc == IOK_OK && run->rank == 0)
        rc = iok_check_plan_paths(run, plan);
    if (rc == IOK_OK)
        rc = iok_limits_check_memory(run, plan);
    IOK_TRY(iok_agree(run->comm, rc));
    if (!plan->original_hints) /* what plan() found: the same on every rank */
        return IOK_OK;
    run->original_hints = plan->original_hints;
    if (run->hints != MPI_INFO_NULL)
        MPI_Info_free(&run->hints);
    rc =
        iok_hints_build(run->core, run->original_hints, run->backend->name, run->comm, &run->hints);
    return iok_agree(run->comm, rc);
}

/* The run itself: signals armed, the clock, the request log, every pass,
 * the log gathered. *verify_rc: a verify that found differences. */
static int
kr_execute(struct kernel_run *kr, int *verify_rc)
{
    const struct iok_kernel *k = kr->k;
    struct iok_run *run = &kr->run;
    double parse = MPI_Wtime() - kr->t0;
    MPI_Allreduce(&parse, &kr->res.parse_time, 1, MPI_DOUBLE, MPI_MAX, run->comm);
    kr->res.parse_rank = iok_stat_reduce(parse, run->comm);
    /* the cores under the ranks, for the record and the headlines (untimed) */
    IOK_TRY(iok_agree(run->comm,
                      iok_cores_gather(run->comm, 0, kr->m ? kr->m->node_ranks : 0, &kr->cores)));
    run->cores = &kr->cores;
    /* a signal from here on ends the run with a line, its record and no
     * partial output (signals.c); the record's prefix is built now, as
     * the handler can build nothing */
    char *prefix = NULL;
    if (run->core->json[0] && !kr->m) {
        struct iok_json_input in = {k,    kr->kopts, run,    kr->plan, &kr->res,
                                    sets, nsets,     IOK_OK, kr->argc, kr->argv};
        prefix = iok_json_terminated_prefix(&in);
    }
    iok_signals_record(run->core->json, prefix);
    iok_signals_install(run->rank, run->core->keep_partial);
    iok_clock_sync(run->comm); /* one clock for the job's timestamps, untimed */
    /* the request log, for --export-replay or the kernel (untimed) */
    if (run->core->export_replay[0] || (k->flags & IOK_KERNEL_REQLOG)) {
        int rc = run->core->export_replay[0] ? iok_reqlog_export_check(run, kr->plan) : IOK_OK;
        IOK_TRY(iok_agree(run->comm, rc));
        iok_reqlog_start(&kr->mylog, run->comm);
        iok_log = &kr->mylog;
    }
    if (kr->m) /* a mix's later run: as its first */
        IOK_TRY(iok_member_remove_made(kr->m, run));
    int rc = run_passes(k, kr->kopts, run, kr->plan, &kr->res, verify_rc);
    if (rc == IOK_OK || rc == IOK_EVERIFY)
        iok_clock_check(run->comm); /* did the offsets hold over the passes? untimed */
    if (iok_log && (rc == IOK_OK || rc == IOK_EVERIFY)) {
        int grc = iok_reqlog_gather(&kr->mylog, run->comm, &kr->alllog);
        if (grc == IOK_OK && run->rank == 0) {
            kr->res.log = &kr->alllog;
            if (run->core->export_replay[0])
                grc = iok_reqlog_export(run->core->export_replay, &kr->alllog, run, kr->plan,
                                        k->name);
        }
        if ((grc = iok_agree(run->comm, grc)))
            rc = grc;
    }
    return rc;
}

/* The kernel's report and the core's, then the record (or a mix member's
 * results handed to the mix). */
static int
kr_finish(struct kernel_run *kr, int rc, int verify_rc)
{
    const struct iok_kernel *k = kr->k;
    struct iok_run *run = &kr->run;
    iok_signals_doing("the report", NULL);
    if (rc != IOK_OK && rc != IOK_EVERIFY)
        iok_signals_quiet();
    if (rc == IOK_OK) {
        if (run->rank == 0 && !run->core->quiet) {
            k->report(kr->kopts, run, kr->plan, &kr->res, kr->rout);
            if (!run->core->machine_report && !(k->flags & IOK_KERNEL_TOOL))
                iok_report_core(run, kr->plan, &kr->res, kr->rout);
        }
        rc = verify_rc;
    }
    if (rc != IOK_OK && rc != IOK_EVERIFY)
        return rc;
    struct iok_json_input in = {k,    kr->kopts, run, kr->plan, &kr->res,
                                sets, nsets,     rc,  kr->argc, kr->argv};
    int jrc = IOK_OK;
    if (kr->m)
        jrc = iok_member_collect(kr->m, run, kr->plan, &kr->res, kr->m->want_record ? &in : NULL);
    else if (run->core->json[0])
        jrc = iok_json_append(run->core->json, &in); /* collective */
    else
        return rc;
    jrc = iok_agree(run->comm, jrc);
    return jrc ? jrc : rc;
}

static void
kr_free(struct kernel_run *kr)
{
    for (int i = 0; i < kr->res.npasses; i++) {
        free(kr->res.pass[i].rank_phase);
        free(kr->res.pass[i].hints);
        free(kr->res.pass[i].rank_span);
        free(kr->res.pass[i].rank_marks);
        free(kr->res.pass[i].step_exposed);
    }
    if (kr->run.hints != MPI_INFO_NULL)
        MPI_Info_free(&kr->run.hints);
    iok_log = NULL;
    iok_reqlog_free(&kr->mylog);
    iok_reqlog_free(&kr->alllog);
    iok_cores_free(&kr->cores);
    if (kr->plan)
        iok_plan_free(kr->plan);
    free(kr->plan);
    free(kr->text);
    iok_cmdline_free(&cmdline);
    iok_opts_release(&(struct iok_optset){"core", iok_core_options, &kr->cf});
    for (int i = 0; i < MAX_SETS; i++)
        free(kr->bopts[i]);
    free(kr->kopts);
    free(kr->res.pass);
}

/* A --check run's line, when it ends before the run: 1 if it ended. */
static int
kr_checked(const struct kernel_run *kr, int plan_it, int planned)
{
    const struct iok_kernel *k = kr->k;
    const int rank0 = kr->run.rank == 0;
    if (!kr->cf.check)
        return 0;
    if (k->flags & IOK_KERNEL_TOOL) { /* a tool's plan is its work */
        if (rank0)
            printf("iokernels %s: options OK (a tool: its plan is its work, not done)\n", k->name);
    } else if (!plan_it) { /* the plan needs the ranks it is for */
        if (rank0)
            printf("iokernels %s: options and rank rules OK for %s (not planned: run --check "
                   "on that many ranks to plan it)\n",
                   k->name, kr->said);
    } else if (!planned) {
        return 0;
    } else if (rank0) { /* configured and planned: nothing opened, nothing written */
        printf("iokernels %s: options OK for %s (configured and planned at %d: %d file%s; "
               "no I/O)\n",
               k->name, kr->said, kr->run.nprocs, kr->plan->nfiles,
               kr->plan->nfiles == 1 ? "" : "s");
    }
    return 1;
}

/* M NULL: a run on the whole job; else a mix member's run on M->comm (mix.c) */
static int
run_kernel(const struct iok_kernel *k, int argc, char **argv, int *printed_help,
           struct iok_member_run *m)
{
    struct kernel_run *kr = calloc(1, sizeof *kr);
    if (!kr)
        return iok_agree(m ? m->comm : MPI_COMM_WORLD,
                         iok_error(IOK_EIO, "out of memory for the run of %s", k->name));
    *kr = (struct kernel_run){.k = k, .m = m, .argc = argc, .argv = argv};
    kr->run = (struct iok_run){
        .comm = m ? m->comm : MPI_COMM_WORLD, .core = &kr->cf.o, .hints = MPI_INFO_NULL};
    kr->rout = m && m->report ? m->report : stdout;
    MPI_Comm_rank(MPI_COMM_WORLD, &kr->wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &kr->wsize);
    MPI_Comm_rank(kr->run.comm, &kr->run.rank);
    MPI_Comm_size(kr->run.comm, &kr->run.nprocs);
    kr->kopts = calloc(1, k->opts_size ? k->opts_size : 1);
    kr->plan = calloc(1, sizeof *kr->plan);
    kr->res.start_wtime = start_wtime;
    int json_help, plan_it = 0, verify_rc = IOK_OK, rc;
    if ((rc = kr_options(kr, &json_help)))
        goto out;
    if (iok_cmdline_has(&cmdline, sets, nsets, "help")) {
        if (kr->run.rank == 0 && json_help)
            iok_describe_kernel(k, sets, nsets, stdout);
        else if (kr->run.rank == 0)
            kernel_help(k, stdout);
        *printed_help = 1;
        goto out;
    }
    if ((rc = kr_input(kr)) || (rc = kr_configure(kr)) || (rc = kr_rank_rules(kr, &plan_it)))
        goto out;
    if (kr_checked(kr, plan_it, 0) || (rc = kr_plan(kr)) || kr_checked(kr, plan_it, 1))
        goto out;
    if (m && m->check_only) { /* a mix checks every member before any runs */
        rc = kr->run.rank == 0 ? iok_member_planned(m, &kr->run, kr->plan) : IOK_OK;
        goto out;
    }
    rc = kr_execute(kr, &verify_rc);
    rc = kr_finish(kr, rc, verify_rc);
out:
    /* the run is over (its line, report and record are out): a signal from
     * here on (mpiexec ending the ranks after one exits non-zero) only ends
     * the process */
    iok_signals_quiet();
    fflush(stdout);
    kr_free(kr);
    free(kr);
    return rc;
}

static int
run_member(const struct iok_kernel *k, int argc, char **argv, struct iok_member_run *m)
{
    int printed_help = 0;
    return run_kernel(k, argc, argv, &printed_help, m);
}

/* The IOK_* variables checked (env.c), and the agreement told its timeout
 * (IOK_AGREE_SECONDS) before it agrees on them. */
static int
env_check(void)
{
    int rc = iok_env_check();
    iok_agree_timeout(iok_env_agree_seconds());
    return rc;
}

int
main(int argc, char **argv)
{
    if (iok_tmpdir_check() != IOK_OK) { /* read by MPI_Init: one line, not the library's 50 */
        if (iok_launcher_rank() <= 0)
            fprintf(stderr, "iokernels: error: %s\n", iok_errmsg());
        return IOK_EUSAGE;
    }
    iok_mpiio_layer_defaults(); /* read by MPI_Init */
    iok_limits_init();
    MPI_Init(&argc, &argv);
    start_wtime = MPI_Wtime();
    iok_agree_init(iok_limits_note, iok_signals_job_failing);
    int rank, rc = IOK_OK, printed_help = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "--help") || !strcmp(what, "-h")) {
        if (rank == 0)
            usage(stdout);
    } else if (!strcmp(what, "--list") && argc > 2 && !strcmp(argv[2], "--json")) {
        if (rank == 0)
            iok_describe_list(stdout);
    } else if (!strcmp(what, "--list")) {
        if (rank == 0) {
            usage(stdout);
            list_backends(stdout);
        }
    } else if (!strcmp(what, "--version")) {
        if (rank == 0)
            printf("iokernels %s (%s)\n", IOK_VERSION, iok_commit);
    } else if ((rc = iok_agree(MPI_COMM_WORLD, env_check()))) {
        /* a bad IOK_* value: its line is printed, nothing has run */
    } else if (!strcmp(what, "ceiling")) {
        rc = iok_ceiling_main(argc - 2, argv + 2);
    } else if (!strcmp(what, "mix")) {
        rc = iok_mix_main(argc - 2, argv + 2, run_member);
    } else if (!strcmp(what, "--check-batch")) {
        rc = iok_check_batch_main(argc - 2, argv + 2, run_member);
    } else {
        const struct iok_kernel *k = iok_kernel_find(what);
        if (!k) {
            if (rank == 0 && argc > 1)
                iok_unknown_kernel(what);
            else if (rank == 0) /* no kernel named: what there is */
                usage(stderr);
            rc = IOK_EUSAGE;
        } else {
            rc = run_kernel(k, argc - 2, argv + 2, &printed_help, NULL);
        }
    }
    if (rc == IOK_EIO || (rc != IOK_OK && iok_abandoned)) {
        /* After an I/O error a library may be left in a state it cannot
         * finalize from (HDF5 1.10 crashes in MPI_Finalize closing a file
         * whose H5Fclose failed on a full disk): every rank agreed on the
         * error already, so the job ends here with it, unfinalized.
         * One more (timed) agreement first: the rank that prints the error
         * line does so after the agreement returns, and mpiexec kills the
         * job as soon as any rank exits non-zero, so a rank leaving early
         * could take the printer down before its line is written. */
        fflush(stdout);
        fflush(stderr);
        iok_agree(MPI_COMM_WORLD, rc);
        fflush(stdout);
        fflush(stderr);
#ifdef MPICH_VERSION
        /* MPICH's hydra ends the job with the highest exit status of its
         * ranks: 9 for a rank it killed because another had left first.
         * MPI_Abort from rank 0 alone makes the job's status the error's;
         * the others wait to be ended with it. */
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            iok_abort_job(rc);
        sleep(30);
#endif
        _exit(rc);
    }
    MPI_Finalize();
    return rc;
}
