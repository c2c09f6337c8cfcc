/* SPDX-License-Identifier: BSD-3-Clause */
/* Chombo IOMI: the AMR boxes of an ABR grid file, replicated, load-balanced
 * and written as a Chombo HDF5 plotfile (phi.hdf5).
 *
 * Every level's boxes are copied rx*ry*rz times (weak scaling), ordered
 * (Morton by default), balanced by Chombo's LoadBalance and written sorted
 * by small end: rank 0 writes boxes and Processors, every rank each of its
 * boxes as its own hyperslab (independent as the original; the input file's
 * collective = 1 or --collective makes it collective; aggregate_boxes = 1
 * writes a rank's boxes in one call). Other backends hold the same variables
 * with level_N.* names. The report is Chombo's timer table, also written to
 * timmy.txt next to the output. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chombo_grid.h"
#include "chombo_table.h"
#include "iokernels/error.h"
#include "iokernels/input.h"
#include "iokernels/kernel.h"
#include "kernels/amr_common/amr_report.h"

/* Components per cell: each names an attribute of the plotfile, built in
 * the plan; beyond this the plan alone takes minutes. */
#define CHOMBO_MAX_NCOMP 10000

#define DEFAULT_GRIDS "grids/s64x64x64L2r4b8-32.abr"

/* --transfer: the enum in the order of its choices */
#define CHOMBO_TRANSFER_CHOICES "independent|collective"
enum chombo_transfer { CHOMBO_INDEPENDENT, CHOMBO_COLLECTIVE };

struct chombo_opts {
    char grids[IOK_OPT_STRLEN];
    int ncomp; /* at most CHOMBO_MAX_NCOMP */
    int replicate[3];
    enum chombo_ordering ordering;
    char output[IOK_OPT_STRLEN];
    int aggregate;
    enum chombo_transfer transfer;
};

static const struct iok_option chombo_options[] = {
    {"grids", 0, IOK_OPT_STRING, offsetof(struct chombo_opts, grids), DEFAULT_GRIDS,
     "ABR grid file (input file: grids_file); a relative path missing from the working "
     "directory is looked up in the suite's data (PREFIX/share/iokernels or the source tree)",
     .metavar = "FILE"},
    {"ncomp", 0, IOK_OPT_INT, offsetof(struct chombo_opts, ncomp), "10",
     "components per cell (one attribute each in the plotfile)", .min = "1",
     .max = IOK_STR(CHOMBO_MAX_NCOMP), .unit = "components"},
    {"replicate", 0, IOK_OPT_INT3, offsetof(struct chombo_opts, replicate), "1,1,1",
     "copies of the grid along x,y,z (input file: replication)", .min = "1", .unit = "copies"},
    {"ordering", 0, IOK_OPT_CHOICE, offsetof(struct chombo_opts, ordering), "morton",
     "order of each level's boxes before load balancing (random uses --seed)",
     CHOMBO_ORDERING_CHOICES},
    {"output", 0, IOK_OPT_STRING, offsetof(struct chombo_opts, output), NULL,
     "output file (default phi.hdf5, or phi.<ext> for backends other than hdf5)",
     .metavar = "FILE"},
    {"aggregate", 0, IOK_OPT_BOOL, offsetof(struct chombo_opts, aggregate), NULL,
     "write a rank's boxes of a level in one call (input file: aggregate_boxes = 1)"},
    {"transfer", 0, IOK_OPT_CHOICE, offsetof(struct chombo_opts, transfer), "independent",
     "transfers unless --collective or --independent is given (input file: collective = 0|1)",
     CHOMBO_TRANSFER_CHOICES},
    {NULL}};

struct chombo_state {
    struct amr_hier h;
    struct amr_vars ids;
    int hdf5;
    char grids_path[IOK_OPT_STRLEN + 64]; /* the file actually read */
    char timmy[IOK_OPT_STRLEN + 16];
    int replicas;
};

static void
free_state(void *p)
{
    struct chombo_state *st = p;
    amr_hier_free(&st->h);
    free(st);
}

/* ---- the input file: ParmParse lines, the original's key names ---- */

static int
set_option(const struct iok_optset *sets, int nsets, const char *name, const char *value,
           const char *where)
{
    const struct iok_optset *owner;
    const struct iok_option *o = iok_opts_find(sets, nsets, name, &owner);
    return o ? iok_opts_set(owner, o, value, where)
             : iok_error(IOK_EIO, "%s: option %s missing from the tables", where, name);
}

