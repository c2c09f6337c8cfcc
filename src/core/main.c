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
#include <unistd.h>

#include "core.h"
#include "iokernels/error.h"

#define MAX_SETS 32

struct core_flags {
    struct iok_core_opts o;
    int collective, independent, help;
};

static const struct iok_option core_options[] = {
    {"backend", 0, IOK_OPT_STRING, offsetof(struct core_flags, o.backend), NULL,
     "I/O backend (see iokernels --list); default chosen by the kernel"},
    {"mode", 0, IOK_OPT_CHOICE, offsetof(struct core_flags, o.mode), NULL,
     "write the files, read them back, or both", "write|read|both"},
    {"collective", 0, IOK_OPT_BOOL, offsetof(struct core_flags, collective), NULL,
     "collective transfers (the default unless the kernel says otherwise)"},
    {"independent", 0, IOK_OPT_BOOL, offsetof(struct core_flags, independent), NULL,
     "independent transfers"},
    {"api", 0, IOK_OPT_CHOICE, offsetof(struct core_flags, o.api), NULL,
     "library API flavour for backends that have several (pnetcdf)", "blocking|nonblocking|varn"},
    {"verify", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.verify), NULL,
     "check every value: read back after writing, or check what is read"},
    {"seed", 0, IOK_OPT_INT64, offsetof(struct core_flags, o.seed), "1",
     "seed of the deterministic data (reads must use the writer's)"},
    {"json", 0, IOK_OPT_STRING, offsetof(struct core_flags, o.json), NULL,
     "append the run's JSON record to this file (JSON Lines)"},
    {"overwrite", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.overwrite), NULL,
     "replace output files that already exist"},
    {"fsync", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.fsync), NULL,
     "flush written data to storage inside the timed write"},
    {"quiet", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.quiet), NULL,
     "no human report (the JSON record is still written)"},
    {"ceiling", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.ceiling), NULL,
     "after each write, time a contiguous MPI-IO write of the same bytes (the ceiling)"},
    {"help", 'h', IOK_OPT_BOOL, offsetof(struct core_flags, help), NULL, "this help"},
    {NULL}};

static struct iok_cmdline cmdline;
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
                 "       iokernels KERNEL --help | iokernels --list | iokernels --version\n\n"
                 "kernels:\n");
    for (int i = 0; i < iok_kernel_count(); i++)
        fprintf(out, "  %-10s %s\n", iok_kernel_at(i)->name, iok_kernel_at(i)->summary);
}

static void
list_backends(FILE *out)
{
    fprintf(out, "backends:\n");
    for (int i = 0; i < iok_backend_count(); i++) {
        const struct iok_backend *b = iok_backend_at(i);
        fprintf(out, "  %-10s %s [%s]\n", b->name, b->summary, b->version());
    }
}

static void
kernel_help(const struct iok_kernel *k, FILE *out)
{
    fprintf(out, "usage: iokernels %s [options]%s\n%s\n", k->name,
            k->default_input || k->input_by_path ? " [input-file]" : "", k->summary);
    if (k->default_input)
        fprintf(out, "input file: %s when none is named (built-in defaults if it is absent)\n",
                k->default_input);
    for (int i = 0; i < nsets; i++) {
        if (!sets[i].opts || !sets[i].opts->name)
            continue;
        fprintf(out, "\n%s options:\n", sets[i].title);
        iok_opts_help(&sets[i], out);
    }
}

/* Rank 0 reads the whole file and broadcasts it: one reader however many
 * ranks. Returns NULL (error recorded on rank 0) if it cannot. */
static char *
read_shared_text(const char *path, MPI_Comm comm, int rank, int must_exist, int *found)
{
    long len = -1;
    char *text = NULL;
    if (rank == 0) {
        FILE *f = fopen(path, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            len = ftell(f);
            fseek(f, 0, SEEK_SET);
            text = malloc((size_t)len + 1);
            if (fread(text, 1, (size_t)len, f) != (size_t)len)
                len = -2;
            fclose(f);
        } else if (must_exist) {
            iok_error(IOK_EUSAGE, "cannot open input file %s: check the path", path);
        }
    }
    MPI_Bcast(&len, 1, MPI_LONG, 0, comm);
    *found = len >= 0;
    if (len < 0) {
        free(text);
        return NULL;
    }
    if (rank != 0)
        text = malloc((size_t)len + 1);
    MPI_Bcast(text, (int)len, MPI_CHAR, 0, comm);
    text[len] = '\0';
    return text;
}

