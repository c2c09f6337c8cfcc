/* SPDX-License-Identifier: BSD-3-Clause */
/* BTIO: the NAS BT I/O pattern (PnetCDF's BTIO benchmark).
 *
 * A 5-D record variable var(NUM_DUMPS, Z, Y, X, FIVE_DBL) of doubles; each
 * dump is one record written (or read) by q*q ranks, each through q cells of
 * the block-tridiagonal decomposition. The original's methods map to
 * backends: 0 MPI-IO collective, 1 MPI-IO independent, 2 PnetCDF blocking,
 * 3 PnetCDF nonblocking; --backend picks any other. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btio_decomp.h"
#include "iokernels/error.h"
#include "iokernels/kernel.h"

struct btio_opts {
    int method;
    int dumps;
    int grid[3];
    char dir[IOK_OPT_STRLEN];
};

static const struct iok_option btio_options[] = {
    {"method", 0, IOK_OPT_INT, offsetof(struct btio_opts, method), "3",
     "0 MPI collective, 1 MPI independent, 2 PnetCDF blocking, 3 PnetCDF nonblocking", .min = "0",
     .max = "3"},
    {"dumps", 0, IOK_OPT_INT, offsetof(struct btio_opts, dumps), "5",
     "number of dumps (records) to write or read", .min = "1", .unit = "records"},
    {"grid", 0, IOK_OPT_INT3, offsetof(struct btio_opts, grid), "64,64,64",
     "global grid points X,Y,Z", .min = "1", .unit = "points"},
    {"dir", 0, IOK_OPT_STRING, offsetof(struct btio_opts, dir), ".",
     "directory of the file btio.<ext>", .metavar = "DIR"},
    {NULL}};

static const char *const method_names[] = {"MPI collective I/O", "MPI independent I/O",
                                           "Parallel netCDF blocking I/O",
                                           "Parallel netCDF non-blocking I/O"};

/* ---- inputbt.data: 5 lines, values first, comments after them on 1-4 ---- */

static char *
next_line(char **cursor)
{
    char *line = *cursor;
    if (!line || !*line)
        return NULL;
    char *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *cursor = nl + 1;
    } else {
        *cursor = line + strlen(line);
    }
    size_t n = strlen(line);
    if (n && line[n - 1] == '\r')
        line[n - 1] = '\0';
    return line;
}

/* Splits "values   # comment" and checks the number of value tokens. */
static int
values_of(char *line, char **tok, int ntok)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \t", &save); t;
         t = strtok_r(NULL, " \t", &save)) {
        if (n == ntok)
            return -1;
        tok[n++] = t;
    }
    return n == ntok ? 0 : -1;
}

static int
btio_read_input(const char *text, const char *path, const struct iok_optset *sets, int nsets)
{
    static const struct {
        const char *key, *what;
        int ntok;
    } lines[] = {
        {"mode", "the I/O mode: w or r", 1},        {"method", "the I/O method: 0, 1, 2 or 3", 1},
        {"dumps", "the number of writes/reads", 1}, {"grid", "three grid sizes X Y Z", 3},
        {"dir", "the output directory", 0},
    };
    char *copy = strdup(text), *cursor = copy;
    int rc = IOK_OK;
    for (int i = 0; i < 5 && rc == IOK_OK; i++) {
        char *line = next_line(&cursor), where[IOK_OPT_STRLEN + 32];
        snprintf(where, sizeof where, "%s line %d", path, i + 1);
        if (!line) {
            rc = iok_error(IOK_EUSAGE, "%s: missing %s (inputbt.data has 5 lines)", where,
                           lines[i].what);
            break;
        }
        const struct iok_optset *owner;
        const struct iok_option *o = iok_opts_find(sets, nsets, lines[i].key, &owner);
        if (i == 4) { /* the directory: the whole line, trimmed */
            char *d = line + strspn(line, " \t");
            size_t n = strlen(d);
            while (n && (d[n - 1] == ' ' || d[n - 1] == '\t'))
                d[--n] = '\0';
            rc = n ? iok_opts_set(owner, o, d, where)
                   : iok_error(IOK_EUSAGE, "%s: missing %s", where, lines[i].what);
            break;
        }
        char *tok[3], value[64] = "", orig[256];
        snprintf(orig, sizeof orig, "%s", line);
        if (values_of(line, tok, lines[i].ntok)) {
            rc = iok_error(IOK_EUSAGE, "%s: expected %s, got '%s'", where, lines[i].what,
                           iok_quote(orig));
            break;
        }
        if (i == 0) {
            if (strcmp(tok[0], "w") && strcmp(tok[0], "r")) {
                rc = iok_error(IOK_EUSAGE, "%s: expected %s, got '%s'", where, lines[i].what,
                               iok_quote(tok[0]));
                break;
            }
            snprintf(value, sizeof value, "%s", tok[0][0] == 'w' ? "write" : "read");
        } else if (lines[i].ntok == 3) {
            snprintf(value, sizeof value, "%s,%s,%s", tok[0], tok[1], tok[2]);
        } else {
            snprintf(value, sizeof value, "%s", tok[0]);
        }
        rc = iok_opts_set(owner, o, value, where);
    }
    free(copy);
    return rc;
}

