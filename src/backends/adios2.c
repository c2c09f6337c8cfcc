/* SPDX-License-Identifier: BSD-3-Clause */
/* The ADIOS2 backend, through the C API of ADIOS2 built with MPI: one engine
 * over the communicator the core hands the backend (adios2_init_mpi), as
 * facilities and E3SM (SCORPIO) run it.
 *
 * Layout: the output path is one ADIOS2 dataset, a BP5 (default) or BP4
 * directory that bpls and ADIOS2's APIs open as it is:
 *   PATH/md.idx, PATH/md.0, PATH/mmd.0   metadata (mmd.0: BP5 only)
 *   PATH/data.0 ... data.(A-1)           one subfile per aggregator
 * In one ADIOS2 step, every variable is a global array whose shape is the
 * variable's dimensions, the record dimension included (its length: the
 * records the run holds); every subarray a rank puts is one block
 * (start/count); scalars are global values. The schema's attributes (a
 * variable's as "var/name") are defined once, by rank 0.
 *
 * Aggregation is ADIOS2's: with --collective (the default) one subfile per
 * node (ADIOS2's default NumAggregators) written by the node's ranks in turn
 * (BP5: AggregationType=EveryoneWritesSerial, see a2_make_params for why not
 * ADIOS2's default TwoLevelShm) or what --adios2-params says
 * (NumAggregators, AggregationType, NumSubFiles, AggregatorRatio...).
 * --independent is the write without aggregation:
 * every rank writes its own blocks into its own subfile (BP5:
 * AggregationType=EveryoneWrites, NumAggregators=P; BP4: NumAggregators=P),
 * no data moves between ranks; it refuses aggregation parameters. A read is
 * the same either way: each rank reads its own selections.
 *
 * Writing: --api blocking puts each subarray with adios2_mode_sync (copied
 * into ADIOS2's buffer in the post phase); --api nonblocking with
 * adios2_mode_deferred, performed in wait. With BP5 every wait then writes
 * the data put so far (adios2_perform_data_write, collective: the
 * aggregators write their subfiles inside the timed wait) and ADIOS2
 * buffers at most one kernel step. BP4 holds the whole step in memory and
 * writes it at close (its mid-step flush loses the earlier blocks'
 * metadata, ADIOS2 2.12.1). Close ends the step (metadata) and closes.
 * --fsync ends the step and fsync(2)s the dataset's files, each by one rank.
 *
 * Reading, by any number of ranks: the engine opens the dataset
 * (ReadRandomAccess, collective: rank 0 reads the metadata and shares it),
 * every rank learns the blocks of every variable (adios2_inquire_blockinfo)
 * and reads each of its subarrays as one selection of the global array
 * (adios2_set_selection + adios2_get into the subarray's buffer): ADIOS2
 * assembles it from the blocks it meets. Blocking: sync gets; nonblocking:
 * deferred gets, performed in wait. Before a step (prepare, untimed), a
 * subarray that the blocks do not cover entirely is an error. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <adios2_c.h>

#include "iokernels/backend.h"
#include "iokernels/error.h"

#include "adios2_memory.h"
#include "adios2_profile.h"

#if !defined(ADIOS2_HAVE_MPI) || !ADIOS2_USE_MPI
#error "the adios2 backend needs ADIOS2 built with MPI and ADIOS2_USE_MPI=1 (CMakeLists.txt)"
#endif

enum a2_engine { A2_BP5, A2_BP4 }; /* --adios2-engine, in its choices' order */

struct a2_opts {
    enum a2_engine engine;
    char params[IOK_OPT_STRLEN]; /* Key=Value,... */
};

static const struct iok_option a2_options[] = {
    {"adios2-engine", 0, IOK_OPT_CHOICE, offsetof(struct a2_opts, engine), "bp5",
     "engine of the dataset written (a read finds the engine in the dataset)", "bp5|bp4"},
    {"adios2-params", 0, IOK_OPT_STRING, offsetof(struct a2_opts, params), NULL,
     "engine parameters Key=Value,... (adios2_set_parameters), e.g. "
     "NumAggregators=2,AggregationType=TwoLevelShm; --collective: aggregation (default one "
     "subfile per node, AggregationType=EveryoneWritesSerial), --independent: none, every "
     "rank writes its own subfile (NumAggregators=ranks; refuses aggregation parameters)",
     .metavar = "KEY=VALUE,..."},
    {NULL}};

/* One block of the dataset (reading): its box, its id for
 * adios2_set_block_selection, and where its first and last elements fall in
 * the variable's row-major order. */
struct a2_block {
    size_t start[IOK_MAX_DIMS], count[IOK_MAX_DIMS];
    size_t id;
    uint64_t first, last;
};

/* The blocks of one variable, sorted by their first element: a subarray
 * finds the block it equals, or the blocks it meets, by bisection (E3SM's
 * maps give 10^4-10^5 blocks per variable, all in the same record). */
struct a2_blocks {
    int n, cap;
    struct a2_block *b;
    uint64_t maxspan;           /* largest last - first: bounds the search */
    size_t shape[IOK_MAX_DIMS]; /* the dataset's shape */
};

