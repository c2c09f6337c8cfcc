/* SPDX-License-Identifier: BSD-3-Clause */
/* e3sm-decomp: PIO .dat decomposition files -> an E3SM decomposition map file,
 * as the original's dat2nc / dat2decomp:
 *
 *   iokernels e3sm-decomp -o map.nc --d1 D1.dat --d2 D2.dat --d3 D3.dat
 *   iokernels e3sm-decomp -o map.nc list.txt      (one .dat path per line)
 *
 * (dat2nc's -1 ... -6 cannot be: "-1" is a negative number to the core's
 * command line, so the decompositions are --d1 ... --d6.)
 *
 * The file is written through the core like any kernel's: --backend pnetcdf
 * (CDF-5, the default), netcdf4 or hdf5 (-a cdf5|netcdf4|hdf5 as the
 * original), --verify reads it back. Rank 0 parses the .dat files and writes
 * everything; other ranks join the collective calls with empty requests. */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"
#include "iokernels/input.h"
#include "iokernels/kernel.h"
#include "kernels/e3sm_common/e3sm_dat.h"
#include "kernels/e3sm_common/e3sm_gen.h"
#include "kernels/e3sm_common/e3sm_gen_stats.h"

#define NDAT E3SM_MAX_DECOMP

/* -a: the output format, the enum in the order of its choices */
#define DC_FORMAT_CHOICES "cdf5|netcdf4|hdf5"
enum dc_format { DC_UNSET = IOK_CHOICE_UNSET, DC_CDF5, DC_NETCDF4, DC_HDF5 };

struct dc_opts {
    char out[IOK_OPT_STRLEN];
    char dat[NDAT][IOK_OPT_STRLEN];
    enum dc_format api;
    int raw;
    char generate[E3SM_GEN_SPECLEN]; /* --generate: a generated decomposition instead of .dat */
    int stats, records;              /* --stats: print its figures over all ranks, write nothing */
};

#define DAT_OPT(i)                                                                                 \
    {                                                                                              \
        "d" #i, 0, IOK_OPT_STRING, offsetof(struct dc_opts, dat[i - 1]), NULL,                     \
            "PIO .dat file of decomposition D" #i, .metavar = "FILE"                               \
    }

static const struct iok_option dc_options[] = {
    {"out", 'o', IOK_OPT_STRING, offsetof(struct dc_opts, out), NULL,
     "output decomposition file (required)", .metavar = "FILE"},
    DAT_OPT(1),
    DAT_OPT(2),
    DAT_OPT(3),
    DAT_OPT(4),
    DAT_OPT(5),
    DAT_OPT(6),
    {"format", 'a', IOK_OPT_CHOICE, offsetof(struct dc_opts, api), NULL,
     "output format as the original's -a (sets --backend): cdf5 pnetcdf, netcdf4, hdf5",
     DC_FORMAT_CHOICES},
    {"raw", 'r', IOK_OPT_BOOL, offsetof(struct dc_opts, raw), "1",
     "also store the maps before merging (Dn.raw_nreqs, Dn.raw_offsets)"},
    {"generate", 0, IOK_OPT_STRING, offsetof(struct dc_opts, generate), NULL,
     "a generated decomposition instead of .dat files: f:ne=N,procs=P, g:cells=N,procs=P, "
     "i:nlat=N,nlon=M,procs=P (as iokernels e3sm --generate)",
     .metavar = "CASE:KEY=VALUE,...", .size = IOK_OPT_SIZEOF(struct dc_opts, generate)},
    {"stats", 0, IOK_OPT_BOOL, offsetof(struct dc_opts, stats), NULL,
     "with --generate: print requests and bytes per rank (min, median, max) and the history "
     "files' sizes over all its ranks, computed in one process; writes no file"},
    {"records", 0, IOK_OPT_INT, offsetof(struct dc_opts, records), "1",
     "records of the history files in --stats", .min = "1", .unit = "records"},
    {NULL}};

/* Per decomposition, what every rank needs to build the schema. */
enum {
    S_NDIMS,
    S_D0,
    S_NPAIRS = S_D0 + E3SM_MAX_DDIMS,
    S_NRAW,
    S_MAXN,
    S_MINN,
    S_MAXL,
    S_MINL,
    S_FULL,
    S_N
};

