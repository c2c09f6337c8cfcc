/* The ADIOS2 backend, through the C API of the serial ADIOS2 of the PyPI
 * wheel: one engine per rank, no MPI inside the library.
 *
 * Layout: the output path is a directory
 *   PATH/iokernels-adios2.txt   index: layout version, number of writers, engine
 *   PATH/writer-000000.bp       rank 0's BP5 (or BP4) file, itself a directory
 *   PATH/writer-000001.bp       ...one per writer rank
 * Each writer file holds, in one ADIOS2 step, the variables as global arrays
 * whose shape is the variable's dimensions, the record dimension included
 * (its length: the records the run holds), and every subarray the rank put
 * as one block (start/count); scalars are global values. Every file carries
 * the schema's attributes (a variable's as "var/name"), so each is
 * self-describing for bpls or the Python API.
 *
 * Writing: --api blocking puts each subarray with adios2_mode_sync (copied
 * into ADIOS2's buffer in the post phase); --api nonblocking with
 * adios2_mode_deferred, performed in wait. With BP5 every wait then writes
 * the data put so far to the file (adios2_perform_data_write): the data
 * reach the file system inside the timed wait and ADIOS2 buffers at most one
 * kernel step. BP4 holds the whole step in memory and writes it at close
 * (its mid-step adios2_flush loses the earlier blocks' metadata, ADIOS2
 * 2.12.1). Close ends the step (metadata) and closes. --fsync ends the step
 * and fsync(2)s every file of the rank's BP directory (ADIOS2 has no sync
 * call of its own).
 *
 * Reading, by any number of ranks: every reader opens every writer's file
 * (ReadRandomAccess; P opens per rank, seen in the open phase) and keeps its
 * blocks (adios2_inquire_blockinfo). A subarray is read as its intersections
 * with the blocks that overlap it, one adios2_get each, with a memory
 * selection placing the piece inside the subarray's buffer: no second copy.
 * Blocking: sync gets; nonblocking: deferred gets, performed in wait.
 * Elements that no block covers are an error.
 *
 * A serial engine has no collective I/O: --collective and --independent
 * make the same calls. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <adios2_c.h>

#include "iokernels/backend.h"
#include "iokernels/error.h"

#define A2_INDEX "iokernels-adios2.txt"
#define A2_LAYOUT 1

struct a2_opts {
    char engine[IOK_OPT_STRLEN]; /* bp5 | bp4 */
    char params[IOK_OPT_STRLEN]; /* Key=Value,... */
};

static const struct iok_option a2_options[] = {
    {"adios2-engine", 0, IOK_OPT_CHOICE, offsetof(struct a2_opts, engine), "bp5",
     "engine of each writer's BP file (a read uses the engine the index names)", "bp5|bp4"},
    {"adios2-params", 0, IOK_OPT_STRING, offsetof(struct a2_opts, params), NULL,
     "engine parameters Key=Value,... (adios2_set_parameters; e.g. StatsLevel=0)"},
    {NULL}};

/* One block of one writer's file (reading). */
struct a2_block {
    int writer;
    size_t start[IOK_MAX_DIMS], count[IOK_MAX_DIMS];
};

/* Every writer's blocks of one variable, sorted by start[0]. */
struct a2_blocks {
    int n, cap;
    struct a2_block *b;
    size_t maxc0;               /* largest count[0]: bounds the search */
    size_t shape[IOK_MAX_DIMS]; /* the file's shape */
};

struct a2_file {
    char path[IOK_OPT_STRLEN];
    const struct iok_schema *s;
    int rank, writing, deferred, in_step;
    char engine[8]; /* "BP5" or "BP4" */
    char params[IOK_OPT_STRLEN];
    adios2_adios *ad;
    int nw; /* engines: 1 when writing, one per writer when reading */
    adios2_io **io;
    adios2_engine **eng;
    adios2_variable **vh;  /* nw x nvars; NULL where a file lacks the variable */
    struct a2_blocks *blk; /* reading: per variable */
    char *pending;         /* reading: engines with deferred gets */
};

static const adios2_type a2_types[] = {
    adios2_type_int8_t,  adios2_type_int8_t, adios2_type_int16_t, adios2_type_int32_t,
    adios2_type_int64_t, adios2_type_float,  adios2_type_double};

static const char *
a2_version(void)
{
    return "ADIOS2 " ADIOS2_VERSION_STR " (serial)";
}