/* Row-major position of element `at` of a variable of this shape. */
static uint64_t
a2_linear(const size_t *shape, int nd, const size_t *at)
{
    uint64_t x = 0;
    for (int k = 0; k < nd; k++)
        x = x * shape[k] + at[k];
    return x;
}

/* The last element of box (st, ct), which holds at least one. */
static uint64_t
a2_linear_last(const size_t *shape, int nd, const size_t *st, const size_t *ct)
{
    size_t last[IOK_MAX_DIMS];
    for (int k = 0; k < nd; k++)
        last[k] = st[k] + ct[k] - 1;
    return a2_linear(shape, nd, last);
}

/* Parameters that set aggregation: --independent refuses them. */
static const char *const a2_agg_keys[] = {"NumAggregators",  "AggregatorRatio", "NumSubFiles",
                                          "AggregationType", "SubStreams",      NULL};

#define A2_PARAMS_LEN (IOK_OPT_STRLEN + 96)

struct a2_file {
    char path[IOK_OPT_STRLEN];
    const struct iok_schema *s;
    MPI_Comm comm;
    int rank, nprocs, writing, deferred, in_step, pending, failed;
    char engine[8];             /* "BP5" or "BP4" */
    char params[A2_PARAMS_LEN]; /* the parameters handed to the engine */
    adios2_adios *ad;
    adios2_io *io;
    adios2_engine *eng;
    adios2_variable **vh;      /* per variable; reading: NULL where no rank wrote it */
    struct a2_blocks *blk;     /* reading: per variable */
    struct a2_profile profile; /* reading: the reader's profile in /tmp */
    struct a2_mem mem;         /* writing: BP5's buffer chunks under ulimit -v */
};

static const adios2_type a2_types[] = {
    adios2_type_int8_t,  adios2_type_int8_t, adios2_type_int16_t, adios2_type_int32_t,
    adios2_type_int64_t, adios2_type_float,  adios2_type_double};

static const char *
a2_version(void)
{
    static char v[48];
    snprintf(v, sizeof v, "ADIOS2 %d.%d.%d (MPI)", ADIOS2_VERSION_MAJOR, ADIOS2_VERSION_MINOR,
             ADIOS2_VERSION_PATCH);
    return v;
}

static const char *const a2_errnames[] = {"no error", "invalid argument", "system error",
                                          "runtime error", "exception"};

/* "CALL on FILE[ variable NAME] failed: ADIOS2 KIND" (ADIOS2 prints its own
 * details on stderr first). e < 0: a call that returns a NULL handle. */
static int
a2_fail(struct a2_file *f, const char *call, const char *var, int e)
{
    f->failed = 1;
    return iok_error(IOK_EIO, "%s on %s%s%s failed: ADIOS2 %s (its message is above)", call,
                     f->path, var ? " variable " : "", var ? var : "",
                     e < 0 ? "returned no handle" : a2_errnames[e > 4 ? 4 : e]);
}

/* "Key=Value,Key=Value" as adios2_set_parameters wants it; checked first so
 * a typo is a usage error, not an exception inside ADIOS2. *agg: the first
 * aggregation key named, or NULL; *type: AggregationType is named. */
static int
a2_check_params(const char *params, const char **agg, int *type)
{
    char *copy = strdup(params), *save = NULL;
    int rc = copy ? IOK_OK : iok_error(IOK_EIO, "--adios2-params: out of memory");
    *agg = NULL;
    *type = 0;
    for (char *kv = copy ? strtok_r(copy, ",", &save) : NULL; kv && rc == IOK_OK;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv || !eq[1]) {
            rc = iok_error(IOK_EUSAGE, "--adios2-params: '%s' is not Key=Value", kv);
            break;
        }
        while (kv < eq && (*kv == ' ' || *kv == '\t'))
            kv++;
        for (int i = 0; a2_agg_keys[i]; i++)
            if ((size_t)(eq - kv) == strlen(a2_agg_keys[i]) &&
                !strncasecmp(kv, a2_agg_keys[i], (size_t)(eq - kv))) {
                *agg = *agg ? *agg : a2_agg_keys[i];
                *type |= !strcmp(a2_agg_keys[i], "AggregationType");
            }
    }
    free(copy);
    return rc;
}

/* The parameters handed to the engine: the user's, and for an independent
 * write the ones that turn aggregation off. A collective BP5 write without
 * an AggregationType gets EveryoneWritesSerial, not ADIOS2's default
 * TwoLevelShm: in ADIOS2 2.12.1 a TwoLevelShm write that fails (a full
 * disk) deadlocks every rank inside the library (MPI_Win_free of different
 * windows), where no agreement of the suite can end the job; with
 * EveryoneWrites several ranks fail at once and the others wait in the
 * library's gather. EveryoneWritesSerial passes the subfile's offset on
 * after each write: the first rank that fails stops the chain, returns, and
 * the core's agreement ends the job with its one error line. */