struct dc_priv {
    int nd;
    int64_t nprocs;
    int64_t sum[NDAT][S_N];
    struct e3sm_dat dat[NDAT];    /* rank 0 only */
    struct e3sm_gen_stats *stats; /* --stats, rank 0 */
};

/* The positional file: a .dat itself, or a list of .dat paths (dat2decomp -i). */
static int
dc_read_input(const char *text, const char *path, const struct iok_optset *sets, int nsets)
{
    const struct iok_optset *owner;
    char key[3] = "d1";
    if (!strncmp(text + strspn(text, " \t\r\n"), "version", 7))
        return iok_opts_set(&sets[1], iok_opts_find(sets, nsets, key, &owner), path, path);
    char *copy = strdup(text), *save = NULL;
    int n = 0, rc = IOK_OK;
    for (char *line = strtok_r(copy, "\n", &save); line && rc == IOK_OK;
         line = strtok_r(NULL, "\n", &save)) {
        line += strspn(line, " \t\r");
        size_t len = strlen(line);
        while (len && isspace((unsigned char)line[len - 1]))
            line[--len] = '\0';
        if (!len || line[0] == '#')
            continue;
        if (n == NDAT) {
            rc = iok_error(IOK_EUSAGE, "%s: more than %d decomposition files listed", path, NDAT);
            break;
        }
        key[1] = (char)('1' + n++);
        rc = iok_opts_set(&sets[1], iok_opts_find(sets, nsets, key, &owner), line, path);
    }
    free(copy);
    if (rc == IOK_OK && n == 0)
        rc = iok_error(IOK_EUSAGE, "%s lists no .dat file", path);
    return rc;
}

static int
dc_configure(void *kopts, struct iok_core_opts *core, int (*given)(const char *name))
{
    struct dc_opts *o = kopts;
    if (o->stats && !o->generate[0])
        return iok_error(IOK_EUSAGE, "--stats describes a generated decomposition: add "
                                     "--generate f:ne=30,procs=512 (or g:..., i:...)");
    if (o->generate[0] && o->dat[0][0])
        return iok_error(IOK_EUSAGE, "--generate and .dat files (--d1 %s): give one", o->dat[0]);
    if (!o->out[0] && !o->stats)
        return iok_error(IOK_EUSAGE, "e3sm-decomp needs the output file: -o FILE");
    int nd = 0;
    while (nd < NDAT && o->dat[nd][0])
        nd++;
    for (int i = nd; i < NDAT; i++)
        if (o->dat[i][0])
            return iok_error(IOK_EUSAGE,
                             "--d%d given without --d%d: decompositions are numbered "
                             "from 1 without gaps",
                             i + 1, nd + 1);
    if (nd == 0 && !o->generate[0])
        return iok_error(IOK_EUSAGE, "e3sm-decomp needs .dat files: --d1 FILE --d2 FILE ... or "
                                     "a list file");
    if (core->mode != IOK_MODE_UNSET && core->mode != IOK_MODE_WRITE)
        return iok_error(IOK_EUSAGE, "e3sm-decomp writes a file: --mode write (read it back with "
                                     "--verify)");
    if (o->api != DC_UNSET) {
        if (given("backend"))
            return iok_error(IOK_EUSAGE, "-a and --backend both choose the format: give one");
        strcpy(core->backend,
               o->api == DC_CDF5 ? "pnetcdf" : iok_choice_name(DC_FORMAT_CHOICES, o->api).s);
    }
    /* Rank 0 lists one subarray per variable, the others none: PnetCDF's
     * blocking flavour would pair put_vara_all with put_varn_all. */
    if (!core->backend[0]) {
        const char *pick[] = {"pnetcdf", "hdf5", "netcdf4", "mpiio"};
        for (int i = 3; i >= 0; i--)
            if (iok_backend_known(pick[i]))
                strcpy(core->backend, pick[i]);
    }
    if (!given("api") && !strcmp(core->backend, "pnetcdf"))
        core->api = IOK_API_VARN;
    return IOK_OK;
}

static void
dc_free(void *p)
{
    struct dc_priv *d = p;
    for (int i = 0; i < NDAT; i++)
        e3sm_dat_free(&d->dat[i]);
    free(d->stats);
    free(d);
}