static const char *const a2_errnames[] = {"no error", "invalid argument", "system error",
                                          "runtime error", "exception"};

/* "CALL on FILE[ variable NAME] failed: ADIOS2 KIND" (ADIOS2 prints its own
 * details on stderr first). e < 0: a call that returns a NULL handle. */
static int
a2_fail(const char *call, const char *file, const char *var, int e)
{
    return iok_error(IOK_EIO, "%s on %s%s%s failed: ADIOS2 %s (its message is above)", call, file,
                     var ? " variable " : "", var ? var : "",
                     e < 0 ? "returned no handle" : a2_errnames[e > 4 ? 4 : e]);
}

static void
a2_writer_path(char *out, size_t len, const char *dir, int w)
{
    snprintf(out, len, "%s/writer-%06d.bp", dir, w);
}

/* "Key=Value,Key=Value" as adios2_set_parameters wants it; checked first so
 * a typo is a usage error, not an exception inside ADIOS2. */
static int
a2_check_params(const char *params)
{
    char *copy = strdup(params), *save = NULL;
    int rc = IOK_OK;
    for (char *kv = strtok_r(copy, ",", &save); kv && rc == IOK_OK;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv || !eq[1])
            rc = iok_error(IOK_EUSAGE, "--adios2-params: '%s' is not Key=Value", kv);
    }
    free(copy);
    return rc;
}

static void
a2_free(struct a2_file *f)
{
    if (!f)
        return;
    for (int w = 0; f->eng && w < f->nw; w++)
        if (f->eng[w])
            adios2_close(f->eng[w]);
    if (f->ad)
        adios2_finalize(f->ad);
    for (int v = 0; f->blk && v < f->s->nvars; v++)
        free(f->blk[v].b);
    free(f->blk);
    free(f->io);
    free(f->eng);
    free(f->vh);
    free(f->pending);
    free(f);
}

static int
a2_new(struct a2_file **out, const char *path, const struct iok_schema *s,
       const struct iok_backend_params *p, int writing)
{
    const struct a2_opts *o = p->opts;
    struct a2_file *f = calloc(1, sizeof *f);
    if (!f)
        return iok_error(IOK_EIO, "adios2 backend on %s: out of memory", path);
    snprintf(f->path, sizeof f->path, "%s", path);
    f->s = s;
    f->writing = writing;
    f->deferred = p->api == IOK_API_NONBLOCKING;
    MPI_Comm_rank(p->comm, &f->rank);
    strcpy(f->engine, o && !strcmp(o->engine, "bp4") ? "BP4" : "BP5");
    snprintf(f->params, sizeof f->params, "%s", o ? o->params : "");
    int rc = a2_check_params(f->params);
    if (rc == IOK_OK && !(f->ad = adios2_init_serial()))
        rc = a2_fail("adios2_init_serial", path, NULL, -1);
    if (rc) {
        a2_free(f);
        return rc;
    }
    *out = f;
    return IOK_OK;
}

/* Room for nw engines and their variable handles. */
static int
a2_alloc_engines(struct a2_file *f, int nw)
{
    size_t nv = f->s->nvars > 0 ? (size_t)f->s->nvars : 1;
    f->nw = nw;
    f->io = calloc((size_t)nw, sizeof *f->io);
    f->eng = calloc((size_t)nw, sizeof *f->eng);
    f->vh = calloc((size_t)nw * nv, sizeof *f->vh);
    f->pending = calloc((size_t)nw, 1);
    if (!f->io || !f->eng || !f->vh || !f->pending)
        return iok_error(IOK_EIO, "adios2 backend on %s: out of memory for %d engines", f->path,
                         nw);
    return IOK_OK;
}

/* Declares IO `name` with the engine and parameters, opens `file`. */
static int
a2_open_engine(struct a2_file *f, int w, const char *name, const char *file, adios2_mode mode)
{
    adios2_error e;
    if (!(f->io[w] = adios2_declare_io(f->ad, name)))
        return a2_fail("adios2_declare_io", file, NULL, -1);
    if ((e = adios2_set_engine(f->io[w], f->engine)))
        return a2_fail("adios2_set_engine", file, NULL, e);
    if (f->params[0] && (e = adios2_set_parameters(f->io[w], f->params)))
        return a2_fail("adios2_set_parameters", file, NULL, e);
    if (!(f->eng[w] = adios2_open(f->io[w], file, mode)))
        return a2_fail(mode == adios2_mode_write ? "adios2_open (write)" : "adios2_open (read)",
                       file, NULL, -1);
    return IOK_OK;
}