/* Settles the core's choices after the kernel has configured them. */
static int
settle_core(struct core_flags *cf, struct iok_run *run)
{
    struct iok_core_opts *o = &cf->o;
    if (cf->collective && cf->independent)
        return iok_error(IOK_EUSAGE, "--collective and --independent exclude each other");
    if (!o->backend[0])
        strcpy(o->backend, iok_backend_find("pnetcdf") ? "pnetcdf" : "mpiio");
    if (!o->mode[0])
        strcpy(o->mode, "write");
    if (!o->api[0])
        strcpy(o->api, "blocking");
    if (!o->io[0])
        strcpy(o->io, cf->independent ? "indep" : "coll");
    run->backend = iok_backend_find(o->backend);
    if (!run->backend) {
        char names[512] = "";
        for (int i = 0; i < iok_backend_count(); i++)
            strcat(strcat(names, i ? ", " : ""), iok_backend_at(i)->name);
        return iok_error(IOK_EUSAGE, "unknown backend '%s': this build has %s", o->backend, names);
    }
    unsigned caps = run->backend->caps;
    run->collective = strcmp(o->io, "indep") != 0;
    run->api = !strcmp(o->api, "nonblocking") ? IOK_API_NONBLOCKING
               : !strcmp(o->api, "varn")      ? IOK_API_VARN
                                              : IOK_API_BLOCKING;
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
    if (o->verify && (caps & IOK_CAP_NOIO))
        return iok_error(IOK_EUSAGE, "backend %s moves no data: --verify cannot check it",
                         o->backend);
    if (o->fsync && !run->backend->flush)
        return iok_error(IOK_EUSAGE, "backend %s cannot flush: drop --fsync", o->backend);
    run->do_write = strcmp(o->mode, "read") != 0;
    run->do_read = strcmp(o->mode, "write") != 0;
    run->core = *o;
    return IOK_OK;
}

