/* SPDX-License-Identifier: BSD-3-Clause */
/* iokernels mix: several kernels at once in one job, each on its own ranks.
 *
 *   iokernels mix [--iterations N] [--start S1,S2,...] [--member-dirs] [--json FILE]
 *                 --part N1:KERNEL [its options] --part N2:KERNEL [its options] ...
 *
 * The job's ranks are split in order (the first N1 ranks are member 1, ...).
 * Each member runs its kernel as it runs alone (its options, backend, files,
 * verification, report) on its own communicator. Per iteration every member
 * runs once alone (the others wait, asleep, at a barrier) and once with all
 * the others ("together"), in ABBA order (even iterations alone first, odd
 * ones together first), so that a drift over the job weighs on both sides.
 * A member's time is the sum of its passes' open->close spans; its slowdown
 * is together / alone with the exact 95% interval (slowdown.c). Together,
 * member i starts S_i seconds after the others' common start. Every member
 * is checked (options, plan) before any writes; a member that fails ends
 * the mix with its line, and the record keeps the runs completed before. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/mix/mix.h"
#include "iokernels/error.h"

static void
usage(FILE *out)
{
    fprintf(
        out,
        "usage: iokernels mix [--iterations N] [--start S1,S2,...] [--member-dirs] [--json FILE]\n"
        "                     --part N1:KERNEL [its options] --part N2:KERNEL [its options] "
        "...\n\n"
        "Runs the kernels at once, member i on the next N_i ranks of the job (the N_i add up\n"
        "to the job's ranks), each with its own options, backend and files, as alone.\n"
        "Each iteration runs every member alone (the others idle) and all together, in\n"
        "ABBA order; each member's slowdown is together/alone with its 95%% interval.\n\n"
        "  --iterations N   alone/together pairs (default 4, the fewest for an interval)\n"
        "  --start S1,...   seconds each member starts after the common start, together\n"
        "  --member-dirs    run member i in the folder memberI (made if missing): like\n"
        "                   members write their like-named files apart\n"
        "  --json FILE      append the mix's record (its members' records inside); a\n"
        "                   --json among a member's options is the mix's too\n");
}

static int
parse_starts(const char *text, struct iok_mix *mx)
{
    char buf[IOK_OPT_STRLEN];
    snprintf(buf, sizeof buf, "%s", text);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(t, &end);
        if (*end || end == t || v < 0 || v > 86400 || n >= IOK_MIX_MAX)
            return iok_error(IOK_EUSAGE,
                             "--start %s: give one number of seconds (0 to 86400) per member, "
                             "comma-separated, e.g. --start 0,2.5",
                             iok_quote(text));
        mx->m[n++].start = v;
    }
    mx->nstart = n;
    return IOK_OK;
}

/* N:KERNEL */
static int
parse_part(const char *text, struct iok_mix_member *mb)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (end == text || *end != ':' || n < 1 || n > 1 << 20)
        return iok_error(IOK_EUSAGE, "--part %s: write RANKS:KERNEL, e.g. --part 4:btio",
                         iok_quote(text));
    mb->kernel = iok_kernel_find(end + 1);
    if (!mb->kernel)
        return iok_error(IOK_EUSAGE, "--part %s: unknown kernel %s (see iokernels --help)",
                         iok_quote(text), iok_quote(end + 1));
    if (mb->kernel->flags & IOK_KERNEL_TOOL)
        return iok_error(IOK_EUSAGE,
                         "--part %s: %s is a tool (iokernels --list): it measures no I/O",
                         iok_quote(text), mb->kernel->name);
    mb->nranks = (int)n;
    return IOK_OK;
}

static int
is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

/* The mix's own options come first, then the parts, each with its kernel's
 * options up to the next --part. */
