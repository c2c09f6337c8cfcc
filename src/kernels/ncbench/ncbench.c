/* SPDX-License-Identifier: BSD-3-Clause */
/* NetCDF-Bench: the 4-D time series of DKRZ's benchtool.
 *
 * One variable `int data(time, dim_1, dim_2, dim_3)` of geometry t:x:y:z;
 * nn x ppn ranks, rank r owning the block (bt, bx, by, bz) at
 * (t, bx (r / ppn), by (r % ppn), 0), moved with one call per bt time steps.
 * Reads are shifted: rank r reads the block of rank (r + 1) % nranks.
 * Unlimited time (-u), chunks (-c), fill (-F) and deflate (-z) describe the
 * file; NetCDF-4 is the default backend, any other runs the same pattern.
 * With --file-per-process each rank has its own file t:bx:by:bz instead. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"
#include "ncbench.h"

#define OPT(name, c, type, field, def, help)                                                       \
    {                                                                                              \
        name, c, type, offsetof(struct ncb_opts, field), def, help, NULL                           \
    }
/* with the argument's name in help (a string option's FILE, T:X:Y:Z) */
#define OPT_META(name, c, type, field, def, help, meta)                                            \
    {                                                                                              \
        name, c, type, offsetof(struct ncb_opts, field), def, help, NULL,                          \
            .metavar = meta, .size = IOK_OPT_SIZEOF(struct ncb_opts, field)                        \
    }

static const struct iok_option ncb_options[] = {
    OPT("read", 'r', IOK_OPT_BOOL, read, NULL, "enable the read benchmark"),
    OPT("write", 'w', IOK_OPT_BOOL, write, NULL,
        "enable the write benchmark (default: on when neither -r nor -w nor --verify is given)"),
    OPT("unlimited", 'u', IOK_OPT_BOOL, unlimited, NULL, "unlimited time dimension"),
    OPT("use-fill-value", 'F', IOK_OPT_BOOL, fill, NULL,
        "pre-fill the variable with the default fill value"),
    {"nn", 'n', IOK_OPT_INT, offsetof(struct ncb_opts, nn), "0",
     "number of nodes (0: SLURM_NNODES, else 1)", .min = "0", .unit = "nodes"},
    {"ppn", 'p', IOK_OPT_INT, offsetof(struct ncb_opts, ppn), "0",
     "processes per node (0: SLURM_NTASKS_PER_NODE, else ranks / nn)", .min = "0", .unit = "ranks"},
    OPT_META("data-geometry", 'd', IOK_OPT_STRING, data, NULL,
             "data geometry t:x:y:z (default: 100:100*nn:100*ppn:10)", "T:X:Y:Z"),
    OPT_META("block-geometry", 'b', IOK_OPT_STRING, block, NULL,
             "block geometry t:x:y:z each rank moves per call (default: 1:x/nn:y/ppn:z)",
             "T:X:Y:Z"),
    OPT_META("chunk-geometry", 'c', IOK_OPT_STRING, chunk, NULL,
             "chunk geometry t:x:y:z, or auto (= the block) (default: none, contiguous storage)",
             "T:X:Y:Z"),
    OPT_META("io-type", 't', IOK_OPT_STRING, iotype, "ind",
             "independent or collective I/O, or independent with a file per process: "
             "ind|coll|file-per-process (also i, c, f, independent, collective, file)",
             "ind|coll|file-per-process"),
    OPT_META("testfile", 'f', IOK_OPT_STRING, testfile, NULL,
             "file name (default ./testfn.nc; ./testfn<ext> on backends other than netcdf4)",
             "FILE"),
    {"output-format", 'x', IOK_OPT_CHOICE, offsetof(struct ncb_opts, format), "human",
     "report: the original's table (human) or CSV, one row per pass and rank (parser)",
     NCB_FORMAT_CHOICES},
    {"compression_level", 'z', IOK_OPT_INT, offsetof(struct ncb_opts, level), "0",
     "deflate level 1-9 without shuffle, as the original (0: none); needs collective I/O",
     .min = "0", .max = "9"},
    {"compression", 0, IOK_OPT_INT, offsetof(struct ncb_opts, level), "0",
     "same as --compression_level", .min = "0", .max = "9"},
    OPT("file-per-process", 0, IOK_OPT_BOOL, fpp, NULL,
        "each rank its own file <testfile>.<rank> holding its blocks; reads open the next "
        "rank's"),
    {NULL}};

/* ---- configuration: the original's flags set the core's choices ---- */

/* The original's -t values; file-per-process is independent I/O, one file
 * per rank (*fpp set). */