/* ---- the index ---- */

/* Reads PATH/iokernels-adios2.txt: the writer count and the engine. */
static int
a2_read_index(const char *path, int *nw, char *engine)
{
    char ipath[IOK_OPT_STRLEN + 32];
    struct stat st;
    snprintf(ipath, sizeof ipath, "%s/%s", path, A2_INDEX);
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || access(ipath, R_OK) != 0)
        return iok_error(IOK_EUSAGE,
                         "%s is not an adios2 output of iokernels (no readable %s in it): "
                         "write it with --backend adios2",
                         path, A2_INDEX);
    FILE *fp = fopen(ipath, "r");
    int layout = 0, n = 0, ok = 0;
    if (fp) {
        ok = fscanf(fp, "iokernels adios2 layout %d writers %d engine %7s", &layout, &n, engine) ==
             3;
        fclose(fp);
    }
    if (!ok || layout != A2_LAYOUT || n < 1 || (strcmp(engine, "BP5") && strcmp(engine, "BP4")))
        return iok_error(IOK_EIO,
                         "%s: not an index of layout %d (\"iokernels adios2 layout %d\", "
                         "\"writers N\", \"engine BP5|BP4\")",
                         ipath, A2_LAYOUT, A2_LAYOUT);
    *nw = n;
    return IOK_OK;
}

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

/* One writer's BP directory of an earlier run: with remove = 0, checks that
 * it holds only ADIOS2's files; with remove = 1, removes them and it. */
static int
a2_clear_writer(const char *dir, int remove)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? IOK_OK
                               : iok_error(IOK_EIO, "opendir %s failed: %s", dir, strerror(errno));
    char p[IOK_OPT_STRLEN + 300];
    int rc = IOK_OK;
    for (struct dirent *e; rc == IOK_OK && (e = readdir(d));) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode) || !a2_is_bp_file(e->d_name))
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

/* Rank 0: makes PATH (or clears the writer files an earlier run listed in its
 * index: --overwrite) and writes the index for nprocs writers. */
static int
a2_prepare_dir(const struct a2_file *f, int nprocs)
{
    struct stat st;
    char wp[IOK_OPT_STRLEN + 32], ipath[IOK_OPT_STRLEN + 32];
    snprintf(ipath, sizeof ipath, "%s/%s", f->path, A2_INDEX);
    if (stat(f->path, &st) == 0) {
        int old;
        char engine[8];
        if (a2_read_index(f->path, &old, engine) != IOK_OK) {
            iok_error_clear();
            return iok_error(IOK_EUSAGE,
                             "%s exists and is not an adios2 output of iokernels (no valid %s): "
                             "remove it yourself or choose another --dir",
                             f->path, A2_INDEX);
        }
        for (int pass = 0; pass < 2; pass++) /* check all, then remove */
            for (int w = 0; w < old; w++) {
                a2_writer_path(wp, sizeof wp, f->path, w);
                IOK_TRY(a2_clear_writer(wp, pass));
            }
    } else if (mkdir(f->path, 0777) != 0) {
        return iok_error(IOK_EIO, "mkdir %s failed: %s", f->path, strerror(errno));
    }
    FILE *fp = fopen(ipath, "w");
    if (!fp)
        return iok_error(IOK_EIO, "cannot write %s: %s", ipath, strerror(errno));
    fprintf(fp, "iokernels adios2 layout %d\nwriters %d\nengine %s\n", A2_LAYOUT, nprocs,
            f->engine);
    if (fclose(fp) != 0)
        return iok_error(IOK_EIO, "cannot write %s: %s", ipath, strerror(errno));
    return IOK_OK;
}

/* ---- write ---- */