static int
parse(int argc, char **argv, int nprocs, struct iok_mix *mx)
{
    memset(mx, 0, sizeof *mx);
    mx->iterations = 4;
    const char *starts = NULL;
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--part"); i++) {
        const char *a = argv[i], *eq = strchr(a, '='),
                   *v = eq             ? eq + 1
                        : i + 1 < argc ? argv[i + 1]
                                       : NULL;
        int takes = !eq;
        if (is_opt(a, "--iterations") && v) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || end == v || n < 1 || n > 10000)
                return iok_error(IOK_EUSAGE, "--iterations %s: give a whole number from 1 to 10000",
                                 iok_quote(v));
            mx->iterations = (int)n;
        } else if (is_opt(a, "--start") && v) {
            starts = v;
        } else if (!strcmp(a, "--member-dirs")) {
            mx->member_dirs = 1;
            takes = 0;
        } else if (is_opt(a, "--json") && v) {
            snprintf(mx->json, sizeof mx->json, "%s", v);
        } else {
            return iok_error(
                IOK_EUSAGE,
                "mix: %s: the mix's options are --iterations, --start, --member-dirs and "
                "--json, "
                "before the first --part RANKS:KERNEL (a kernel's options follow "
                "its --part)",
                iok_quote(a));
        }
        i += takes;
    }
    int first = 0, nargs = 0;
    mx->args = calloc((size_t)argc + 1, sizeof *mx->args);
    if (!mx->args)
        return iok_error(IOK_EIO, "out of memory for the mix");
    while (i < argc) { /* argv[i] is "--part" */
        if (mx->n >= IOK_MIX_MAX)
            return iok_error(IOK_EUSAGE, "mix: at most %d members", IOK_MIX_MAX);
        if (i + 1 >= argc)
            return iok_error(IOK_EUSAGE, "--part: give RANKS:KERNEL, e.g. --part 4:btio");
        struct iok_mix_member *mb = &mx->m[mx->n];
        int rc = parse_part(argv[i + 1], mb);
        if (rc)
            return rc;
        mb->index = ++mx->n;
        mb->first = first;
        first += mb->nranks;
        /* its options up to the next --part; --json anywhere is the mix's */
        mb->argv = mx->args + nargs;
        for (i += 2; i < argc && strcmp(argv[i], "--part"); i++) {
            if (is_opt(argv[i], "--json")) {
                const char *v = strchr(argv[i], '=') ? strchr(argv[i], '=') + 1
                                : i + 1 < argc       ? argv[++i]
                                                     : "";
                snprintf(mx->json, sizeof mx->json, "%s", v);
                continue;
            }
            mx->args[nargs++] = argv[i];
            mb->argc++;
        }
        snprintf(mb->label, sizeof mb->label, "member %d (%s): ", mb->index, mb->kernel->name);
        for (int j = 0; j < mb->argc; j++)
            if (is_opt(mb->argv[j], "--help"))
                return iok_error(IOK_EUSAGE,
                                 "%s--help: the mix runs no member's help: ask iokernels %s "
                                 "--help",
                                 mb->label, mb->kernel->name);
    }
    if (mx->n < 2)
        return iok_error(IOK_EUSAGE, "mix: give two or more members, each as --part RANKS:KERNEL "
                                     "followed by its options");
    if (first != nprocs)
        return iok_error(IOK_EUSAGE,
                         "mix: the parts have %d ranks in all but the job has %d: make the "
                         "RANKS of the --part options add up to the job's ranks",
                         first, nprocs);
    if (starts) {
        int rc = parse_starts(starts, mx);
        if (rc == IOK_OK && mx->nstart != mx->n)
            rc = iok_error(IOK_EUSAGE, "--start %s: %d value%s for %d members: give one per member",
                           iok_quote(starts), mx->nstart, mx->nstart == 1 ? "" : "s", mx->n);
        if (rc)
            return rc;
    }
    return IOK_OK;
}

/* A barrier the waiting ranks sleep through: spinning idle ranks would take
 * the cores the running member's ranks need. */