static int
io_is_collective(const char *t, int *coll, int *fpp)
{
    if (!strcmp(t, "c") || !strcmp(t, "coll") || !strcmp(t, "collective"))
        *coll = 1;
    else if (!strcmp(t, "i") || !strcmp(t, "ind") || !strcmp(t, "independent"))
        *coll = 0;
    else if (!strcmp(t, "f") || !strcmp(t, "file") || !strcmp(t, "file-per-process"))
        *coll = 0, *fpp = 1;
    else
        return iok_error(IOK_EUSAGE, "-t/--io-type takes ind, coll or file-per-process, not '%s'",
                         iok_quote(t));
    return IOK_OK;
}

static int
settle_io(struct ncb_opts *o, struct iok_core_opts *core, int (*given)(const char *name))
{
    int coll = 0;
    IOK_TRY(io_is_collective(o->iotype, &coll, &o->fpp));
    if (given("io-type")) {
        if ((given("collective") && !coll) || (given("independent") && coll))
            return iok_error(IOK_EUSAGE, "-t %s contradicts --%s: give one of them", o->iotype,
                             coll ? "independent" : "collective");
    } else if (given("collective") || given("independent")) {
        coll = !given("independent");
    }
    core->io = coll ? IOK_IO_COLL : IOK_IO_INDEP; /* the original's default: independent */
    return IOK_OK;
}

static int
settle_mode(struct ncb_opts *o, struct iok_core_opts *core, int (*given)(const char *name))
{
    if (o->read || o->write) {
        enum iok_mode m = o->read && o->write ? IOK_MODE_BOTH
                          : o->read           ? IOK_MODE_READ
                                              : IOK_MODE_WRITE;
        if (given("mode") && core->mode != m)
            return iok_error(IOK_EUSAGE, "-r/-w ask for '%s' but --mode says '%s': give one",
                             iok_choice_name(IOK_MODE_CHOICES, m).s,
                             iok_choice_name(IOK_MODE_CHOICES, core->mode).s);
        core->mode = m;
    } else if (!given("mode")) {
        /* the original: nothing asked writes; --verify alone checks the existing file */
        core->mode = core->verify ? IOK_MODE_READ : IOK_MODE_WRITE;
        o->verify_only = core->verify;
    }
    return IOK_OK;
}

static int
ncb_configure(void *kopts, struct iok_core_opts *core, int (*given)(const char *name))
{
    struct ncb_opts *o = kopts;
    IOK_TRY(settle_io(o, core, given));
    IOK_TRY(settle_mode(o, core, given));
    if (!given("backend"))
        strcpy(core->backend, "netcdf4");
    core->machine_report = o->format == NCB_FORMAT_PARSER; /* CSV only on stdout */
    if (o->level > 0 && core->io == IOK_IO_INDEP && core->mode != IOK_MODE_READ)
        return iok_error(IOK_EUSAGE,
                         "-z %d: compressed data are written in parallel only with "
                         "collective I/O: add -t coll",
                         o->level);
    /* syntax now, so that a typo is reported before anything else */
    int64_t g[NCB_NDIMS];
    if (o->data[0])
        IOK_TRY(ncb_parse_geom(o->data, "-d/--data-geometry", g));
    if (o->block[0])
        IOK_TRY(ncb_parse_geom(o->block, "-b/--block-geometry", g));
    if (o->chunk[0] && strcmp(o->chunk, "auto"))
        IOK_TRY(ncb_parse_geom(o->chunk, "-c/--chunk-geometry (or auto)", g));
    return IOK_OK;
}

/* ---- the plan: one file, one variable, t / block t steps ---- */

/* A positive count from the environment, else 0. */
static int64_t
env_count(const char *name)
{
    const char *v = getenv(name);
    long long n = v ? strtoll(v, NULL, 10) : 0;
    return n > 0 ? n : 0;
}

/* What the backend cannot store is refused, not silently ignored. */
static int
check_backend(const struct ncb_opts *o, const struct ncb_geom *g, const struct iok_backend *b)
{
    if (b->caps & IOK_CAP_NOIO)
        return IOK_OK;
    if (g->chunked && !(b->caps & IOK_CAP_CHUNKS))
        return iok_error(IOK_EUSAGE, "backend %s has no chunked storage: drop -c %s", b->name,
                         o->chunk);
    if (o->fill && !(b->caps & IOK_CAP_FILL))
        return iok_error(IOK_EUSAGE, "backend %s does not pre-fill variables: drop -F", b->name);
    if (o->level > 0 && !(b->caps & IOK_CAP_DEFLATE))
        return iok_error(IOK_EUSAGE, "backend %s does not compress: drop -z %d", b->name, o->level);
    return IOK_OK;
}