static int
a2_make_params(struct a2_file *f, const char *user, int collective)
{
    const char *agg;
    int type;
    IOK_TRY(a2_check_params(user, &agg, &type));
    if (!f->writing || (collective && (type || strcmp(f->engine, "BP5")))) {
        snprintf(f->params, sizeof f->params, "%s", user);
        return IOK_OK;
    }
    if (collective) {
        snprintf(f->params, sizeof f->params, "AggregationType=EveryoneWritesSerial%s%s",
                 user[0] ? "," : "", user);
        return IOK_OK;
    }
    if (agg)
        return iok_error(IOK_EUSAGE,
                         "--adios2-params sets %s and --independent means no aggregation (every "
                         "rank writes its own subfile): drop %s or use --collective",
                         agg, agg);
    int n = !strcmp(f->engine, "BP5")
                ? snprintf(f->params, sizeof f->params,
                           "AggregationType=EveryoneWrites,NumAggregators=%d", f->nprocs)
                : snprintf(f->params, sizeof f->params, "NumAggregators=%d", f->nprocs);
    if (user[0] && (size_t)n < sizeof f->params)
        snprintf(f->params + n, sizeof f->params - (size_t)n, ",%s", user);
    return IOK_OK;
}

static void
a2_free(struct a2_file *f)
{
    if (!f)
        return;
    if (f->eng)
        adios2_close(f->eng);
    if (f->ad)
        adios2_finalize(f->ad);
    a2_profile_remove(&f->profile);
    for (int v = 0; f->blk && v < f->s->nvars; v++)
        free(f->blk[v].b);
    free(f->blk);
    free(f->vh);
    free(f);
}

/* The handle, before any collective ADIOS2 call. */
static int
a2_new(struct a2_file **out, const char *path, const struct iok_schema *s,
       const struct iok_backend_params *p, int writing)
{
    const struct a2_opts *o = p->opts;
    struct a2_file *f = calloc(1, sizeof *f);
    if (!f || !(f->vh = calloc((size_t)s->nvars + 1, sizeof *f->vh))) {
        free(f);
        return iok_error(IOK_EIO, "adios2 backend on %s: out of memory", path);
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    f->s = s;
    f->comm = p->comm;
    f->writing = writing;
    f->deferred = p->api == IOK_API_NONBLOCKING;
    MPI_Comm_rank(p->comm, &f->rank);
    MPI_Comm_size(p->comm, &f->nprocs);
    strcpy(f->engine, o && o->engine == A2_BP4 ? "BP4" : "BP5");
    int rc = a2_make_params(f, o ? o->params : "", p->collective);
    if (rc) {
        a2_free(f);
        return rc;
    }
    if (writing)
        a2_mem_init(&f->mem, f->engine, f->params);
    *out = f;
    return IOK_OK;
}

/* Collective: the ADIOS object over the communicator, the IO with the
 * engine and its parameters, the engine open on PATH. */
static int
a2_start(struct a2_file *f, adios2_mode mode)
{
    adios2_error e;
    if (!(f->ad = adios2_init_mpi(f->comm)))
        return a2_fail(f, "adios2_init_mpi", NULL, -1);
    if (!(f->io = adios2_declare_io(f->ad, "iokernels")))
        return a2_fail(f, "adios2_declare_io", NULL, -1);
    if ((e = adios2_set_engine(f->io, f->engine)))
        return a2_fail(f, "adios2_set_engine", NULL, e);
    if (f->params[0] && (e = adios2_set_parameters(f->io, f->params)))
        return a2_fail(f, "adios2_set_parameters", NULL, e);
    if (!f->writing)
        a2_profile_note(&f->profile, f->path, f->params);
    if (!(f->eng = adios2_open(f->io, f->path, mode)))
        return a2_fail(f, mode == adios2_mode_write ? "adios2_open (write)" : "adios2_open (read)",
                       NULL, -1);
    return IOK_OK;
}

/* ---- the dataset's directory ---- */

/* The names ADIOS2's BP4/BP5 engines write inside a BP directory. */
static int
a2_is_bp_file(const char *name)
{
    static const char *const prefix[] = {"data.", "md.", "mmd."};
    if (!strcmp(name, "md.idx") || !strcmp(name, "profiling.json"))
        return 1;
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++) {
        size_t n = strlen(prefix[i]);
        if (!strncmp(name, prefix[i], n) && name[n] &&
            strspn(name + n, "0123456789") == strlen(name + n))
            return 1;
    }
    return 0;
}

/* The output of iokernels' earlier serial backend: an index and one BP
 * directory per writer rank (writer-NNNNNN.bp), replaced as well. */
static int
a2_is_old_layout(const char *name, int dir)
{
    size_t n = strlen(name);
    if (!dir)
        return !strcmp(name, "iokernels-adios2.txt");
    return n == 16 && !strncmp(name, "writer-", 7) && strspn(name + 7, "0123456789") == 6 &&
           !strcmp(name + 13, ".bp");
}

/* An earlier dataset at PATH (--overwrite): with remove = 0, checks that it
 * is a directory holding only ADIOS2's files (or the serial backend's
 * layout: top = 1); with remove = 1, removes them and it, so that no
 * subfile of a run with more aggregators stays. */