/* Rank 0: generate every decomposition (--generate) in the .dat form. */
static int
generate_all(const struct dc_opts *o, struct dc_priv *p)
{
    struct e3sm_gen g;
    char why[512];
    int rc = IOK_OK;
    if (e3sm_gen_parse(o->generate, &g, why, sizeof why))
        rc = iok_error(IOK_EUSAGE, "%s", why);
    p->nd = rc == IOK_OK ? g.ndecomp : 0;
    for (int i = 0; rc == IOK_OK && i < p->nd; i++)
        if (e3sm_gen_dat(&g, i, o->raw, &p->dat[i], why, sizeof why))
            rc = iok_error(IOK_EUSAGE, "--generate %s: %s", g.spec, why);
    e3sm_gen_free(&g);
    return rc;
}

static int
read_dat(const char *path, struct e3sm_dat *d)
{
    char *text, why[512];
    IOK_TRY(iok_read_text(path, "decomposition file", &text));
    int bad = e3sm_dat_parse(text, d, why, sizeof why);
    free(text);
    return bad ? iok_error(IOK_EUSAGE, "%s %s", path, why) : IOK_OK;
}

/* Rank 0: parse every .dat file (or generate them) and summarise. */
static int
parse_all(const struct dc_opts *o, struct dc_priv *p)
{
    if (o->generate[0])
        IOK_TRY(generate_all(o, p));
    for (int i = 0; i < p->nd; i++) {
        if (!o->generate[0])
            IOK_TRY(read_dat(o->dat[i], &p->dat[i]));
        const struct e3sm_dat *d = &p->dat[i];
        if (i > 0 && d->nprocs != p->nprocs)
            return iok_error(IOK_EUSAGE, "%s: npes %lld differs from %s's %lld", o->dat[i],
                             (long long)d->nprocs, o->dat[0], (long long)p->nprocs);
        p->nprocs = d->nprocs;
        int64_t *s = p->sum[i];
        s[S_NDIMS] = d->ndims;
        for (int k = 0; k < d->ndims; k++)
            s[S_D0 + k] = d->dims[k];
        s[S_NPAIRS] = d->npairs;
        s[S_NRAW] = d->nraw;
        s[S_MAXN] = d->max_nreqs;
        s[S_MINN] = d->min_nreqs;
        s[S_MAXL] = d->max_len;
        s[S_MINL] = d->min_len;
        s[S_FULL] = d->fully_covered;
    }
    return IOK_OK;
}

static int
int_attr(struct iok_schema *s, int owner, const char *name, int64_t v)
{
    int32_t x = (int32_t)v;
    return iok_schema_add_attr(s, owner, name, IOK_INT, 1, &x);
}