static void
sleepy_barrier(MPI_Comm comm)
{
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    for (int done = 0;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* --member-dirs: member i works in ./memberI, made by its rank 0 (a
 * missing one; an existing folder is used as it is). */
static int
enter_member_dir(const struct iok_mix_member *mb, int mrank, MPI_Comm mcomm)
{
    char dir[32];
    snprintf(dir, sizeof dir, "member%d", mb->index);
    int rc = IOK_OK;
    if (mrank == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
        rc = iok_error(IOK_EIO, "mix: cannot make the folder %s (%s)", dir, strerror(errno));
    if ((rc = iok_agree(mcomm, rc)))
        return rc;
    if (chdir(dir) != 0)
        rc = iok_error(IOK_EUSAGE, "mix: cannot enter %s (%s): is it a folder?", dir,
                       strerror(errno));
    return rc;
}

/* A member's run: its lines (errors, signals) carry its label; the mix's
 * own lines none. */
static int
labelled_run(struct iok_mix *mx, struct iok_mix_member *mb, struct iok_member_run *mr)
{
    iok_error_label(mb->label);
    iok_signals_label(mb->label);
    int rc = mx->run(mb->kernel, mb->argc, mb->argv, mr);
    iok_error_label("");
    return rc;
}

/* One member's run in one round, on its ranks. A run after the first
 * starts without the files the first created (removed, untimed): every run
 * from the same state (main.c, mix_member.c). */
static int
run_member(struct iok_mix *mx, struct iok_mix_member *mb, struct iok_member_run *mr, char **text,
           size_t *len)
{
    mr->report = open_memstream(text, len);
    mr->want_record = mx->json[0] != '\0';
    int rc = labelled_run(mx, mb, mr);
    if (mr->report)
        fclose(mr->report);
    mr->report = NULL;
    return rc;
}

/* One round: every member together (each after its --start), or member
 * `solo` alone while the others sleep; then what it gave, to rank 0. */
static int
one_round(struct iok_mix *mx, struct iok_member_run *mr, int it, int together, int solo)
{
    struct iok_mix_member *me = mx->me;
    int active = together || me->index == solo, mrc = IOK_OK, wrank;
    MPI_Comm_rank(mx->xcomm, &wrank);
    char *text = NULL;
    size_t len = 0;
    sleepy_barrier(mx->xcomm); /* the common start */
    if (active) {
        if (together)
            iok_sleep_seconds(me->start);
        mr->node_ranks = together ? mx->node_ranks : 0; /* alone, the others sleep */
        mrc = run_member(mx, me, mr, &text, &len);
    }
    sleepy_barrier(mx->xcomm); /* the others idle, asleep, until all are done */
    int rc = iok_agree(MPI_COMM_WORLD, mrc);
    struct iok_mix_round round = {
        .iteration = it, .together = together, .solo = together ? 0 : solo};
    int grc = iok_mix_gather(mx, &round, active, mrc, mr, text);
    free(text);
    iok_member_run_free(mr);
    if (grc == IOK_OK && wrank == 0)
        iok_mix_print_round(mx, &round, stdout);
    iok_mix_round_free(mx, &round);
    if (!rc)
        rc = iok_agree(MPI_COMM_WORLD, grc);
    if (wrank == 0 && mx->json[0]) /* after every round: a kill keeps what is done */
        iok_mix_write_record(mx, rc ? "failed" : "incomplete", rc);
    return rc;
}

int
iok_mix_main(int argc, char **argv, iok_member_fn run)
{
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (int i = 0; i < argc && strcmp(argv[i], "--part"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            if (wrank == 0)
                usage(stdout);
            return IOK_OK;
        }
    static struct iok_mix mx;
    int rc = iok_agree(MPI_COMM_WORLD, parse(argc, argv, wsize, &mx));
    if (rc)
        return rc;
    mx.run = run;
    struct iok_mix_member *me = NULL;
    for (int i = 0; i < mx.n; i++)
        if (wrank >= mx.m[i].first && wrank < mx.m[i].first + mx.m[i].nranks)
            me = &mx.m[i];
    MPI_Comm mcomm, magree;
    MPI_Comm_split(MPI_COMM_WORLD, me->index, wrank, &mcomm);
    MPI_Comm_dup(mcomm, &magree);
    MPI_Comm_dup(MPI_COMM_WORLD, &mx.xcomm);
    iok_agree_comm_for(mcomm, magree);
    int mrank;
    MPI_Comm_rank(mcomm, &mrank);
    if (mx.member_dirs && mx.json[0] && mx.json[0] != '/') { /* the record stays here */
        char cwd[IOK_OPT_STRLEN], full[2 * IOK_OPT_STRLEN + 2];
        if (getcwd(cwd, sizeof cwd)) {
            snprintf(full, sizeof full, "%s/%s", cwd, mx.json);
            if (strlen(full) < sizeof mx.json)
                memcpy(mx.json, full, strlen(full) + 1);
        }
    }
    if (mx.member_dirs && (rc = iok_agree(MPI_COMM_WORLD, enter_member_dir(me, mrank, mcomm))))
        return rc;
    mx.me = me;
    mx.mrank = mrank;
    if (wrank == 0)
        iok_mix_print_members(&mx, stdout);

    /* every member's options and plan first: a bad one writes nothing */
    struct iok_member_run mr = {.comm = mcomm, .check_only = 1};
    rc = labelled_run(&mx, me, &mr);
    mr.check_only = 0;
    sleepy_barrier(mx.xcomm);
    if ((rc = iok_agree(MPI_COMM_WORLD, rc)) == IOK_OK) /* all ranks alike */
        rc = iok_mix_check_outputs(&mx, mr.planned);    /* one file, or no room: refused */
    free(mr.planned); /* planned by this member even when another was refused */
    mr.planned = NULL;
    if ((rc = iok_agree(MPI_COMM_WORLD, rc)))
        goto out;

    /* one clock for the members' windows: the job's rank 0 */
    iok_clock_sync(MPI_COMM_WORLD);
    mx.world_offset = iok_clock.offset;
    /* which members share a node's cores, for the slowdown lines, and the
     * job's ranks on this rank's node, for the together runs' records
     * (untimed) */
    mx.node_ranks = iok_cores_node_ranks(MPI_COMM_WORLD);
    if ((rc = iok_agree(MPI_COMM_WORLD,
                        iok_cores_gather(MPI_COMM_WORLD, 1u << (me->index - 1), 0, &mx.cores))))
        goto out;
    if ((rc = iok_mix_alloc(&mx)))
        rc = iok_error(IOK_EIO, "out of memory for the mix");
    if ((rc = iok_agree(MPI_COMM_WORLD, rc)))
        goto out;
    for (int it = 0; it < mx.iterations && rc == IOK_OK; it++) {
        for (int half = 0; half < 2 && rc == IOK_OK; half++) {
            int together = (it % 2 == 0) == (half == 1); /* ABBA: A B, B A, A B, ... */
            for (int k = 0; k < (together ? 1 : mx.n) && rc == IOK_OK; k++)
                /* alone, the members take turns going first (a rotation
                 * that starts at member (it + 1) / 2): where two alone
                 * halves meet (after an odd iteration) the next one starts
                 * with another member than the last one, so no member runs
                 * alone twice in a row. Mirroring the order instead (1 2 T,
                 * T 2 1, 1 2 T, ...) put member 1 after itself every other
                 * iteration, and a run right after the same member's run
                 * took twice as long here (BTIO, fsync, ext4): a bimodal
                 * "alone" for member 1 only. */
                rc = one_round(&mx, &mr, it, together, (k + (it + 1) / 2) % mx.n + 1);
        }
    }
    if (rc == IOK_OK && wrank == 0) {
        iok_mix_print_summary(&mx, stdout);
        if (mx.json[0] && iok_mix_write_record(&mx, "ok", 0))
            rc = IOK_EIO;
    }
    rc = iok_agree(MPI_COMM_WORLD, rc);
out:
    fflush(stdout);
    iok_agree_comm_for(MPI_COMM_NULL, MPI_COMM_NULL);
    iok_mix_free(&mx);
    iok_cores_free(&mx.cores);
    free(mx.args);
    free(mr.made);
    return rc;
}