static int
a2_clear(const char *dir, int remove, int top)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? IOK_OK
               : errno == ENOTDIR
                   ? iok_error(IOK_EUSAGE,
                               "%s exists and is not an ADIOS2 dataset (not a "
                               "directory): remove it yourself or choose another "
                               "--dir",
                               dir)
                   : iok_error(IOK_EIO, "opendir %s failed: %s", dir, strerror(errno));
    char p[IOK_OPT_STRLEN + 300];
    int rc = IOK_OK;
    for (struct dirent *e; rc == IOK_OK && (e = readdir(d));) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        int ok = lstat(p, &st) == 0, reg = ok && S_ISREG(st.st_mode);
        if (ok && top && S_ISDIR(st.st_mode) && a2_is_old_layout(e->d_name, 1))
            rc = a2_clear(p, remove, 0);
        else if (!reg || !(a2_is_bp_file(e->d_name) || (top && a2_is_old_layout(e->d_name, 0))))
            rc = iok_error(IOK_EUSAGE,
                           "%s was not written by ADIOS2: iokernels removes only what it wrote; "
                           "remove it yourself or choose another --dir",
                           p);
        else if (remove && unlink(p) != 0)
            rc = iok_error(IOK_EIO, "unlink %s failed: %s", p, strerror(errno));
    }
    closedir(d);
    if (rc == IOK_OK && remove && rmdir(dir) != 0)
        rc = iok_error(IOK_EIO, "rmdir %s failed: %s", dir, strerror(errno));
    return rc;
}

/* Bytes of the data.* subfiles of the dataset (-1 if it cannot be read). */
static int64_t
a2_data_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int64_t total = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "data.", 5))
            continue;
        char p[IOK_OPT_STRLEN + 300];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0)
            total += (int64_t)st.st_size;
    }
    closedir(d);
    return total;
}

/* Rank 0 before a read: PATH is a BP dataset (md.idx readable); its engine,
 * BP5 when it has BP5's mmd.0. */
static int
a2_find_dataset(const char *path, char *engine)
{
    char p[IOK_OPT_STRLEN + 16];
    struct stat st;
    snprintf(p, sizeof p, "%s/md.idx", path);
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || access(p, R_OK) != 0)
        return iok_error(IOK_EUSAGE,
                         "%s is not an ADIOS2 dataset (no readable md.idx in it): write it with "
                         "--backend adios2",
                         path);
    snprintf(p, sizeof p, "%s/mmd.0", path);
    strcpy(engine, access(p, F_OK) == 0 ? "BP5" : "BP4");
    return IOK_OK;
}

/* ---- write ---- */

static int
a2_create(void **h, const char *path, const struct iok_schema *s,
          const struct iok_backend_params *p)
{
    struct a2_file *f;
    *h = NULL;
    IOK_TRY(a2_new(&f, path, s, p, 1));
    int rc = IOK_OK;
    if (f->rank == 0) /* check everything, then remove */
        for (int pass = 0; pass < 2 && rc == IOK_OK; pass++)
            rc = a2_clear(path, pass, 1);
    MPI_Bcast(&rc, 1, MPI_INT, 0, p->comm); /* rank 0 holds the message */
    if (rc == IOK_OK)
        rc = a2_start(f, adios2_mode_write);
    if (rc) {
        a2_free(f);
        return rc;
    }
    *h = f;
    return IOK_OK;
}

static int
a2_define_attr(struct a2_file *f, const struct iok_attr *a)
{
    const char *owner = a->owner == IOK_GLOBAL ? NULL : f->s->vars[a->owner].name;
    adios2_attribute *at;
    if (a->type == IOK_CHAR) {
        char *text = strndup(a->value ? a->value : "", a->len);
        at = owner ? adios2_define_variable_attribute(f->io, a->name, adios2_type_string, text,
                                                      owner, "/")
                   : adios2_define_attribute(f->io, a->name, adios2_type_string, text);
        free(text);
    } else if (a->len == 0) {
        return iok_error(IOK_EIO, "%s: attribute %s of %s has no value: ADIOS2 cannot hold it",
                         f->path, a->name, owner ? owner : "the file");
    } else {
        adios2_type t = a2_types[a->type];
        at = owner ? adios2_define_variable_attribute_array(f->io, a->name, t, a->value, a->len,
                                                            owner, "/")
                   : adios2_define_attribute_array(f->io, a->name, t, a->value, a->len);
    }
    return at ? IOK_OK : a2_fail(f, "adios2_define_attribute", owner, -1);
}

static int
a2_define(void *h)
{
    struct a2_file *f = h;
    const struct iok_schema *s = f->s;
    for (int v = 0; v < s->nvars; v++) {
        const struct iok_var *var = &s->vars[v];
        size_t shape[IOK_MAX_DIMS], start[IOK_MAX_DIMS] = {0};
        for (int k = 0; k < var->ndims; k++)
            shape[k] = (size_t)iok_var_dim_len(s, v, k);
        f->vh[v] =
            var->ndims == 0
                ? adios2_define_variable(f->io, var->name, a2_types[var->type], 0, NULL, NULL, NULL,
                                         adios2_constant_dims_true)
                : adios2_define_variable(f->io, var->name, a2_types[var->type], (size_t)var->ndims,
                                         shape, start, shape, adios2_constant_dims_false);
        if (!f->vh[v])
            return a2_fail(f, "adios2_define_variable", var->name, -1);
    }
    /* once in the dataset: ADIOS2 keeps every rank's attribute definitions */
    for (int i = 0; f->rank == 0 && i < s->nattrs; i++)
        IOK_TRY(a2_define_attr(f, &s->attrs[i]));
    adios2_step_status status;
    adios2_error e = adios2_begin_step(f->eng, adios2_step_mode_append, -1.0f, &status);
    if (e)
        return a2_fail(f, "adios2_begin_step", NULL, e);
    f->in_step = 1;
    return IOK_OK;
}