static int
build_schema(const struct dc_opts *o, const struct dc_priv *p, struct iok_schema *s)
{
    char name[64], cmd[8192];
    int bad = 0;
    int ndim = iok_schema_add_dim(s, "num_decomp", p->nd, 0);
    int nproc = iok_schema_add_dim(s, "decomp_nprocs", p->nprocs, 0);
    int tot[NDAT], raw[NDAT];
    bad |= ndim < 0 || nproc < 0;
    for (int i = 0; i < p->nd; i++) {
        snprintf(name, sizeof name, "D%d.total_nreqs", i + 1);
        tot[i] = iok_schema_add_dim(s, name, p->sum[i][S_NPAIRS], 0);
        snprintf(name, sizeof name, "D%d.total_raw_nreqs", i + 1);
        raw[i] = o->raw ? iok_schema_add_dim(s, name, p->sum[i][S_NRAW], 0) : 0;
        bad |= tot[i] < 0 || raw[i] < 0;
    }
    int len = snprintf(cmd, sizeof cmd, "iokernels e3sm-decomp -o %s", o->out);
    if (o->generate[0])
        len += snprintf(cmd + len, sizeof cmd - (size_t)len, " --generate %s", o->generate);
    for (int i = 0; i < p->nd && len < (int)sizeof cmd && !o->generate[0]; i++)
        len += snprintf(cmd + len, sizeof cmd - (size_t)len, " --d%d %s", i + 1, o->dat[i]);
    bad |= iok_schema_add_text_attr(s, IOK_GLOBAL, "command_line", cmd) < 0;
    for (int i = 0; i < p->nd; i++) {
        const int64_t *m = p->sum[i];
        struct {
            const char *what, *desc;
            int dim;
        } vars[] = {
            {"nreqs", "Number of noncontiguous requests per process", nproc},
            {"fill_starts",
             "Start index in offsets[] and lengths[] for requests to be written with fill values",
             nproc},
            {"offsets", "Flattened starting indices of noncontiguous requests", tot[i]},
            {"lengths", "Lengths of noncontiguous requests", tot[i]},
            {"raw_nreqs", "Number of file offsets accessed per process before merge", nproc},
            {"raw_offsets", "File offsets accessed before merge", raw[i]},
        };
        for (int v = 0; v < (o->raw ? 6 : 4); v++) {
            snprintf(name, sizeof name, "D%d.%s", i + 1, vars[v].what);
            int id = iok_schema_add_var(s, name, IOK_INT, 1, &vars[v].dim);
            bad |= id < 0 || iok_schema_add_text_attr(s, id, "description", vars[v].desc) < 0;
            if (v == 3)
                bad |=
                    int_attr(s, id, "max", m[S_MAXL]) < 0 || int_attr(s, id, "min", m[S_MINL]) < 0;
        }
        int32_t dims[E3SM_MAX_DDIMS];
        for (int k = 0; k < m[S_NDIMS]; k++)
            dims[k] = (int32_t)m[S_D0 + k];
        snprintf(name, sizeof name, "D%d.ndims", i + 1);
        bad |= int_attr(s, IOK_GLOBAL, name, m[S_NDIMS]) < 0;
        snprintf(name, sizeof name, "D%d.dims", i + 1);
        bad |= iok_schema_add_attr(s, IOK_GLOBAL, name, IOK_INT, (size_t)m[S_NDIMS], dims) < 0;
        snprintf(name, sizeof name, "D%d.max_nreqs", i + 1);
        bad |= int_attr(s, IOK_GLOBAL, name, m[S_MAXN]) < 0;
        snprintf(name, sizeof name, "D%d.min_nreqs", i + 1);
        bad |= int_attr(s, IOK_GLOBAL, name, m[S_MINN]) < 0;
        snprintf(name, sizeof name, "D%d.fully_covered", i + 1);
        bad |= iok_schema_add_text_attr(s, IOK_GLOBAL, name, m[S_FULL] ? "true" : "false") < 0;
    }
    return bad ? iok_error(IOK_EIO, "cannot build the decomposition file's schema") : IOK_OK;
}

static int
dc_plan(const void *kopts, const struct iok_run *run, struct iok_plan *plan)
{
    const struct dc_opts *o = kopts;
    struct dc_priv *p = calloc(1, sizeof *p);
    plan->priv = p;
    plan->free_priv = dc_free;
    while (p->nd < NDAT && o->dat[p->nd][0])
        p->nd++;
    if (o->stats) { /* rank 0 walks every rank of the generated decomposition */
        char dir[IOK_OPT_STRLEN + 16];
        snprintf(dir, sizeof dir, "%s/data/e3sm", iok_data_root());
        p->stats = calloc(1, sizeof *p->stats);
        int rc = run->rank == 0 ? e3sm_gen_stats(o->generate, o->records, dir, p->stats) : IOK_OK;
        return iok_agree(run->comm, rc); /* no file */
    }
    int rc = run->rank == 0 ? parse_all(o, p) : IOK_OK;
    MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
    if (rc)
        return rc;
    MPI_Bcast(&p->nd, 1, MPI_INT, 0, run->comm);
    MPI_Bcast(&p->nprocs, 1, MPI_INT64_T, 0, run->comm);
    MPI_Bcast(p->sum, (int)(sizeof p->sum / sizeof(int64_t)), MPI_INT64_T, 0, run->comm);
    struct iok_file_plan *fp;
    IOK_TRY(iok_plan_add_file(plan, &fp));
    snprintf(fp->path, sizeof fp->path, "%s", o->out);
    fp->nsteps = 1;
    iok_schema_init(&fp->schema);
    return build_schema(o, p, &fp->schema);
}