/* ---- configuration: the method decides what the user did not ---- */

static int
btio_configure(void *kopts, struct iok_core_opts *core, int (*given)(const char *name))
{
    struct btio_opts *o = kopts; /* --method, --dumps, --grid: ranges of the table */
    if (core->mode == IOK_MODE_BOTH)
        return iok_error(IOK_EUSAGE, "BTIO writes or reads in one run: --mode write or read");
    if (!given("backend"))
        strcpy(core->backend, o->method <= 1 ? "mpiio" : "pnetcdf");
    int pnetcdf = !strcmp(core->backend, "pnetcdf");
    if (!given("api"))
        core->api = pnetcdf && o->method == 3 ? IOK_API_NONBLOCKING : IOK_API_BLOCKING;
    if (!given("collective") && !given("independent"))
        core->io = o->method == 1 ? IOK_IO_INDEP : IOK_IO_COLL;
    else
        core->io = given("independent") ? IOK_IO_INDEP : IOK_IO_COLL;
    return IOK_OK;
}

/* With q x q cells, each cell needs at least 3 grid points per axis; the
 * square rank count itself is the kernel's declared rule (.ranks). */
static int
btio_check_ranks(const void *kopts, int nprocs)
{
    const struct btio_opts *o = kopts;
    int q = btio_ncells(nprocs);
    int64_t smallest = q ? btio_min_cell_points(q, o->grid) : 3;
    if (smallest < 3)
        return iok_error(IOK_EUSAGE,
                         "grid %dx%dx%d is too small for %d processes: cells need at least 3 "
                         "points per axis (smallest here %lld); use a larger --grid",
                         o->grid[0], o->grid[1], o->grid[2], nprocs, (long long)smallest);
    return IOK_OK;
}

static int
btio_plan(const void *kopts, const struct iok_run *run, struct iok_plan *plan)
{
    const struct btio_opts *o = kopts; /* the rank rules held (btio_check_ranks) */
    struct iok_file_plan *fp;
    IOK_TRY(iok_plan_add_file(plan, &fp));
    if (snprintf(fp->path, sizeof fp->path, "%s/btio%s", o->dir, run->backend->ext) >=
        (int)sizeof fp->path)
        return iok_error(IOK_EUSAGE, "--dir %s is too long for its file btio%s (%d characters)",
                         o->dir, run->backend->ext, (int)sizeof fp->path - 1);
    fp->nsteps = o->dumps;
    struct iok_schema *s = &fp->schema;
    iok_schema_init(s);
    int five = iok_schema_add_dim(s, "FIVE_DBL", 5, 0);
    int x = iok_schema_add_dim(s, "X", o->grid[0], 0);
    int y = iok_schema_add_dim(s, "Y", o->grid[1], 0);
    int z = iok_schema_add_dim(s, "Z", o->grid[2], 0);
    int rec = iok_schema_add_dim(s, "NUM_DUMPS", o->dumps, 1);
    int dims[5] = {rec, z, y, x, five};
    if (iok_schema_add_var(s, "var", IOK_DOUBLE, 5, dims) < 0)
        return iok_error(IOK_EIO, "cannot build the BTIO schema");
    return IOK_OK;
}

static int
btio_requests(const void *kopts, const struct iok_run *run, const struct iok_plan *plan, int file,
              int step, enum iok_op op, struct iok_reqlist *out)
{
    const struct btio_opts *o = kopts;
    const struct iok_schema *s = &plan->files[file].schema;
    int q = btio_ncells(run->nprocs);
    for (int c = 0; c < q; c++) {
        struct btio_cell cell;
        btio_cell(run->rank, q, c, o->grid, &cell);
        struct iok_access *a = iok_reqlist_add(out, s, 0, 1);
        if (!a)
            return iok_error(IOK_EIO, "out of memory building BTIO requests");
        int64_t st[5] = {step, cell.lo[2], cell.lo[1], cell.lo[0], 0};
        int64_t ct[5] = {1, cell.size[2], cell.size[1], cell.size[0], 5};
        memcpy(a->starts, st, sizeof st);
        memcpy(a->counts, ct, sizeof ct);
    }
    return iok_reqlist_finish(out, s) ? iok_error(IOK_EIO, "out of memory for BTIO buffers")
                                      : IOK_OK;
}

/* ---- the original's report, then what it lacks ---- */