static int
a2_create(void **h, const char *path, const struct iok_schema *s,
          const struct iok_backend_params *p)
{
    struct a2_file *f;
    int nprocs, rc;
    *h = NULL;
    MPI_Comm_size(p->comm, &nprocs);
    IOK_TRY(a2_new(&f, path, s, p, 1));
    rc = f->rank == 0 ? a2_prepare_dir(f, nprocs) : IOK_OK;
    MPI_Bcast(&rc, 1, MPI_INT, 0, p->comm); /* rank 0 holds the message */
    if (rc == IOK_OK)
        rc = a2_alloc_engines(f, 1);
    if (rc == IOK_OK) {
        char wp[IOK_OPT_STRLEN + 32];
        a2_writer_path(wp, sizeof wp, path, f->rank);
        rc = a2_open_engine(f, 0, "iokernels", wp, adios2_mode_write);
    }
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
        at = owner ? adios2_define_variable_attribute(f->io[0], a->name, adios2_type_string, text,
                                                      owner, "/")
                   : adios2_define_attribute(f->io[0], a->name, adios2_type_string, text);
        free(text);
    } else if (a->len == 0) {
        return iok_error(IOK_EIO, "%s: attribute %s of %s has no value: ADIOS2 cannot hold it",
                         f->path, a->name, owner ? owner : "the file");
    } else {
        adios2_type t = a2_types[a->type];
        at = owner ? adios2_define_variable_attribute_array(f->io[0], a->name, t, a->value, a->len,
                                                            owner, "/")
                   : adios2_define_attribute_array(f->io[0], a->name, t, a->value, a->len);
    }
    return at ? IOK_OK : a2_fail("adios2_define_attribute", f->path, owner, -1);
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
        f->vh[v] = var->ndims == 0
                       ? adios2_define_variable(f->io[0], var->name, a2_types[var->type], 0, NULL,
                                                NULL, NULL, adios2_constant_dims_true)
                       : adios2_define_variable(f->io[0], var->name, a2_types[var->type],
                                                (size_t)var->ndims, shape, start, shape,
                                                adios2_constant_dims_false);
        if (!f->vh[v])
            return a2_fail("adios2_define_variable", f->path, var->name, -1);
    }
    for (int i = 0; i < s->nattrs; i++)
        IOK_TRY(a2_define_attr(f, &s->attrs[i]));
    adios2_step_status status;
    adios2_error e = adios2_begin_step(f->eng[0], adios2_step_mode_append, -1.0f, &status);
    if (e)
        return a2_fail("adios2_begin_step", f->path, NULL, e);
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
                return a2_fail("adios2_set_selection", f->path, var->name, e);
            if ((e = adios2_put(f->eng[0], f->vh[a->varid], buf, mode)))
                return a2_fail("adios2_put", f->path, var->name, e);
            buf += (size_t)n * iok_type_size(var->type);
        }
    }
    return IOK_OK;
}

/* ---- read ---- */

static int
a2_add_block(struct a2_blocks *b, int w, int nd, const size_t *start, const size_t *count)
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
    x->writer = w;
    for (int k = 0; k < nd; k++) {
        x->start[k] = start[k];
        x->count[k] = count[k];
    }
    if (nd > 0 && count[0] > b->maxc0)
        b->maxc0 = count[0];
    return IOK_OK;
}

/* Variable v of writer w's file: type and shape as the schema says (the
 * record dimension at least as long); its blocks join the list. */
static int
a2_scan_var(struct a2_file *f, int w, int v, const char *file)
{
    const struct iok_var *var = &f->s->vars[v];
    adios2_variable *vh = f->vh[(size_t)w * f->s->nvars + v];
    struct a2_blocks *b = &f->blk[v];
    adios2_type t;
    size_t nd, shape[IOK_MAX_DIMS];
    if (adios2_variable_type(&t, vh) || adios2_variable_ndims(&nd, vh) || nd > IOK_MAX_DIMS ||
        (nd > 0 && adios2_variable_shape(shape, vh)))
        return a2_fail("adios2_variable_shape", file, var->name, adios2_error_exception);
    static const char *const tn[] = {
        "string", "float", "double", "float complex", "double complex", "int8",   "int16",
        "int32",  "int64", "uint8",  "uint16",        "uint32",         "uint64", "long double"};
    if (t != a2_types[var->type])
        return iok_check_var_type(file, f->s, v, t >= 0 && t <= 13 ? tn[t] : "of another type");
    IOK_TRY(iok_check_var_rank(file, f->s, v, (int)nd));
    for (int k = 0; k < var->ndims; k++) {
        IOK_TRY(iok_check_var_dim(file, f->s, v, k, (int64_t)shape[k]));
        b->shape[k] = shape[k];
    }
    if (var->ndims == 0)
        return a2_add_block(b, w, 0, NULL, NULL);
    adios2_varinfo *vi = adios2_inquire_blockinfo(f->eng[w], vh, 0);
    if (!vi)
        return a2_fail("adios2_inquire_blockinfo", file, var->name, -1);
    int rc = IOK_OK;
    for (size_t i = 0; i < vi->nblocks && rc == IOK_OK; i++)
        rc = a2_add_block(b, w, var->ndims, vi->BlocksInfo[i].Start, vi->BlocksInfo[i].Count);
    adios2_free_blockinfo(vi);
    return rc;
}