static int
chombo_read_input(const char *text, const char *path, const struct iok_optset *sets, int nsets)
{
    static const struct {
        const char *key, *option;
    } keys[] = {{"grids_file", "grids"},         {"ncomp", "ncomp"},   {"replication", "replicate"},
                {"ordering", "ordering"},        {"output", "output"}, {"collective", "transfer"},
                {"aggregate_boxes", "aggregate"}};
    char *copy = strdup(text), *next;
    int lineno = 0, rc = IOK_OK;
    for (char *line = copy; line && rc == IOK_OK; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *hash = strchr(line, '#'), where[IOK_OPT_STRLEN + 32];
        if (hash)
            *hash = '\0';
        char *key = line + strspn(line, " \t\r"), *eq = strchr(key, '=');
        if (!*key || strspn(key, " \t\r") == strlen(key))
            continue;
        snprintf(where, sizeof where, "%s line %d", path, lineno);
        if (!eq) {
            rc = iok_error(IOK_EUSAGE, "%s: expected 'key = value', got '%s'", where,
                           iok_quote(key));
            break;
        }
        char *value = eq + 1, *e = eq;
        while (e > key && strchr(" \t", e[-1]))
            e--;
        *e = '\0';
        value += strspn(value, " \t");
        for (size_t n = strlen(value); n && strchr(" \t\r", value[n - 1]); n--)
            value[n - 1] = '\0';
        size_t k = 0;
        while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k].key, key))
            k++;
        if (k == sizeof keys / sizeof keys[0])
            rc = iok_error(IOK_EUSAGE,
                           "%s: unknown key '%s' (keys: grids_file, ncomp, replication, "
                           "ordering, output, collective, aggregate_boxes)",
                           where, iok_quote(key));
        else if (!*value)
            rc = iok_error(IOK_EUSAGE, "%s: key '%s' has no value", where, iok_quote(key));
        else if (!strcmp(key, "collective") || !strcmp(key, "aggregate_boxes")) {
            if (strcmp(value, "0") && strcmp(value, "1"))
                rc = iok_error(IOK_EUSAGE, "%s: %s must be 0 or 1, not '%s'", where, key,
                               iok_quote(value));
            else if (!strcmp(key, "collective"))
                rc = set_option(sets, nsets, "transfer",
                                value[0] == '1' ? "collective" : "independent", where);
            else
                rc = set_option(sets, nsets, "aggregate", value, where);
        } else {
            rc = set_option(sets, nsets, keys[k].option, value, where);
        }
    }
    free(copy);
    return rc;
}

static int
chombo_configure(void *kopts, struct iok_core_opts *core, int (*given)(const char *name))
{
    struct chombo_opts *o = kopts; /* --ncomp, --replicate: ranges of the table */
    if (!o->grids[0])
        return iok_error(IOK_EUSAGE, "grids_file is empty: name an ABR grid file");
    if (!given("backend") && iok_backend_known("hdf5"))
        strcpy(core->backend, "hdf5"); /* the original's library */
    if (!given("collective") && !given("independent"))
        core->io = o->transfer == CHOMBO_COLLECTIVE ? IOK_IO_COLL : IOK_IO_INDEP;
    else
        core->io = given("independent") ? IOK_IO_INDEP : IOK_IO_COLL;
    return IOK_OK;
}

/* ---- plan ---- */

/* The grid file as named, or for a relative path missing here, from the
 * suite's data (where the shipped grid lives). Rank 0 decides, all read. */
static char *
read_grids(const char *name, const struct iok_run *run, char *resolved, size_t len)
{
    if (run->rank == 0) {
        snprintf(resolved, len, "%s", name);
        if (access(resolved, F_OK) != 0 && name[0] != '/')
            snprintf(resolved, len, "%s/%s", iok_data_root(), name);
        if (access(resolved, F_OK) != 0)
            snprintf(resolved, len, "%s", name); /* the error names what the user gave */
    }
    MPI_Bcast(resolved, (int)len, MPI_CHAR, 0, run->comm);
    char *text = NULL;
    if (iok_read_shared_text(resolved, "grids file (grids_file / --grids)", run->comm, 0, &text))
        return NULL;
    return text;
}

/* timmy.txt sits next to the output; an existing one the run did not
 * create is kept unless --overwrite. */
static int
check_timmy(struct chombo_state *st, const char *output, const struct iok_run *run)
{
    const char *slash = strrchr(output, '/');
    int dirlen = slash ? (int)(slash - output) : 1;
    snprintf(st->timmy, sizeof st->timmy, "%.*s/timmy.txt", dirlen, slash ? output : ".");
    if (run->rank != 0 || run->core->quiet || run->core->overwrite || access(st->timmy, F_OK))
        return IOK_OK;
    return iok_error(IOK_EUSAGE, "%s exists: pass --overwrite to replace it, or remove it",
                     st->timmy);
}