/* Subarray j of access a as size_t start/count; its element count, or -1
 * when it lies outside `shape`. */
static int64_t
a2_sub(const struct iok_access *a, int nd, int j, const size_t *shape, size_t *st, size_t *ct)
{
    int64_t n = 1;
    for (int k = 0; k < nd; k++) {
        int64_t s0 = a->starts[(size_t)j * nd + k], c0 = a->counts[(size_t)j * nd + k];
        if (s0 < 0 || c0 < 0 || (uint64_t)(s0 + c0) > shape[k])
            return -1;
        st[k] = (size_t)s0;
        ct[k] = (size_t)c0;
        n *= c0;
    }
    return n;
}

static int
a2_outside(const struct a2_file *f, const struct iok_access *a, int j)
{
    return iok_error(IOK_EIO, "adios2: %s variable %s: subarray %d lies outside the variable",
                     f->path, f->s->vars[a->varid].name, j);
}

static int
a2_put(void *h, const struct iok_reqlist *r)
{
    struct a2_file *f = h;
    adios2_mode mode = f->deferred ? adios2_mode_deferred : adios2_mode_sync;
    for (int i = 0; i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        const struct iok_var *var = &f->s->vars[a->varid];
        int nd = var->ndims;
        size_t shape[IOK_MAX_DIMS], st[IOK_MAX_DIMS], ct[IOK_MAX_DIMS];
        const char *buf = a->buf;
        for (int k = 0; k < nd; k++)
            shape[k] = (size_t)iok_var_dim_len(f->s, a->varid, k);
        for (int j = 0; j < a->nsub; j++) {
            int64_t n = a2_sub(a, nd, j, shape, st, ct);
            if (n < 0)
                return a2_outside(f, a, j);
            if (n == 0)
                continue; /* no empty blocks */
            adios2_error e =
                nd ? adios2_set_selection(f->vh[a->varid], (size_t)nd, st, ct) : adios2_error_none;
            if (e)
                return a2_fail(f, "adios2_set_selection", var->name, e);
            size_t bytes = (size_t)n * iok_type_size(var->type);
            if ((f->failed = a2_mem_before_put(&f->mem, bytes, f->deferred, f->path, f->rank)))
                return IOK_EIO;
            if ((e = adios2_put(f->eng, f->vh[a->varid], buf, mode)))
                return a2_fail(f, "adios2_put", var->name, e);
            buf += bytes;
        }
    }
    return IOK_OK;
}

/* ---- read ---- */

static int
a2_add_block(struct a2_blocks *b, int nd, size_t id, const size_t *start, const size_t *count)
{
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        struct a2_block *p = realloc(b->b, (size_t)cap * sizeof *p);
        if (!p)
            return iok_error(IOK_EIO, "adios2: out of memory for block lists");
        b->b = p;
        b->cap = cap;
    }
    struct a2_block *x = &b->b[b->n++];
    int64_t elems = 1;
    for (int k = 0; k < nd; k++) {
        x->start[k] = start[k];
        x->count[k] = count[k];
        elems *= (int64_t)count[k];
    }
    x->id = id;
    x->first = a2_linear(b->shape, nd, start);
    x->last = elems > 0 ? a2_linear_last(b->shape, nd, start, count) : x->first;
    if (x->last - x->first > b->maxspan)
        b->maxspan = x->last - x->first;
    return IOK_OK;
}

static int
a2_cmp_block(const void *x, const void *y)
{
    const struct a2_block *a = x, *b = y;
    return (a->first > b->first) - (a->first < b->first);
}

/* Variable v: type and shape as the schema says (the record dimension at
 * least as long); its blocks, sorted. */