static int
a2_cmp_block(const void *x, const void *y)
{
    const struct a2_block *a = x, *b = y;
    if (a->start[0] != b->start[0])
        return a->start[0] < b->start[0] ? -1 : 1;
    return (a->writer > b->writer) - (a->writer < b->writer);
}

/* Bytes of the data.* subfiles of a BP directory (-1 if it cannot be read). */
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

/* A BP file whose data subfiles are shorter than the blocks its metadata
 * lists is truncated: ADIOS2 would retry the short read for ever, so the
 * sizes are compared before any read (the blocks are stored uncompressed). */
static int
a2_check_length(struct a2_file *f, int w, const char *wp)
{
    int64_t need = 0;
    for (int v = 0; v < f->s->nvars; v++) {
        const struct a2_blocks *b = &f->blk[v];
        if (f->s->vars[v].ndims == 0) /* single values live in the metadata */
            continue;
        for (int i = 0; i < b->n; i++) {
            if (b->b[i].writer != w)
                continue;
            int64_t n = (int64_t)iok_type_size(f->s->vars[v].type);
            for (int k = 0; k < f->s->vars[v].ndims; k++)
                n *= (int64_t)b->b[i].count[k];
            need += n;
        }
    }
    int64_t have = a2_data_bytes(wp);
    if (have >= 0 && have < need)
        return iok_error(IOK_EIO,
                         "%s is shorter than its blocks need (data subfiles %lld bytes, blocks "
                         "%lld bytes): a truncated file",
                         wp, (long long)have, (long long)need);
    return IOK_OK;
}

/* Opens writer w's file and takes in its variables. */
static int
a2_open_writer(struct a2_file *f, int w)
{
    char wp[IOK_OPT_STRLEN + 32], name[32];
    a2_writer_path(wp, sizeof wp, f->path, w);
    snprintf(name, sizeof name, "writer-%d", w);
    if (access(wp, R_OK) != 0) /* before ADIOS2, which would print an exception */
        return iok_error(IOK_EIO, "cannot read %s (%s): the index of %s lists %d writers", wp,
                         strerror(errno), f->path, f->nw);
    IOK_TRY(a2_open_engine(f, w, name, wp, adios2_mode_readRandomAccess));
    size_t steps = 0;
    adios2_error e = adios2_steps(&steps, f->eng[w]);
    if (e)
        return a2_fail("adios2_steps", wp, NULL, e);
    if (steps != 1)
        return iok_error(IOK_EIO, "%s holds %zu steps: iokernels writes one", wp, steps);
    for (int v = 0; v < f->s->nvars; v++) {
        adios2_variable *vh = adios2_inquire_variable(f->io[w], f->s->vars[v].name);
        f->vh[(size_t)w * f->s->nvars + v] = vh; /* NULL: this writer put none of it */
        if (vh)
            IOK_TRY(a2_scan_var(f, w, v, wp));
    }
    return a2_check_length(f, w, wp);
}

static int
a2_open(void **h, const char *path, const struct iok_schema *s, const struct iok_backend_params *p)
{
    struct a2_file *f;
    *h = NULL;
    IOK_TRY(a2_new(&f, path, s, p, 0));
    int info[2] = {IOK_OK, 0};
    if (f->rank == 0)
        info[0] = a2_read_index(path, &info[1], f->engine);
    MPI_Bcast(info, 2, MPI_INT, 0, p->comm); /* rank 0 holds the message */
    MPI_Bcast(f->engine, sizeof f->engine, MPI_CHAR, 0, p->comm);
    int rc = info[0];
    if (rc == IOK_OK)
        rc = a2_alloc_engines(f, info[1]);
    if (rc == IOK_OK && !(f->blk = calloc((size_t)s->nvars + 1, sizeof *f->blk)))
        rc = iok_error(IOK_EIO, "adios2: out of memory opening %s", path);
    for (int w = 0; rc == IOK_OK && w < f->nw; w++)
        rc = a2_open_writer(f, w);
    /* A variable no rank wrote is in no file (ADIOS2 stores only what is
     * put): an error only when a read asks for it. */
    for (int v = 0; rc == IOK_OK && v < s->nvars; v++)
        if (s->vars[v].ndims > 0)
            qsort(f->blk[v].b, (size_t)f->blk[v].n, sizeof *f->blk[v].b, a2_cmp_block);
    if (rc) {
        a2_free(f);
        return rc;
    }
    *h = f;
    return IOK_OK;
}