static int
chombo_plan(const void *kopts, const struct iok_run *run, struct iok_plan *plan)
{
    const struct chombo_opts *o = kopts;
    struct chombo_state *st = calloc(1, sizeof *st);
    if (!st)
        return iok_error(IOK_EIO, "out of memory planning Chombo");
    plan->priv = st;
    plan->free_priv = free_state;
    unsigned need = IOK_CAP_GROUPS | IOK_CAP_COMPOUND;
    st->hdf5 = (run->backend->caps & need) == need;

    char *text = read_grids(o->grids, run, st->grids_path, sizeof st->grids_path);
    if (!text)
        return IOK_EUSAGE;
    struct abr_grid g, rep;
    int rc = abr_parse(text, st->grids_path, &g);
    free(text);
    if (rc)
        return rc;
    rc = chombo_replicate(&g, o->replicate, &rep);
    double dx0 = 1.0 / amr_box_len(&g.domain0, 0);
    abr_free(&g);
    if (rc == IOK_OK && chombo_build(&rep, o->ncomp, dx0, o->ordering, (uint64_t)run->core->seed,
                                     run->nprocs, &st->h))
        rc = iok_error(IOK_EIO, "out of memory balancing the Chombo boxes");
    abr_free(&rep);
    IOK_TRY(rc);
    st->replicas = o->replicate[0] * o->replicate[1] * o->replicate[2];

    struct iok_file_plan *fp;
    IOK_TRY(iok_plan_add_file(plan, &fp));
    fp->nsteps = 1;
    int n = o->output[0] ? snprintf(fp->path, sizeof fp->path, "%s", o->output)
            : st->hdf5   ? snprintf(fp->path, sizeof fp->path, "phi.hdf5")
                         : snprintf(fp->path, sizeof fp->path, "phi%s", run->backend->ext);
    if (n >= (int)sizeof fp->path)
        return iok_error(IOK_EUSAGE, "--output %s is too long", o->output);
    if (amr_schema(&fp->schema, &st->h, AMR_CHOMBO, st->hdf5, &st->ids))
        return iok_error(IOK_EIO, "cannot build the Chombo schema");
    return check_timmy(st, fp->path, run);
}

static int
chombo_requests(const void *kopts, const struct iok_run *run, const struct iok_plan *plan, int file,
                int step, enum iok_op op, struct iok_reqlist *out)
{
    const struct chombo_opts *o = kopts;
    const struct chombo_state *st = plan->priv;
    return amr_requests(&st->h, &st->ids, &plan->files[file].schema, run->rank,
                        o->aggregate ? AMR_DATA_AGGREGATE : AMR_DATA_PER_BOX, out);
}

/* ---- report: the timer table (also timmy.txt), then the suite's block ---- */

static int
table_rows(const struct iok_result *res, struct chombo_row *rows)
{
    int n = 0;
    rows[n++] = (struct chombo_row){"read input", 1, res->parse_rank};
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        int w = p->op == IOK_OP_WRITE;
        rows[n++] = (struct chombo_row){w ? "buildRequests" : "buildReadRequests",
                                        p->ph[IOK_PH_REQUESTS].count, p->ph[IOK_PH_REQUESTS].rank};
        if (w)
            rows[n++] = (struct chombo_row){"initData", p->ph[IOK_PH_DATAGEN].count,
                                            p->ph[IOK_PH_DATAGEN].rank};
        rows[n++] = (struct chombo_row){w ? "OutputData" : "InputData", 1, p->io_rank};
        if (!w)
            rows[n++] = (struct chombo_row){"checkData", p->ph[IOK_PH_CHECK].count,
                                            p->ph[IOK_PH_CHECK].rank};
    }
    return n;
}

static void
chombo_report(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
              const struct iok_result *res, FILE *out)
{
    const struct chombo_opts *o = kopts;
    const struct chombo_state *st = plan->priv;
    if (run->input_path)
        fprintf(out, "input file     : %s\n", run->input_path);
    fprintf(out, "grids file     : %s, replication %d %d %d (%d copies)\n", st->grids_path,
            o->replicate[0], o->replicate[1], o->replicate[2], st->replicas);
    fprintf(out, "boxes          : %s order, Chombo LoadBalance on %d ranks, %d components\n",
            iok_choice_name(CHOMBO_ORDERING_CHOICES, o->ordering).s, run->nprocs, o->ncomp);
    fprintf(out, "writes         : %s, %s\n", run->collective ? "collective" : "independent",
            o->aggregate ? "a rank's boxes in one call per level" : "one call per box");
    amr_report_levels(&st->h, run->nprocs, out);
    struct chombo_row *rows = calloc(2 + 4 * (size_t)res->npasses, sizeof *rows);
    if (!rows)
        return;
    int n = table_rows(res, rows);
    chombo_table(out, rows, n);
    FILE *t = fopen(st->timmy, "w");
    if (t) {
        chombo_table(t, rows, n);
        fclose(t);
        fprintf(out, "timing table written to %s\n", st->timmy);
    } else {
        fprintf(out, "cannot write %s: %s\n", st->timmy, strerror(errno));
    }
    for (int i = 0; i < res->npasses; i++)
        if (res->pass[i].op == IOK_OP_WRITE)
            fprintf(out, "OutputData (the write time): %.4f s avg over ranks, %.4f s max\n",
                    res->pass[i].io_rank.avg, res->pass[i].io_rank.max);
    free(rows);
}

const struct iok_kernel iok_kernel_chombo = {
    .name = "chombo",
    .summary = "Chombo IOMI: ABR grid boxes, replicated and load-balanced, Chombo HDF5 plotfile",
    .options = chombo_options,
    .opts_size = sizeof(struct chombo_opts),
    .default_input = "input",
    .read_input = chombo_read_input,
    .configure = chombo_configure,
    .plan = chombo_plan,
    .requests = chombo_requests,
    .report = chombo_report,
};