static int
run_kernel(const struct iok_kernel *k, int argc, char **argv, int *printed_help)
{
    struct iok_run run = {.comm = MPI_COMM_WORLD};
    MPI_Comm_rank(run.comm, &run.rank);
    MPI_Comm_size(run.comm, &run.nprocs);
    struct core_flags cf;
    void *kopts = calloc(1, k->opts_size ? k->opts_size : 1);
    void *bopts[MAX_SETS] = {0};
    struct iok_plan plan = {0};
    struct iok_result res = {0};
    char *text = NULL;
    int rc;

    nsets = 0;
    sets[nsets++] = (struct iok_optset){"core", core_options, &cf};
    sets[nsets++] = (struct iok_optset){k->name, k->options, kopts};
    for (int i = 0; i < iok_backend_count() && nsets < MAX_SETS; i++) {
        const struct iok_backend *b = iok_backend_at(i);
        if (!b->options)
            continue;
        bopts[nsets] = calloc(1, b->opts_size);
        sets[nsets] = (struct iok_optset){b->name, b->options, bopts[nsets]};
        nsets++;
    }
    for (int i = 0; i < nsets; i++)
        iok_opts_defaults(&sets[i]);

    double t0 = MPI_Wtime();
    rc = iok_cmdline_split(argc, argv, sets, nsets, &cmdline);
    if (rc == IOK_OK && cmdline.npos > 1)
        rc = iok_error(IOK_EUSAGE, "expected at most one input file, got '%s' and '%s'",
                       cmdline.pos[0], cmdline.pos[1]);
    if (rc == IOK_OK && cmdline.npos == 1 && !k->read_input && !k->input_by_path)
        rc = iok_error(IOK_EUSAGE, "kernel %s takes no input file (got '%s')", k->name,
                       cmdline.pos[0]);
    if ((rc = iok_agree(run.comm, rc)))
        goto out;
    if (iok_cmdline_has(&cmdline, sets, nsets, "help")) {
        if (run.rank == 0)
            kernel_help(k, stdout);
        *printed_help = 1;
        goto out;
    }

    /* the kernel's input file, then the command line over it */
    if (k->input_by_path && cmdline.npos) {
        run.input_path = cmdline.pos[0];
        if (run.rank == 0 && access(run.input_path, R_OK) != 0)
            rc = iok_error(IOK_EUSAGE, "cannot open input file %s: check the path", run.input_path);
        if ((rc = iok_agree(run.comm, rc)))
            goto out;
    } else if (k->read_input && !k->input_by_path) {
        const char *path = cmdline.npos ? cmdline.pos[0] : k->default_input;
        int found = 0;
        text = read_shared_text(path, run.comm, run.rank, cmdline.npos > 0, &found);
        if ((rc = iok_agree(run.comm, text || !cmdline.npos ? IOK_OK : IOK_EUSAGE)))
            goto out;
        if (text) {
            run.input_path = path;
            rc = k->read_input(text, path, sets, nsets);
            if ((rc = iok_agree(run.comm, rc)))
                goto out;
        }
    }
    rc = iok_cmdline_apply(&cmdline, sets, nsets);
    if (rc == IOK_OK && k->configure)
        rc = k->configure(kopts, &cf.o, given);
    if (rc == IOK_OK)
        rc = settle_core(&cf, &run);
    if ((rc = iok_agree(run.comm, rc)))
        goto out;
    for (int i = 0; i < nsets; i++)
        if (!strcmp(sets[i].title, run.backend->name))
            run.backend_opts = bopts[i];

    rc = k->plan(kopts, &run, &plan);
    if ((rc = iok_agree(run.comm, rc)))
        goto out;
    double parse = MPI_Wtime() - t0;
    MPI_Allreduce(&parse, &res.parse_time, 1, MPI_DOUBLE, MPI_MAX, run.comm);

    /* write passes, then read passes (or the read-back of --verify) */
    int verify_rc = IOK_OK;
    for (int round = 0; round < 2 && rc == IOK_OK; round++) {
        enum iok_op op = round == 0 ? IOK_OP_WRITE : run.do_read ? IOK_OP_READ : IOK_OP_VERIFY;
        if (round == 0 ? !run.do_write : !run.do_read && !run.core.verify)
            continue;
        for (int f = 0; f < plan.nfiles && res.npasses < IOK_MAX_PASSES; f++) {
            rc = iok_run_pass(k, kopts, &run, &plan, f, op, &res.pass[res.npasses]);
            if (rc == IOK_EVERIFY) { /* keep going: the report shows it */
                verify_rc = rc;
                rc = IOK_OK;
            }
            if (rc == IOK_OK && op == IOK_OP_WRITE && run.core.ceiling) {
                struct iok_pass_result *p = &res.pass[res.npasses];
                rc = iok_ceiling_write(&run, p->path, p->own_bytes, &p->ceiling);
            }
            if (rc)
                break;
            res.npasses++;
        }
    }
    if (rc == IOK_OK) {
        if (run.rank == 0 && !run.core.quiet)
            k->report(kopts, &run, &plan, &res, stdout);
        rc = verify_rc;
    }
    if ((rc == IOK_OK || rc == IOK_EVERIFY) && run.core.json[0]) {
        struct iok_json_input in = {k, &run, &plan, &res, sets, nsets, rc, argc, argv};
        int jrc = run.rank == 0 ? iok_json_append(run.core.json, &in) : IOK_OK;
        jrc = iok_agree(run.comm, jrc);
        if (jrc)
            rc = jrc;
    }
out:
    fflush(stdout);
    iok_plan_free(&plan);
    free(text);
    iok_cmdline_free(&cmdline);
    for (int i = 0; i < MAX_SETS; i++)
        free(bopts[i]);
    free(kopts);
    return rc;
}

int
main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, rc = IOK_OK, printed_help = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "--help") || !strcmp(what, "-h")) {
        if (rank == 0)
            usage(stdout);
    } else if (!strcmp(what, "--list")) {
        if (rank == 0) {
            usage(stdout);
            list_backends(stdout);
        }
    } else if (!strcmp(what, "--version")) {
        if (rank == 0)
            printf("iokernels %s\n", IOK_VERSION);
    } else {
        const struct iok_kernel *k = iok_kernel_find(what);
        if (!k) {
            if (rank == 0) {
                fprintf(stderr,
                        argc > 1 ? "iokernels: error: unknown kernel '%s' (see iokernels --help)\n"
                                 : "iokernels: error: name a kernel%s (see iokernels --help)\n",
                        what);
            }
            rc = IOK_EUSAGE;
        } else {
            rc = run_kernel(k, argc - 2, argv + 2, &printed_help);
        }
    }
    MPI_Finalize();
    return rc;
}