static int
a2_scan_var(struct a2_file *f, int v)
{
    const struct iok_var *var = &f->s->vars[v];
    adios2_variable *vh = f->vh[v];
    struct a2_blocks *b = &f->blk[v];
    adios2_type t;
    size_t nd, shape[IOK_MAX_DIMS];
    if (adios2_variable_type(&t, vh) || adios2_variable_ndims(&nd, vh) || nd > IOK_MAX_DIMS ||
        (nd > 0 && adios2_variable_shape(shape, vh)))
        return a2_fail(f, "adios2_variable_shape", var->name, adios2_error_exception);
    static const char *const tn[] = {
        "string", "float", "double", "float complex", "double complex", "int8",   "int16",
        "int32",  "int64", "uint8",  "uint16",        "uint32",         "uint64", "long double"};
    if (t != a2_types[var->type])
        return iok_check_var_type(f->path, f->s, v, t >= 0 && t <= 13 ? tn[t] : "of another type");
    IOK_TRY(iok_check_var_rank(f->path, f->s, v, (int)nd));
    for (int k = 0; k < var->ndims; k++) {
        IOK_TRY(iok_check_var_dim(f->path, f->s, v, k, (int64_t)shape[k]));
        b->shape[k] = shape[k];
    }
    if (var->ndims == 0)
        return a2_add_block(b, 0, 0, NULL, NULL);
    adios2_varinfo *vi = adios2_inquire_blockinfo(f->eng, vh, 0);
    if (!vi)
        return a2_fail(f, "adios2_inquire_blockinfo", var->name, -1);
    int rc = IOK_OK;
    for (size_t i = 0; i < vi->nblocks && rc == IOK_OK; i++)
        rc = a2_add_block(b, var->ndims, vi->BlocksInfo[i].BlockID, vi->BlocksInfo[i].Start,
                          vi->BlocksInfo[i].Count);
    adios2_free_blockinfo(vi);
    qsort(b->b, (size_t)b->n, sizeof *b->b, a2_cmp_block);
    return rc;
}

/* A dataset whose data subfiles are shorter than the blocks its metadata
 * lists is truncated (or lost a subfile): ADIOS2 would retry the short read
 * for ever, so the sizes are compared before any read (the blocks are
 * stored uncompressed). Rank 0. */
static int
a2_check_length(struct a2_file *f)
{
    int64_t need = 0;
    for (int v = 0; v < f->s->nvars; v++) {
        const struct a2_blocks *b = &f->blk[v];
        if (f->s->vars[v].ndims == 0) /* single values live in the metadata */
            continue;
        for (int i = 0; i < b->n; i++) {
            int64_t n = (int64_t)iok_type_size(f->s->vars[v].type);
            for (int k = 0; k < f->s->vars[v].ndims; k++)
                n *= (int64_t)b->b[i].count[k];
            need += n;
        }
    }
    int64_t have = a2_data_bytes(f->path);
    if (have >= 0 && have < need)
        return iok_error(IOK_EIO,
                         "%s is shorter than its blocks need (data subfiles %lld bytes, blocks "
                         "%lld bytes): a truncated or missing subfile",
                         f->path, (long long)have, (long long)need);
    return IOK_OK;
}

/* Collective: the engine on the dataset, its variables and blocks. */
static int
a2_open_dataset(struct a2_file *f)
{
    IOK_TRY(a2_start(f, adios2_mode_readRandomAccess));
    size_t steps = 0;
    adios2_error e = adios2_steps(&steps, f->eng);
    if (e)
        return a2_fail(f, "adios2_steps", NULL, e);
    if (steps != 1)
        return iok_error(IOK_EIO, "%s holds %zu steps: iokernels writes one", f->path, steps);
    /* A variable no rank wrote is not in the dataset (ADIOS2 stores only
     * what is put): an error only when a read asks for it. */
    for (int v = 0; v < f->s->nvars; v++)
        if ((f->vh[v] = adios2_inquire_variable(f->io, f->s->vars[v].name)))
            IOK_TRY(a2_scan_var(f, v));
    return IOK_OK;
}

static int
a2_open(void **h, const char *path, const struct iok_schema *s, const struct iok_backend_params *p)
{
    struct a2_file *f;
    *h = NULL;
    IOK_TRY(a2_new(&f, path, s, p, 0));
    int rc = f->rank == 0 ? a2_find_dataset(path, f->engine) : IOK_OK;
    MPI_Bcast(&rc, 1, MPI_INT, 0, p->comm); /* rank 0 holds the message */
    MPI_Bcast(f->engine, sizeof f->engine, MPI_CHAR, 0, p->comm);
    if (rc == IOK_OK && !(f->blk = calloc((size_t)s->nvars + 1, sizeof *f->blk)))
        rc = iok_error(IOK_EIO, "adios2: out of memory opening %s", path);
    if (rc == IOK_OK)
        rc = a2_open_dataset(f);
    /* every rank holds the same metadata: rank 0 checks the subfiles */
    int lrc = rc == IOK_OK && f->rank == 0 ? a2_check_length(f) : IOK_OK;
    MPI_Bcast(&lrc, 1, MPI_INT, 0, p->comm); /* rank 0 holds the message */
    if (rc == IOK_OK)
        rc = lrc;
    if (rc) {
        a2_free(f);
        return rc;
    }
    *h = f;
    return IOK_OK;
}