static int
ncb_plan(const void *kopts, const struct iok_run *run, struct iok_plan *plan)
{
    const struct ncb_opts *o = kopts;
    struct ncb_state *st = calloc(1, sizeof *st);
    if (!st)
        return iok_error(IOK_EIO, "out of memory planning ncbench");
    plan->priv = st;
    plan->free_priv = free;
    struct ncb_spec spec = {
        .data = o->data,
        .block = o->block,
        .chunk = o->chunk,
        .nn = o->nn ? o->nn : env_count("SLURM_NNODES"),
        .ppn = o->ppn ? o->ppn : env_count("SLURM_NTASKS_PER_NODE"),
        .unlimited = o->unlimited,
    };
    const struct ncb_geom *g = &st->g;
    IOK_TRY(ncb_resolve(&spec, run->nprocs, &st->g));
    IOK_TRY(check_backend(o, g, run->backend));
    /* a file per process holds one rank's blocks: t by the block's x, y, z */
    int64_t file[NCB_NDIMS];
    memcpy(file, g->data, sizeof file);
    if (o->fpp) {
        static const char *const axis[NCB_NDIMS] = {"t", "x", "y", "z"};
        for (int k = NCB_X; k < NCB_NDIMS; k++) {
            file[k] = g->block[k];
            if (g->chunked && g->chunk[k] > file[k])
                return iok_error(IOK_EUSAGE,
                                 "chunk geometry %s exceeds a process's file (t x block) along "
                                 "%s: with --file-per-process use -c auto or a chunk within the "
                                 "block",
                                 o->chunk, axis[k]);
        }
    }

    struct iok_file_plan *fp;
    IOK_TRY(iok_plan_add_file(plan, &fp));
    if (o->testfile[0])
        snprintf(fp->path, sizeof fp->path, "%s", o->testfile);
    else /* the original's name; other backends keep their own extension */
        snprintf(fp->path, sizeof fp->path, "./testfn%s",
                 strcmp(run->backend->name, "netcdf4") ? run->backend->ext : ".nc");
    fp->nsteps = (int)g->steps;
    fp->per_rank = o->fpp;
    fp->read_shift = 1; /* rank r reads the file of rank r + 1 */
    struct iok_schema *s = &fp->schema;
    iok_schema_init(s);
    int dims[NCB_NDIMS] = {
        iok_schema_add_dim(s, "time", file[NCB_T], g->unlimited),
        iok_schema_add_dim(s, "dim_1", file[NCB_X], 0),
        iok_schema_add_dim(s, "dim_2", file[NCB_Y], 0),
        iok_schema_add_dim(s, "dim_3", file[NCB_Z], 0),
    };
    int v = iok_schema_add_var(s, "data", IOK_INT, NCB_NDIMS, dims);
    if (v < 0)
        return iok_error(IOK_EIO, "cannot build the ncbench schema");
    for (int k = 0; k < NCB_NDIMS; k++)
        s->vars[v].chunk[k] = g->chunked ? g->chunk[k] : 0;
    s->vars[v].fill = o->fill;
    s->vars[v].deflate = o->level;
    s->vars[v].shuffle = 0; /* the original deflates without shuffle */
    return IOK_OK;
}

/* One subarray per step: the own block for a write, the next rank's for a
 * read or the read-back of --verify; with a file per process, the whole of
 * the file's x, y, z (the core opens the next rank's file for reads). */
static int
ncb_requests(const void *kopts, const struct iok_run *run, const struct iok_plan *plan, int file,
             int step, enum iok_op op, struct iok_reqlist *out)
{
    const struct ncb_state *st = plan->priv;
    const struct iok_schema *s = &plan->files[file].schema;
    int who = op == IOK_OP_WRITE ? run->rank : ncb_read_source(run->rank, run->nprocs);
    struct iok_access *a = iok_reqlist_add(out, s, 0, 1);
    if (!a)
        return iok_error(IOK_EIO, "out of memory building ncbench requests");
    const struct ncb_opts *o = kopts;
    if (!o->fpp)
        ncb_block_start(&st->g, who, a->starts);
    a->starts[NCB_T] = (int64_t)step * st->g.block[NCB_T];
    memcpy(a->counts, st->g.block, sizeof st->g.block);
    return iok_reqlist_finish(out, s)
               ? iok_error(IOK_EIO, "out of memory for a block of %lld values",
                           (long long)ncb_elems(st->g.block))
               : IOK_OK;
}

const struct iok_kernel iok_kernel_ncbench = {
    .name = "ncbench",
    .summary = "NetCDF-Bench: 4-D time series t:x:y:z, one block per rank and time step",
    .options = ncb_options,
    .opts_size = sizeof(struct ncb_opts),
    .configure = ncb_configure,
    .plan = ncb_plan,
    .requests = ncb_requests,
    .report = ncb_report,
    .default_barriers = "pass", /* barriers between its open, I/O loop and close, none per step */
};