static const char *
method_line(const struct btio_opts *o, const struct iok_run *run)
{
    static char buf[128];
    const char *be = run->backend->name;
    if (!strcmp(be, "mpiio"))
        return method_names[run->collective ? 0 : 1];
    if (!strcmp(be, "pnetcdf") && run->collective)
        return method_names[run->api == IOK_API_NONBLOCKING ? 3 : 2];
    snprintf(buf, sizeof buf, "%s %s %s I/O", be, run->collective ? "collective" : "independent",
             run->api == IOK_API_NONBLOCKING ? "non-blocking"
             : run->api == IOK_API_VARN      ? "varn"
                                             : "blocking");
    return buf;
}

static void
btio_report(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
            const struct iok_result *res, FILE *out)
{
    const struct btio_opts *o = kopts;
    const double MiB = 1048576.0;
    if (run->input_path)
        fprintf(out, " Reading from input file %s\n", run->input_path);
    else
        fprintf(out, " No input file %s: built-in defaults and command line\n", "./inputbt.data");
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        int w = p->op == IOK_OP_WRITE;
        if (p->op == IOK_OP_VERIFY)
            continue;
        fprintf(out, "-- BT-IO Benchmark (%s operation only) --\n", w ? "write" : "read ");
        fprintf(out, "Number of MPI processes     : %9d\n", run->nprocs);
        fprintf(out, "Global array size X         : %9d\n", o->grid[0]);
        fprintf(out, "Global array size Y         : %9d\n", o->grid[1]);
        fprintf(out, "Global array size Z         : %9d\n", o->grid[2]);
        fprintf(out, "Number of I/O iterations    : %9d\n", o->dumps);
        fprintf(out, "Total I/O amount            : %12.2f MiB\n", p->bytes / MiB);
        /* The original's timers: each rank times open (create + define) to
         * close after one barrier; every line is the maximum over ranks. Its
         * MPI-IO methods time neither the create nor the posts: 0.00 there. */
        int mpiio = !strcmp(run->backend->name, "mpiio");
        double total = p->span_rank.max, create = 0;
        for (int r = 0; p->rank_phase && r < run->nprocs; r++) {
            const double *ph = p->rank_phase + (size_t)r * IOK_NPHASES;
            if (ph[IOK_PH_OPEN] + ph[IOK_PH_DEFINE] > create)
                create = ph[IOK_PH_OPEN] + ph[IOK_PH_DEFINE];
        }
        fprintf(out, "Total I/O time in sec       : %12.2f\n", total);
        fprintf(out, "Max file %s time in sec : %12.2f\n", w ? "create" : "open  ",
                mpiio ? 0.0 : create);
        fprintf(out, "Max %s time in sec : %12.2f\n", w ? "write post " : "read post  ",
                mpiio ? 0.0 : p->ph[IOK_PH_POST].rank.max);
        fprintf(out, "Max %s time in sec : %12.2f\n", w ? "write wait " : "read wait  ",
                mpiio ? 0.0 : p->ph[IOK_PH_WAIT].rank.max);
        fprintf(out, "I/O bandwidth            : %12.2f MiB/s\n",
                total > 0 ? p->bytes / MiB / total : 0.0);
        fprintf(out, "------------------------------------------\n");
        fprintf(out, "Using %s method\n", method_line(o, run));
        fprintf(out, "output file path         : %s\n", o->dir);
        /* as the original: the file's info in use (0 when it has no such hint) */
        const char *count = iok_pass_hint(p, "striping_factor");
        const char *size = iok_pass_hint(p, "striping_unit");
        fprintf(out, "file striping count      : %9d\n", count ? atoi(count) : 0);
        fprintf(out, "file striping size       : %9d bytes\n", size ? atoi(size) : 0);
    }
}

/* pnetcdf_m.f90 of the original: no gap between variables, byte swap in place */
static const struct iok_kernel_hint btio_hints[] = {
    {"pnetcdf", "nc_var_align_size", "1"},
    {"pnetcdf", "nc_in_place_swap", "enable"},
    {NULL, NULL, NULL},
};

const struct iok_kernel iok_kernel_btio = {
    .name = "btio",
    .flags = IOK_KERNEL_SHIFTABLE,
    .summary = "NAS BT I/O: 5-D record variable, block-tridiagonal cells (PnetCDF BTIO)",
    .options = btio_options,
    .opts_size = sizeof(struct btio_opts),
    .default_input = "inputbt.data",
    .default_barriers = "pass", /* one MPI_Barrier before the timed open, none after */
    .original_hints = btio_hints,
    .ranks = "square", /* q x q cells */
    .check_ranks = btio_check_ranks,
    .read_input = btio_read_input,
    .configure = btio_configure,
    .plan = btio_plan,
    .requests = btio_requests,
    .report = btio_report,
};