/* The values of variable `what` of decomposition i (rank 0). */
static int32_t *
values_of(const struct dc_priv *p, int i, const char *what, int64_t *n)
{
    const struct e3sm_dat *d = &p->dat[i];
    const int64_t *src = NULL;
    *n = !strcmp(what, "offsets") || !strcmp(what, "lengths") ? d->npairs
         : !strcmp(what, "raw_offsets")                       ? d->nraw
                                                              : d->nprocs;
    int32_t *v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
    if (!strcmp(what, "nreqs") || !strcmp(what, "fill_starts"))
        src = d->nreqs; /* no gap filling: the fill requests start after the last */
    else if (!strcmp(what, "offsets"))
        src = d->off;
    else if (!strcmp(what, "lengths"))
        src = d->len;
    else if (!strcmp(what, "raw_nreqs"))
        src = d->raw_nreqs;
    else
        src = d->raw;
    for (int64_t j = 0; j < *n; j++)
        v[j] = (int32_t)src[j];
    return v;
}

static int
dc_requests(const void *kopts, const struct iok_run *run, const struct iok_plan *plan, int file,
            int step, enum iok_op op, struct iok_reqlist *out)
{
    const struct dc_priv *p = plan->priv;
    const struct iok_schema *s = &plan->files[0].schema;
    for (int v = 0; v < s->nvars; v++) {
        struct iok_access *a = iok_reqlist_add(out, s, v, run->rank == 0);
        if (!a)
            return iok_error(IOK_EIO, "out of memory building requests");
        if (run->rank == 0)
            a->counts[0] = iok_var_dim_len(s, v, 0);
    }
    if (iok_reqlist_finish(out, s))
        return iok_error(IOK_EIO, "out of memory for buffers");
    for (int v = 0; run->rank == 0 && v < s->nvars; v++) {
        int id;
        char what[32];
        int64_t n;
        sscanf(s->vars[v].name, "D%d.%31s", &id, what);
        int32_t *vals = values_of(p, id - 1, what, &n);
        int bad = iok_access_set_values(&out->acc[v], s, vals);
        free(vals);
        if (bad)
            return iok_error(IOK_EIO, "out of memory for values");
    }
    return IOK_OK;
}

static void
dc_report(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
          const struct iok_result *res, FILE *out)
{
    const struct dc_opts *o = kopts;
    const struct dc_priv *p = plan->priv;
    if (o->stats) {
        e3sm_gen_stats_print(p->stats, out);
        return;
    }
    fprintf(out, "output file: %s (%s)\n", o->out, run->backend->name);
    fprintf(out, "number of decompositions: %d, decomposition processes: %lld\n", p->nd,
            (long long)p->nprocs);
    for (int i = 0; i < p->nd; i++) {
        const int64_t *m = p->sum[i];
        char dims[128] = "";
        for (int k = 0, n = 0; k < m[S_NDIMS]; k++)
            n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%lld", k ? " x " : "",
                          (long long)m[S_D0 + k]);
        fprintf(out,
                "D%d: %s (%s), dims %s, %lld requests (per process max %lld, min %lld), "
                "lengths %lld..%lld, %lld offsets, %s\n",
                i + 1, o->generate[0] ? "generated" : o->dat[i],
                m[S_NDIMS] == 1   ? "1D"
                : m[S_NDIMS] == 2 ? "2D"
                                  : "3D+",
                dims, (long long)m[S_NPAIRS], (long long)m[S_MAXN], (long long)m[S_MINN],
                (long long)m[S_MINL], (long long)m[S_MAXL], (long long)m[S_NRAW],
                m[S_FULL] ? "fully covered" : "NOT fully covered");
    }
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *r = &res->pass[i];
        fprintf(out, "%s %s: %lld bytes in %.4f s", iok_op_names[r->op], r->path,
                (long long)r->bytes, r->io_time);
        if (r->op != IOK_OP_WRITE)
            fprintf(out, ", %lld values checked, %lld mismatches", (long long)r->checked,
                    (long long)r->mismatches);
        fputc('\n', out);
    }
}

const struct iok_kernel iok_kernel_e3sm_decomp = {
    .name = "e3sm-decomp",
    .summary = "PIO .dat decomposition files -> E3SM decomposition map file (dat2nc)",
    .options = dc_options,
    .opts_size = sizeof(struct dc_opts),
    .default_input = NULL,
    .read_input = dc_read_input,
    .configure = dc_configure,
    .plan = dc_plan,
    .requests = dc_requests,
    .report = dc_report,
};