/* First block whose first element is at or after x. */
static int
a2_lower_bound(const struct a2_blocks *b, uint64_t x)
{
    int lo = 0, hi = b->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (b->b[mid].first < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The block that is exactly box (st, ct), or NULL. */
static const struct a2_block *
a2_same_block(const struct a2_blocks *b, int nd, const size_t *st, const size_t *ct)
{
    uint64_t first = a2_linear(b->shape, nd, st);
    for (int i = a2_lower_bound(b, first); i < b->n && b->b[i].first == first; i++) {
        int k = 0;
        while (k < nd && b->b[i].start[k] == st[k] && b->b[i].count[k] == ct[k])
            k++;
        if (k == nd)
            return &b->b[i];
    }
    return NULL;
}

/* Elements of box (st, ct), which holds at least one, that the blocks of
 * variable v cover: only blocks whose first element lies within maxspan
 * before the box's first and not after its last can meet it. */
static int64_t
a2_covered(const struct a2_file *f, int v, const size_t *st, const size_t *ct)
{
    const struct a2_blocks *b = &f->blk[v];
    int nd = f->s->vars[v].ndims;
    const struct a2_block *same = a2_same_block(b, nd, st, ct);
    if (same) {
        int64_t n = 1;
        for (int k = 0; k < nd; k++)
            n *= (int64_t)ct[k];
        return n;
    }
    uint64_t first = a2_linear(b->shape, nd, st), last = a2_linear_last(b->shape, nd, st, ct);
    uint64_t from = first > b->maxspan ? first - b->maxspan : 0;
    int64_t covered = 0;
    for (int i = a2_lower_bound(b, from); i < b->n && b->b[i].first <= last; i++) {
        const struct a2_block *x = &b->b[i];
        int64_t m = 1;
        for (int k = 0; k < nd && m > 0; k++) {
            size_t lo = x->start[k] > st[k] ? x->start[k] : st[k];
            size_t hi1 = x->start[k] + x->count[k], hi2 = st[k] + ct[k];
            size_t hi = hi1 < hi2 ? hi1 : hi2;
            m *= hi > lo ? (int64_t)(hi - lo) : 0;
        }
        covered += m;
    }
    return covered;
}

/* Untimed, before a read step: every subarray inside the variable and
 * covered by the dataset's blocks (ADIOS2 would leave a hole unread and
 * say nothing). */
static int
a2_prepare(void *h, struct iok_reqlist *r)
{
    struct a2_file *f = h;
    if (f->writing)
        return IOK_OK;
    for (int i = 0; i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        int nd = f->s->vars[a->varid].ndims;
        size_t st[IOK_MAX_DIMS], ct[IOK_MAX_DIMS];
        if (a->nsub > 0 && f->blk[a->varid].n == 0)
            return iok_error(IOK_EIO, "%s: variable %s is not in the dataset: no rank wrote it",
                             f->path, f->s->vars[a->varid].name);
        for (int j = 0; nd > 0 && j < a->nsub; j++) {
            int64_t n = a2_sub(a, nd, j, f->blk[a->varid].shape, st, ct), c;
            if (n < 0)
                return a2_outside(f, a, j);
            if (n > 0 && (c = a2_covered(f, a->varid, st, ct)) < n)
                return iok_error(IOK_EIO,
                                 "%s: variable %s: subarray %d (%lld elements) is only %lld "
                                 "elements covered by the writers' blocks: was it written with "
                                 "the same options?",
                                 f->path, f->s->vars[a->varid].name, j, (long long)n, (long long)c);
        }
    }
    return IOK_OK;
}

static int
a2_get(void *h, struct iok_reqlist *r)
{
    struct a2_file *f = h;
    adios2_mode mode = f->deferred ? adios2_mode_deferred : adios2_mode_sync;
    for (int i = 0; i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        const struct iok_var *var = &f->s->vars[a->varid];
        adios2_variable *vh = f->vh[a->varid];
        int nd = var->ndims;
        size_t st[IOK_MAX_DIMS], ct[IOK_MAX_DIMS];
        char *buf = a->buf;
        for (int j = 0; j < a->nsub; j++) {
            int64_t n = a2_sub(a, nd, j, f->blk[a->varid].shape, st, ct);
            if (n < 0)
                return a2_outside(f, a, j);
            if (n == 0)
                continue;
            /* a subarray that is one written block (a read by the writers'
             * decomposition) is read as that block: ADIOS2 then does not
             * intersect it with every block of the variable */
            const struct a2_block *same = nd ? a2_same_block(&f->blk[a->varid], nd, st, ct) : NULL;
            adios2_error e = same ? adios2_set_block_selection(vh, same->id)
                             : nd ? adios2_set_selection(vh, (size_t)nd, st, ct)
                                  : adios2_error_none;
            if (e)
                return a2_fail(f, same ? "adios2_set_block_selection" : "adios2_set_selection",
                               var->name, e);
            if ((e = adios2_get(f->eng, vh, buf, mode)))
                return a2_fail(f, "adios2_get", var->name, e);
            f->pending |= f->deferred;
            buf += (size_t)n * iok_type_size(var->type);
        }
    }
    return IOK_OK;
}

/* ---- completion, flush, close ---- */

/* Puts and gets differ in more than their direction here (a writer's
 * blocks and steps, a reader's selections): one entry, two functions. */
static int
a2_xfer(void *h, enum iok_dir dir, struct iok_reqlist *r)
{
    return dir == IOK_DIR_WRITE ? a2_put(h, r) : a2_get(h, r);
}

static int
a2_wait(void *h)
{
    struct a2_file *f = h;
    adios2_error e;
    if (!f->writing) {
        if (f->pending && (e = adios2_perform_gets(f->eng)))
            return a2_fail(f, "adios2_perform_gets", NULL, e);
        f->pending = 0;
        return IOK_OK;
    }
    if (!f->in_step)
        return IOK_OK;
    if (f->deferred && (e = adios2_perform_puts(f->eng)))
        return a2_fail(f, "adios2_perform_puts", NULL, e);
    /* BP4 keeps the step in memory: its mid-step adios2_flush writes the
     * data but drops the earlier flushes' blocks from the metadata. */
    if (!strcmp(f->engine, "BP5") && (e = adios2_perform_data_write(f->eng)))
        return a2_fail(f, "adios2_perform_data_write", NULL, e);
    a2_mem_flushed(&f->mem);
    return IOK_OK;
}

static int
a2_end_step(struct a2_file *f)
{
    if (!f->in_step)
        return IOK_OK;
    f->in_step = 0;
    a2_mem_flushed(&f->mem);
    adios2_error e = adios2_end_step(f->eng);
    return e ? a2_fail(f, "adios2_end_step", NULL, e) : IOK_OK;
}

/* --fsync: ends the step (data and metadata written), then fsync(2) on the
 * dataset's files: data.N by rank N % P, the metadata by rank 0. */
static int
a2_flush(void *h)
{
    struct a2_file *f = h;
    char p[IOK_OPT_STRLEN + 300];
    IOK_TRY(a2_end_step(f));
    DIR *d = opendir(f->path);
    if (!d)
        return iok_error(IOK_EIO, "opendir %s failed: %s", f->path, strerror(errno));
    int rc = IOK_OK;
    for (struct dirent *e; rc == IOK_OK && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        long n = strncmp(e->d_name, "data.", 5) ? 0 : strtol(e->d_name + 5, NULL, 10);
        if (n % f->nprocs != f->rank)
            continue;
        snprintf(p, sizeof p, "%s/%s", f->path, e->d_name);
        int fd = open(p, O_RDONLY);
        if (fd < 0 || fsync(fd) != 0)
            rc = iok_error(IOK_EIO, "fsync %s failed: %s", p, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    return rc;
}

static int
a2_close(void *h)
{
    struct a2_file *f = h;
    int rc = IOK_OK;
    /* After a failed write (a full disk) ADIOS2 would retry it in the
     * collective end of step and close, and its destructors, run by
     * adios2_finalize, throw: std::terminate. The writers agree first
     * (every rank closes; a failure was reported at the core's agreement
     * already): after a failure on any rank none ends the step or closes,
     * the engines stay open and ADIOS2 unfinalized (the job ends with the
     * error anyway). */
    if (f->writing && iok_agree(f->comm, f->failed ? IOK_EIO : IOK_OK) != IOK_OK) {
        f->eng = NULL;
        f->ad = NULL;
        a2_free(f);
        return IOK_EIO;
    }
    if (f->writing && f->in_step)
        rc = a2_end_step(f);
    if (rc != IOK_OK) {
        /* the end of step failed on this rank only (rank 0's metadata on a
         * full disk): adios2_close would end the step again and wait in it
         * for ranks that have closed already. Left open, as above. */
        f->eng = NULL;
        f->ad = NULL;
        a2_free(f);
        return rc;
    }
    adios2_error e = adios2_close(f->eng);
    if (e && rc == IOK_OK)
        rc = a2_fail(f, "adios2_close", NULL, e);
    f->eng = NULL;
    if (rc != IOK_OK && f->writing)
        f->ad = NULL;
    a2_free(f);
    return rc;
}

/* The engine and the parameters handed to it (the record's hints_in_effect;
 * ADIOS2 reports no parameter it chose itself). */
static int
a2_info(void *h, MPI_Info *out)
{
    struct a2_file *f = h;
    MPI_Info_create(out);
    MPI_Info_set(*out, "adios2_engine", f->engine);
    char *copy = strdup(f->params), *save = NULL;
    for (char *kv = copy ? strtok_r(copy, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        while (*kv == ' ' || *kv == '\t')
            kv++;
        if (!eq || eq <= kv)
            continue;
        *eq = '\0';
        MPI_Info_set(*out, kv, eq + 1);
    }
    free(copy);
    return IOK_OK;
}

const struct iok_backend iok_backend_adios2 = {
    .abi = IOK_BACKEND_ABI,
    .name = "adios2",
    .summary = "ADIOS2 (MPI): one engine over the ranks, one BP5/BP4 dataset, subfiles by "
               "aggregation (--independent: none, a subfile per rank); nonblocking = deferred "
               "puts/gets",
    .ext = ".adios2",
    .caps = IOK_CAP_COLLECTIVE | IOK_CAP_INDEPENDENT | IOK_CAP_NONBLOCKING | IOK_CAP_ATTRS,
    .options = a2_options,
    .opts_size = sizeof(struct a2_opts),
    .version = a2_version,
    .create = a2_create,
    .define = a2_define,
    .open = a2_open,
    .prepare = a2_prepare,
    .xfer = a2_xfer,
    .wait = a2_wait,
    .flush = a2_flush,
    .close = a2_close,
    .info = a2_info,
};