/* First block whose start[0] >= x. */
static int
a2_lower_bound(const struct a2_blocks *b, size_t x)
{
    int lo = 0, hi = b->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (b->b[mid].start[0] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One adios2_get of `var` from writer w: the box (is, ic) into the
 * subarray buffer `buf` of box (st, ct), through a memory selection. */
static int
a2_get_piece(struct a2_file *f, int w, int v, int nd, const size_t *st, const size_t *ct,
             const size_t *is, const size_t *ic, void *buf)
{
    adios2_variable *vh = f->vh[(size_t)w * f->s->nvars + v];
    const char *name = f->s->vars[v].name;
    size_t ms[IOK_MAX_DIMS];
    adios2_error e = adios2_error_none;
    if (nd > 0) {
        for (int k = 0; k < nd; k++)
            ms[k] = is[k] - st[k];
        if ((e = adios2_set_selection(vh, (size_t)nd, is, ic)))
            return a2_fail("adios2_set_selection", f->path, name, e);
        if ((e = adios2_set_memory_selection(vh, (size_t)nd, ms, ct)))
            return a2_fail("adios2_set_memory_selection", f->path, name, e);
    }
    e = adios2_get(f->eng[w], vh, buf, f->deferred ? adios2_mode_deferred : adios2_mode_sync);
    if (e) {
        char wp[IOK_OPT_STRLEN + 32];
        a2_writer_path(wp, sizeof wp, f->path, w);
        return a2_fail("adios2_get", wp, name, e);
    }
    f->pending[w] |= f->deferred;
    return IOK_OK;
}

/* Subarray (st, ct) of n elements of variable v: every block overlapping it. */
static int
a2_get_sub(struct a2_file *f, int v, const size_t *st, const size_t *ct, int64_t n, void *buf,
           int j)
{
    const struct a2_blocks *b = &f->blk[v];
    int nd = f->s->vars[v].ndims;
    if (nd == 0) /* a global value: the first writer that has it */
        return a2_get_piece(f, b->b[0].writer, v, 0, NULL, NULL, NULL, NULL, buf);
    int64_t covered = 0;
    size_t from = st[0] + 1 > b->maxc0 ? st[0] + 1 - b->maxc0 : 0;
    for (int i = a2_lower_bound(b, from); i < b->n && b->b[i].start[0] < st[0] + ct[0]; i++) {
        const struct a2_block *x = &b->b[i];
        size_t is[IOK_MAX_DIMS], ic[IOK_MAX_DIMS];
        int64_t m = 1;
        for (int k = 0; k < nd && m > 0; k++) {
            size_t lo = x->start[k] > st[k] ? x->start[k] : st[k];
            size_t hi1 = x->start[k] + x->count[k], hi2 = st[k] + ct[k];
            size_t hi = hi1 < hi2 ? hi1 : hi2;
            is[k] = lo;
            ic[k] = hi > lo ? hi - lo : 0;
            m *= (int64_t)ic[k];
        }
        if (m == 0)
            continue;
        IOK_TRY(a2_get_piece(f, x->writer, v, nd, st, ct, is, ic, buf));
        covered += m;
    }
    if (covered < n)
        return iok_error(IOK_EIO,
                         "%s: variable %s: subarray %d (%lld elements) is only %lld elements "
                         "covered by the writers' blocks: was it written with the same options?",
                         f->path, f->s->vars[v].name, j, (long long)n, (long long)covered);
    return IOK_OK;
}

static int
a2_get(void *h, struct iok_reqlist *r)
{
    struct a2_file *f = h;
    for (int i = 0; i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        int nd = f->s->vars[a->varid].ndims;
        size_t st[IOK_MAX_DIMS], ct[IOK_MAX_DIMS];
        char *buf = a->buf;
        if (a->nsub > 0 && f->blk[a->varid].n == 0)
            return iok_error(IOK_EIO, "%s: variable %s is in none of the %d writer files", f->path,
                             f->s->vars[a->varid].name, f->nw);
        for (int j = 0; j < a->nsub; j++) {
            int64_t n = a2_sub(a, nd, j, f->blk[a->varid].shape, st, ct);
            if (n < 0)
                return a2_outside(f, a, j);
            if (n > 0)
                IOK_TRY(a2_get_sub(f, a->varid, st, ct, n, buf, j));
            buf += (size_t)n * iok_type_size(f->s->vars[a->varid].type);
        }
    }
    return IOK_OK;
}

/* ---- completion, flush, close ---- */

static int
a2_wait(void *h)
{
    struct a2_file *f = h;
    adios2_error e;
    if (!f->writing) {
        for (int w = 0; w < f->nw; w++) {
            if (!f->pending[w])
                continue;
            f->pending[w] = 0;
            if ((e = adios2_perform_gets(f->eng[w]))) {
                char wp[IOK_OPT_STRLEN + 32];
                a2_writer_path(wp, sizeof wp, f->path, w);
                return a2_fail("adios2_perform_gets", wp, NULL, e);
            }
        }
        return IOK_OK;
    }
    if (!f->in_step)
        return IOK_OK;
    if (f->deferred && (e = adios2_perform_puts(f->eng[0])))
        return a2_fail("adios2_perform_puts", f->path, NULL, e);
    /* BP4 keeps the step in memory: its mid-step adios2_flush writes the
     * data but drops the earlier flushes' blocks from the metadata. */
    if (!strcmp(f->engine, "BP5") && (e = adios2_perform_data_write(f->eng[0])))
        return a2_fail("adios2_perform_data_write", f->path, NULL, e);
    return IOK_OK;
}

static int
a2_end_step(struct a2_file *f)
{
    if (!f->in_step)
        return IOK_OK;
    f->in_step = 0;
    adios2_error e = adios2_end_step(f->eng[0]);
    return e ? a2_fail("adios2_end_step", f->path, NULL, e) : IOK_OK;
}

/* --fsync: ends the step (data and its metadata written), then fsync(2) on
 * every file of this rank's BP directory. */
static int
a2_flush(void *h)
{
    struct a2_file *f = h;
    char wp[IOK_OPT_STRLEN + 32], p[IOK_OPT_STRLEN + 300];
    IOK_TRY(a2_end_step(f));
    a2_writer_path(wp, sizeof wp, f->path, f->rank);
    DIR *d = opendir(wp);
    if (!d)
        return iok_error(IOK_EIO, "opendir %s failed: %s", wp, strerror(errno));
    int rc = IOK_OK;
    for (struct dirent *e; rc == IOK_OK && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", wp, e->d_name);
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
    int rc = f->writing ? a2_end_step(f) : IOK_OK;
    for (int w = 0; w < f->nw; w++) {
        adios2_error e = adios2_close(f->eng[w]);
        f->eng[w] = NULL;
        if (e && rc == IOK_OK)
            rc = a2_fail("adios2_close", f->path, NULL, e);
    }
    /* After a failed write (a full disk) the engines' destructors, run by
     * adios2_finalize, retry the writes and throw from a destructor:
     * std::terminate. The ADIOS object is left unfinalized instead (the
     * process ends with the error anyway). */
    if (rc != IOK_OK && f->writing)
        f->ad = NULL;
    a2_free(f);
    return rc;
}

const struct iok_backend iok_backend_adios2 = {
    .abi = IOK_BACKEND_ABI,
    .name = "adios2",
    .summary = "ADIOS2 (serial): one BP5/BP4 file per writer rank; no collective I/O "
               "(--collective = --independent); nonblocking = deferred puts/gets",
    .ext = ".adios2",
    .caps = IOK_CAP_COLLECTIVE | IOK_CAP_INDEPENDENT | IOK_CAP_NONBLOCKING | IOK_CAP_ATTRS,
    .options = a2_options,
    .opts_size = sizeof(struct a2_opts),
    .version = a2_version,
    .create = a2_create,
    .define = a2_define,
    .open = a2_open,
    .put = a2_put,
    .get = a2_get,
    .wait = a2_wait,
    .flush = a2_flush,
    .close = a2_close,
};
