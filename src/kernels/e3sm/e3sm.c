/* SPDX-License-Identifier: BSD-3-Clause */
/* E3SM-IO: the I/O of E3SM's F, G and I cases, replayed from a decomposition
 * file, with the original's options:
 *
 *   iokernels e3sm [-k] [-r N] [-s N] [-x canonical] [-a API] [-f -1|0|1]
 *                  [-i PATH] [-o PATH] [-t] [-v] DECOMPOSITION_FILE
 *
 * The case (F, G or I) is recognised from the decomposition file; each
 * history file's schema comes from data/e3sm (its CDL header and
 * variables.tsv). Per record, every rank lists every variable of the file:
 * a decomposed one through its sorted, merged runs (one subarray per run,
 * along the fastest dimension), a non-decomposed one whole on rank 0, none
 * elsewhere. Non-record variables go with the first record. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e3sm_kernel.h"
#include "iokernels/data.h"
#include "iokernels/error.h"
#include "iokernels/input.h"
#include "kernels/e3sm_common/e3sm_gen.h"

static const struct iok_option e3sm_options[] = {
    {"keep", 'k', IOK_OPT_BOOL, offsetof(struct e3sm_opts, keep), NULL,
     "keep the output files (without -k the files this run wrote are deleted at its end)"},
    {"records", 'r', IOK_OPT_INT, offsetof(struct e3sm_opts, records), "1",
     "records (time steps) of F h1, G and I h0; F h0 and I h1 hold one, as in the original",
     .min = "1", .unit = "records"},
    {"stride", 's', IOK_OPT_INT, offsetof(struct e3sm_opts, stride), "1",
     "ranks 0, s, 2s, ... do the I/O after the data moves to them (with --rearrange box)",
     .min = "1", .unit = "ranks"},
    {"strategy", 'x', IOK_OPT_CHOICE, offsetof(struct e3sm_opts, strategy), "canonical",
     "I/O strategy: canonical (one file per history file, canonical order) or blob (each "
     "rank's data one block per variable, -g subfiles with an index)",
     E3SM_STRATEGY_CHOICES},
    {"library", 'a', IOK_OPT_CHOICE, offsetof(struct e3sm_opts, api), NULL,
     "I/O library, as the original's -a (sets --backend; netcdf4 transfers independently, as "
     "the original's, unless --collective; the original's adios layout is refused: use "
     "--backend adios2)",
     E3SM_LIBRARY_CHOICES},
    {"hx", 'f', IOK_OPT_INT, offsetof(struct e3sm_opts, hx), "-1",
     "history files: 0 h0 only, 1 h1 only, -1 both (F and I cases)", .min = "-1", .max = "1"},
    {"subfiles", 'g', IOK_OPT_INT, offsetof(struct e3sm_opts, subfiles), "1",
     "number of subfiles (blob strategy): contiguous groups of ranks, one subfile each; at "
     "most the job's ranks",
     .min = "1", .unit = "subfiles"},
    {"in", 'i', IOK_OPT_STRING, offsetof(struct e3sm_opts, in), NULL,
     "read the history files of this name (F, I: NAME_h0.ext, NAME_h1.ext)", .metavar = "NAME"},
    {"out", 'o', IOK_OPT_STRING, offsetof(struct e3sm_opts, out), NULL,
     "write the history files of this name (F, I: NAME_h0.ext, NAME_h1.ext)", .metavar = "NAME"},
    {"two-d-first", 't', IOK_OPT_BOOL, offsetof(struct e3sm_opts, two_d_first), NULL,
     "write 2D variables before 3D ones (default: off, in definition order)"},
    {"noncontig", 'm', IOK_OPT_BOOL, offsetof(struct e3sm_opts, noncontig), NULL,
     "noncontiguous user buffer (not supported: refused)"},
    {"verbose", 'v', IOK_OPT_BOOL, offsetof(struct e3sm_opts, verbose), NULL,
     "print each rank's decomposition share"},
    {"float", 'j', IOK_OPT_BOOL, offsetof(struct e3sm_opts, float_j), NULL,
     "the original's -j: the header's float variables are NC_FLOAT in the file, as --xtype "
     "float (this suite's behaviour without it too)"},
    {"xtype", 0, IOK_OPT_CHOICE, offsetof(struct e3sm_opts, xtype), "float",
     "external type of the header's float variables: float (the original's -j) or double (the "
     "original's default); the G case's are double either way",
     E3SM_XTYPE_CHOICES},
    {"fill-missing", 'u', IOK_OPT_BOOL, offsetof(struct e3sm_opts, fill_u), NULL,
     "the original's -u: write the maps' gap fillers (pairs after Dn.fill_starts) too, as "
     "--missing fill (this suite's behaviour without it too)"},
    {"missing", 0, IOK_OPT_CHOICE, offsetof(struct e3sm_opts, missing), "fill",
     "the maps' gap fillers (pairs after Dn.fill_starts): fill (written, the original's -u) or "
     "skip (the original's default)",
     E3SM_MISSING_CHOICES},
    {"no-sort", 'q', IOK_OPT_BOOL, offsetof(struct e3sm_opts, nosort_q), NULL,
     "keep each rank's requests in the map's order, unsorted and unmerged (the original's -q)"},
    {"rearrange", 0, IOK_OPT_CHOICE, offsetof(struct e3sm_opts, rearrange), "none",
     "box: move data to I/O ranks holding contiguous canonical ranges (PIO's box rearranger)",
     E3SM_REARRANGE_CHOICES},
    {"io-ranks", 0, IOK_OPT_INT, offsetof(struct e3sm_opts, io_ranks), "0",
     "I/O ranks of the rearranger (0: one per node)", .min = "0", .unit = "ranks"},
    {"replay", 0, IOK_OPT_STRING, offsetof(struct e3sm_opts, replay), NULL,
     "turn the blob subfiles of this name into the canonical files of -o (the writer's ranks "
     "and -g)",
     .metavar = "NAME"},
    {"generate", 0, IOK_OPT_STRING, offsetof(struct e3sm_opts, generate), NULL,
     "generate the decomposition instead of reading a file: f:ne=N,procs=P (also np, nlev, "
     "pcols), g:cells=N,procs=P (edges, vertices, nlev), i:nlat=N,nlon=M,procs=P (land, "
     "levels=A/B/C/D); every parameter defaults to the shipped 16-rank case",
     .metavar = "CASE:KEY=VALUE,...", .size = IOK_OPT_SIZEOF(struct e3sm_opts, generate)},
    {"schema-dir", 0, IOK_OPT_STRING, offsetof(struct e3sm_opts, schema_dir), NULL,
     "directory of the history files' CDL headers and variables.tsv (default: data/e3sm of the "
     "suite's data: PREFIX/share/iokernels, or the source tree)",
     .metavar = "DIR"},
    {NULL}};

/* ---- errors seen by some ranks, known to all with the same message ---- */

static int
agree_msg(MPI_Comm comm, int rc)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    int mine[2] = {rc, rc ? nprocs - rank : 0}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm);
    if (all[0] == IOK_OK)
        return IOK_OK;
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", iok_errmsg());
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, nprocs - all[1], comm);
    if (rc == IOK_OK)
        iok_error(all[0], "%s", msg);
    return all[0];
}

/* ---- configuration ---- */

static int
e3sm_configure(void *kopts, struct iok_core_opts *core, int (*given)(const char *name))
{
    struct e3sm_opts *o = kopts; /* -r, -f, -s, -g, --io-ranks: ranges of the table */
    if (o->noncontig)
        return iok_error(IOK_EUSAGE, "-m (noncontiguous user buffer) is not supported: each "
                                     "variable's data is one contiguous buffer");
    if (o->float_j && o->xtype == E3SM_XTYPE_DOUBLE)
        return iok_error(IOK_EUSAGE, "-j (float) contradicts --xtype double: give one");
    if (o->fill_u && o->missing == E3SM_MISSING_SKIP)
        return iok_error(IOK_EUSAGE, "-u (fill the gaps) contradicts --missing skip: give one");
    if (o->nosort_q && o->rearrange == E3SM_REARRANGE_BOX)
        return iok_error(IOK_EUSAGE, "-q (unsorted requests) and --rearrange box exclude each "
                                     "other: the rearranger orders every rank's data by offset");
    int blob = o->strategy == E3SM_BLOB;
    if (blob && o->rearrange == E3SM_REARRANGE_BOX)
        return iok_error(IOK_EUSAGE, "-x blob and --rearrange box exclude each other: blob "
                                     "writes each rank's data as one block already");
    if (o->io_ranks && o->stride > 1)
        return iok_error(IOK_EUSAGE, "-s and --io-ranks both choose the I/O ranks: give one");
    if ((o->io_ranks || o->stride > 1) && o->rearrange != E3SM_REARRANGE_BOX)
        return iok_error(IOK_EUSAGE, "%s moves the data to I/O ranks: add --rearrange box",
                         o->io_ranks ? "--io-ranks" : "-s");
    if (o->replay[0] && (blob || o->in[0] || !o->out[0]))
        return iok_error(IOK_EUSAGE,
                         "--replay %s writes the canonical files of -o NAME (no -x "
                         "blob, no -i)",
                         o->replay);
    if (o->subfiles > 1 && !blob && !o->replay[0])
        return iok_error(IOK_EUSAGE, "-g (subfiles) applies to -x blob only");
    if (o->api != IOK_CHOICE_UNSET) {
        const char *lib = iok_choice_name(E3SM_LIBRARY_CHOICES, o->api).s;
        if (given("backend"))
            return iok_error(IOK_EUSAGE, "-a and --backend both choose the library: give one");
        if (!strncmp(lib, "adios", 5) && iok_backend_known("adios2"))
            return iok_error(IOK_EUSAGE,
                             "-a %s: the original's ADIOS2 output (-a adios) is its own BP "
                             "layout, not reproduced here; --backend adios2 writes the "
                             "canonical history files through ADIOS2 (with -x blob: the blob "
                             "subfiles as one dataset, the counterpart of -a adios -x blob)",
                             lib);
        if (!iok_backend_known(lib)) {
            char names[256] = "";
            for (int i = 0; i < iok_backend_count(); i++)
                if (strcmp(iok_backend_name_at(i), "null"))
                    strcat(strcat(names, names[0] ? ", " : ""), iok_backend_name_at(i));
            return iok_error(IOK_EUSAGE, "-a %s: this build has no %s backend (it has %s)", lib,
                             lib, names);
        }
        strcpy(core->backend, lib);
    }
    if (!core->backend[0])
        strcpy(core->backend, iok_backend_known("pnetcdf") ? "pnetcdf" : "mpiio");
    /* Ranks list different numbers of subarrays per variable (one run here,
     * none there): PnetCDF 1.12's collective put_varn_all with one subarray
     * takes the put_vara_all path and with several the iput + wait_all path,
     * and the two do not match across ranks (a hang). Nonblocking iput_varn
     * + one wait_all per record, the original's, is safe. */
    if (!strcmp(core->backend, "pnetcdf") && !given("api"))
        core->api = IOK_API_NONBLOCKING; /* iput_varn + one wait_all per record: the original */
    /* The original's NetCDF-4 driver moves every variable's data with
     * nc_var_par_access NC_INDEPENDENT (one nc_put_vara / nc_get_vara per
     * subarray); so does -a netcdf4 here unless --collective is given.
     * Collective, every subarray is a collective HDF5 call on every rank:
     * F h0 on 4 ranks took 141 s against the original's 15 s. */
    if (!strcmp(core->backend, "netcdf4") && !given("collective") && !given("independent"))
        core->io = IOK_IO_INDEP;
    /* -o writes and -i reads, as the original; --mode (sweeps pass it to
     * every kernel) may name the pass instead: the one name of -o or -i is
     * then the files written or read */
    if (given("mode")) {
        char name[sizeof o->out];
        snprintf(name, sizeof name, "%s", o->out[0] ? o->out : o->in);
        if (o->in[0] && o->out[0] && strcmp(o->in, o->out))
            return iok_error(IOK_EUSAGE, "--mode with -i %s and -o %s: give one name", o->in,
                             o->out);
        if (!name[0])
            return iok_error(IOK_EUSAGE, "--mode %s needs the files' name: -o NAME",
                             iok_choice_name(IOK_MODE_CHOICES, core->mode).s);
        int w = core->mode != IOK_MODE_READ, r = core->mode != IOK_MODE_WRITE;
        snprintf(o->out, sizeof o->out, "%s", w ? name : "");
        snprintf(o->in, sizeof o->in, "%s", r ? name : "");
    }
    if (!o->in[0] && !o->out[0])
        return iok_error(IOK_EUSAGE,
                         "give -o NAME to write the history files, -i NAME to read them (or "
                         "both, the same NAME, to write and read back)");
    if (o->in[0] && o->out[0] && strcmp(o->in, o->out))
        return iok_error(IOK_EUSAGE,
                         "-i %s and -o %s: reading one set of files and writing another is not "
                         "supported; give the same name to both, or one of them",
                         o->in, o->out);
    core->mode = o->in[0] && o->out[0] ? IOK_MODE_BOTH : o->out[0] ? IOK_MODE_WRITE : IOK_MODE_READ;
    return IOK_OK;
}

/* ---- plan ---- */

/* NAME.ext -> NAME_h0.ext; NAME -> NAME_h0 (the original's rule). */
static void
history_path(const char *base, const char *tag, char *out, size_t len)
{
    const char *slash = strrchr(base, '/'), *dot = strrchr(base, '.');
    if (dot && (!slash || dot > slash + 1))
        snprintf(out, len, "%.*s%s%s", (int)(dot - base), base, tag, dot);
    else
        snprintf(out, len, "%s%s", base, tag);
}

/* Rank 0 reads a (small) schema file; every rank gets its text. */
static char *
shared_text(const char *dir, const char *name, MPI_Comm comm)
{
    char path[IOK_OPT_STRLEN + 4160];
    if (dir[0])
        snprintf(path, sizeof path, "%s/%s", dir, name);
    else /* the shipped schemas */
        snprintf(path, sizeof path, "%s/data/e3sm/%s", iok_data_root(), name);
    char *text = NULL;
    iok_read_shared_text(path, "E3SM schema file (data/e3sm of the suite's data, or --schema-dir)",
                         comm, 0, &text);
    return text;
}

/* Without -k the files this run wrote are removed at its end, as the
 * original does; nothing else is ever deleted (not the files only read). */
static void
state_free(void *p)
{
    struct e3sm_state *st = p;
    for (int f = 0; f < E3SM_MAX_FILES; f++)
        if (st->rank == 0 && !st->keep && st->wrote[f])
            iok_remove_output(st->path[f]);
    for (int f = 0; f < E3SM_MAX_FILES; f++) {
        free(st->var_decomp[f]);
        free(st->order[f]);
    }
    for (int i = 0; i < E3SM_MAX_DECOMP; i++) {
        free(st->tmpl[i].coord);
        free(st->tmpl[i].len);
        e3sm_box_free(&st->box[i]);
    }
    e3sm_blob_free(&st->bl);
    for (int f = 0; f < E3SM_MAX_FILES; f++) {
        for (int v = 0; st->replay_vals[f] && v < st->ncanon[f]; v++)
            free(st->replay_vals[f][v]);
        free(st->replay_vals[f]);
        iok_schema_free(&st->canon[f]);
    }
    free(st->io);
    e3sm_decomps_free(&st->dec);
    free(st);
}

/* Unravels each run's offset into coordinates of the decomposed array. */
static int
make_templates(struct e3sm_state *st)
{
    for (int i = 0; i < st->dec.ndecomp; i++) {
        const struct e3sm_decomp *d = &st->dec.d[i];
        struct e3sm_tmpl *t = &st->tmpl[i];
        t->n = d->runs.n;
        t->coord = malloc((size_t)(t->n * d->ndims + 1) * sizeof *t->coord);
        t->len = malloc((size_t)(t->n + 1) * sizeof *t->len);
        if (!t->coord || !t->len)
            return iok_error(IOK_EIO, "out of memory for %lld runs of D%d", (long long)t->n, i + 1);
        for (int64_t j = 0; j < t->n; j++) {
            int64_t o = d->runs.off[j];
            for (int k = d->ndims - 1; k >= 0; k--) {
                t->coord[j * d->ndims + k] = o % d->dims[k];
                o /= d->dims[k];
            }
            t->len[j] = d->runs.len[j];
        }
    }
    return IOK_OK;
}

/* Write order: definition order, or with -t the variables of at most one
 * fixed (horizontal) dimension first, then the others. */
static void
make_order(struct e3sm_state *st, int f, const struct iok_schema *s, int two_d_first)
{
    int n = 0;
    st->order[f] = malloc((size_t)(s->nvars + 1) * sizeof(int));
    for (int pass = 0; pass < (two_d_first ? 2 : 1); pass++)
        for (int v = 0; v < st->ncanon[f]; v++) {
            int fixed = s->vars[v].ndims - iok_var_is_record(s, v);
            if (!two_d_first || (pass == 0) == (fixed <= 1))
                st->order[f][n++] = v;
        }
    for (int v = st->ncanon[f]; v < s->nvars; v++) /* a blob subfile's index */
        st->order[f][n++] = v;
}

static int
count_requests(struct e3sm_state *st, int f, const struct iok_schema *s, int nrecs, int rank,
               MPI_Comm comm)
{
    int64_t mine = 0;
    /* blob: the subfile's group root writes what rank 0 writes in canonical */
    int in_group = !st->blob || st->bl.group == st->group_of[f];
    int root = st->blob ? in_group && st->bl.grank == 0 : rank == 0;
    for (int v = 0; v < st->ncanon[f]; v++) {
        int dn = st->var_decomp[f][v], recs = iok_var_is_record(s, v) ? nrecs : 1;
        st->nvars_d[f][dn]++;
        if (st->blob)
            mine += recs * (dn ? in_group && st->bl.elems[dn - 1] > 0 : root);
        else
            mine += recs * (dn ? st->tmpl[dn - 1].n : root);
    }
    st->my_reqs[f] = mine;
    MPI_Allreduce(&mine, &st->sum_reqs[f], 1, MPI_INT64_T, MPI_SUM, comm);
    MPI_Allreduce(&mine, &st->max_reqs[f], 1, MPI_INT64_T, MPI_MAX, comm);
    MPI_Allreduce(&mine, &st->min_reqs[f], 1, MPI_INT64_T, MPI_MIN, comm);
    return IOK_OK;
}

static void
verbose_share(const struct e3sm_state *st, const struct iok_run *run)
{
    for (int r = 0; r < run->nprocs; r++) {
        MPI_Barrier(run->comm);
        if (r != run->rank)
            continue;
        for (int i = 0; i < st->dec.ndecomp; i++) {
            const struct e3sm_decomp *d = &st->dec.d[i];
            int64_t first, count;
            e3sm_assign(st->dec.decomp_nprocs, run->nprocs, run->rank, &first, &count);
            printf("D%d rank %d: decomposition ranks %lld..%lld, %lld pairs (%lld fill), %lld "
                   "runs, %lld elements\n",
                   i + 1, run->rank, (long long)first, (long long)(first + count - 1),
                   (long long)d->file_pairs, (long long)d->fill_pairs, (long long)d->runs.n,
                   (long long)d->runs.nelems);
        }
        fflush(stdout);
    }
}

/* A blob subfile holds its group's ranks' data in their order: it reads
 * back only with the writer's ranks and subfiles. Its index is a
 * decomposition file of the group: the writer's group size is the length of
 * D1.nreqs (files with an index: not the raw MPI-IO layout). */
static int
blob_check_writer(const struct e3sm_state *st, const struct iok_run *run, const char *path, int g)
{
    if (!st->replay && (!strcmp(run->backend->name, "mpiio") || access(path, R_OK) != 0))
        return IOK_OK; /* no index to read; a missing file is the core's to report */
    struct e3sm_decomps idx;
    int rc = agree_msg(run->comm, e3sm_decomp_read(path, run->comm, &idx));
    if (rc == IOK_OK && idx.decomp_nprocs != st->bl.gsizes[g])
        rc = iok_error(IOK_EUSAGE,
                       "%s was written by %lld ranks per subfile, this run has %d: read a blob "
                       "with the writer's ranks and -g",
                       path, (long long)idx.decomp_nprocs, st->bl.gsizes[g]);
    e3sm_decomps_free(&idx);
    return rc;
}

/* E3SM-IO's set_info(): collective writes everywhere, and on PnetCDF no gap
 * between variables and in-place byte swaps. */
static const struct iok_kernel_hint e3sm_hints[] = {
    {NULL, "romio_cb_write", "enable"},
    {"pnetcdf", "nc_var_align_size", "1"},
    {"pnetcdf", "nc_in_place_swap", "enable"},
    {NULL, NULL, NULL},
};

/* ... and, when no type conversion is needed (double data: the G case, or
 * the F and I cases without -j), the write buffer is one and the requests
 * are sorted, nc_ibuf_size=0: PnetCDF hands the noncontiguous buffer to
 * MPI-IO instead of packing it into a temporary copy first. */
static const struct iok_kernel_hint e3sm_hints_double[] = {
    {NULL, "romio_cb_write", "enable"},
    {"pnetcdf", "nc_ibuf_size", "0"},
    {"pnetcdf", "nc_in_place_swap", "enable"},
    {"pnetcdf", "nc_var_align_size", "1"},
    {NULL, NULL, NULL},
};

/* -g groups contiguous ranks, one subfile each: no more subfiles than
 * ranks (the blob writer; --replay takes the writer's subfiles as found). */
static int
e3sm_check_ranks(const void *kopts, int nprocs)
{
    const struct e3sm_opts *o = kopts;
    if (o->strategy == E3SM_BLOB && !o->replay[0] && o->subfiles > nprocs)
        return iok_error(IOK_EUSAGE, "-g %d: more subfiles than the %d ranks", o->subfiles, nprocs);
    return IOK_OK;
}

static int
e3sm_plan(const void *kopts, const struct iok_run *run, struct iok_plan *plan)
{
    const struct e3sm_opts *o = kopts;
    if (!run->input_path && !o->generate[0])
        return iok_error(IOK_EUSAGE, "name the decomposition file, e.g. iokernels e3sm -o out.nc "
                                     "map_f_case_16p.nc, or generate one: --generate f:ne=30");
    if (run->input_path && o->generate[0])
        return iok_error(IOK_EUSAGE, "a decomposition file (%s) and --generate %s: give one",
                         run->input_path, o->generate);
    struct e3sm_state *st = calloc(1, sizeof *st);
    plan->priv = st;
    /* without the rearranger, exchange() only hands the lists over: not I/O */
    plan->exchange_is_handover = o->rearrange != E3SM_REARRANGE_BOX;
    plan->free_priv = state_free;
    st->rank = run->rank;
    st->keep = o->keep;
    snprintf(st->decomp_path, sizeof st->decomp_path, "%s", run->input_path ? run->input_path : "");

    struct e3sm_read_opts ro = {.skip_fill = o->missing == E3SM_MISSING_SKIP,
                                .unsorted = o->nosort_q};
    int rc = o->generate[0] /* the decomposition: generated, or read */
                 ? e3sm_gen_load(o->generate, run->comm, &st->dec, st->decomp_path,
                                 sizeof st->decomp_path)
                 : e3sm_decomp_read_opts(run->input_path, run->comm, &ro, &st->dec);
    IOK_TRY(agree_msg(run->comm, rc));
    for (int i = 0; i < st->dec.ndecomp; i++) { /* a map, checked as a map: across ranks */
        char overlap[512];
        rc = e3sm_runs_check_disjoint(&st->dec.d[i].runs, st->dec.d[i].total, run->comm, overlap,
                                      sizeof overlap)
                 ? iok_error(IOK_EUSAGE, "%s: D%d: %s", st->decomp_path, i + 1, overlap)
                 : IOK_OK;
        IOK_TRY(agree_msg(run->comm, rc));
    }
    char why[512];
    int nhist;
    const struct e3sm_hist *hist;
    if (e3sm_case_detect(&st->dec, &st->cid, &hist, &nhist, why, sizeof why))
        return iok_error(IOK_EUSAGE, "%s: %s", st->decomp_path, why);
    if ((st->cid == E3SM_CASE_G || o->xtype == E3SM_XTYPE_DOUBLE) && !o->nosort_q)
        plan->original_hints = e3sm_hints_double;
    if (st->cid == E3SM_CASE_G && o->hx == 1)
        return iok_error(IOK_EUSAGE, "-f 1: the G case has one history file (use -f 0 or -1)");
    IOK_TRY(make_templates(st));
    st->nio = run->nprocs;
    if (o->rearrange == E3SM_REARRANGE_BOX) {
        st->rearrange = 1;
        st->io = malloc((size_t)run->nprocs * sizeof *st->io);
        st->nio = e3sm_box_io_ranks(run->comm, o->stride, o->io_ranks, st->io);
        for (int i = 0; i < st->dec.ndecomp; i++)
            IOK_TRY(agree_msg(
                run->comm, e3sm_box_setup(&st->dec.d[i], run->comm, st->io, st->nio, &st->box[i])));
    }
    if (o->verbose)
        verbose_share(st, run);

    char *tsv = shared_text(o->schema_dir, "variables.tsv", run->comm);
    IOK_TRY(agree_msg(run->comm, tsv ? IOK_OK : IOK_EUSAGE));
    const char *base = o->out[0] ? o->out : o->in;
    int ngroups = 1;
    st->blob = o->strategy == E3SM_BLOB;
    st->replay = o->replay[0] != 0;
    if (st->blob || st->replay) {
        ngroups = st->blob ? o->subfiles : 1;
        int nh = nhist == 2 && o->hx != -1 ? 1 : nhist;
        if (nh * ngroups > E3SM_MAX_FILES)
            rc = iok_error(IOK_EUSAGE, "-g %d: at most %d subfiles per history file here", ngroups,
                           E3SM_MAX_FILES / nh);
        else
            rc = agree_msg(run->comm, e3sm_blob_setup(&st->dec, run->comm, o->subfiles, &st->bl));
        if (rc == IOK_OK && st->blob && !(run->backend->caps & IOK_CAP_EMPTY_DIMS))
            rc = e3sm_blob_refuse_empty(&st->dec, &st->bl, run->nprocs, run->backend->name);
    }
    for (int h = 0; h < nhist && rc == IOK_OK; h++) { /* a name cut short would be another file */
        char name[IOK_OPT_STRLEN + 64];
        history_path(base, hist[h].tag, name, sizeof name);
        size_t len = strlen(name) + (st->blob ? 5 : 0); /* ".NNNN" */
        if (len >= IOK_OPT_STRLEN)
            rc = iok_error(IOK_EUSAGE,
                           "%s: its history file %s%s is %zu characters, more than the %d a "
                           "path holds: shorten it",
                           o->out[0] ? "-o" : "-i", name, st->blob ? ".NNNN" : "", len,
                           IOK_OPT_STRLEN - 1);
    }
    for (int h = 0; h < nhist && rc == IOK_OK; h++) {
        if (nhist == 2 && o->hx != -1 && o->hx != h)
            continue;
        int nrecs = hist[h].one_record ? 1 : o->records; /* as e3sm_io.c */
        char *cdl = shared_text(o->schema_dir, hist[h].cdl, run->comm);
        rc = agree_msg(run->comm, cdl ? IOK_OK : IOK_EUSAGE);
        for (int g = 0; g < ngroups && rc == IOK_OK; g++) {
            struct iok_file_plan *fp;
            if ((rc = iok_plan_add_file(plan, &fp)))
                break;
            int f = plan->nfiles - 1;
            st->hist[f] = &hist[h];
            st->group_of[f] = g;
            history_path(base, hist[h].tag, fp->path, sizeof fp->path);
            if (st->blob)
                snprintf(fp->path + strlen(fp->path), sizeof fp->path - strlen(fp->path), ".%04d",
                         g);
            snprintf(st->path[f], sizeof st->path[f], "%s", fp->path);
            fp->nsteps = nrecs;
            iok_schema_init(&fp->schema);
            struct iok_schema canon;
            iok_schema_init(&canon);
            if (e3sm_schema_build(cdl, tsv, &hist[h], &st->dec, nrecs, &canon, &st->var_decomp[f],
                                  why, sizeof why))
                rc = iok_error(IOK_EUSAGE, "%s: %s", st->decomp_path, why);
            else if (o->xtype == E3SM_XTYPE_DOUBLE && e3sm_schema_float_to_double(&canon))
                rc = iok_error(IOK_EIO, "out of memory making %s's float variables double",
                               hist[h].cdl);
            st->ncanon[f] = canon.nvars;
            if (rc == IOK_OK && st->blob) {
                rc = e3sm_blob_schema(&st->dec, &st->bl, g, &canon, st->var_decomp[f], &fp->schema);
                st->canon[f] = canon; /* the blob's values are the canonical ones */
            } else {
                fp->schema = canon;
            }
            if (rc == IOK_OK && st->blob && !run->do_write)
                rc = blob_check_writer(st, run, fp->path, g);
            if (rc == IOK_OK) {
                make_order(st, f, &fp->schema, o->two_d_first);
                rc = count_requests(st, f, &fp->schema, nrecs, run->rank, run->comm);
            }
        }
        free(cdl);
    }
    free(tsv);
    if (rc == IOK_OK && st->replay) { /* every subfile's writer, then this rank's blocks */
        for (int f = 0; f < plan->nfiles && rc == IOK_OK; f++)
            for (int g = 0; g < st->bl.ngroups && rc == IOK_OK; g++) {
                char sub[IOK_OPT_STRLEN + 16];
                history_path(o->replay, st->hist[f]->tag, sub, sizeof sub - 16);
                snprintf(sub + strlen(sub), 16, ".%04d", g % 10000);
                rc = blob_check_writer(st, run, sub, g);
                if (g == st->bl.group)
                    snprintf(st->replay_path[f], sizeof st->replay_path[f], "%s", sub);
            }
        if (rc == IOK_OK)
            rc = agree_msg(run->comm, e3sm_replay_load(st, run, plan, o->records));
    }
    return rc;
}

/* Subarray j of a decomposed variable v: run j of its decomposition. */
static void
canonical_runs(const struct e3sm_state *st, const struct iok_schema *s, int v, int dn, int step,
               struct iok_access *a)
{
    const struct e3sm_tmpl *t = &st->tmpl[dn - 1];
    int nd = s->vars[v].ndims, rec = iok_var_is_record(s, v), dd = st->dec.d[dn - 1].ndims;
    for (int64_t j = 0; j < a->nsub; j++) {
        int64_t *sa = a->starts + j * nd, *ca = a->counts + j * nd;
        if (rec) {
            sa[0] = step;
            ca[0] = 1;
        }
        for (int k = 0; k < dd; k++) {
            sa[rec + k] = t->coord[j * dd + k];
            ca[rec + k] = 1;
        }
        ca[nd - 1] = t->len[j];
    }
}

/* ---- requests: the blob layout ---- */

/* The canonical values of this rank's runs of variable v (one record):
 * a blob block holds them in the order of the runs, so that a blob holds the
 * same data as the canonical file, element for element. */
static int
blob_values(const struct e3sm_state *st, const struct iok_schema *blob, int file, int v, int step,
            uint64_t seed, enum iok_values how, struct iok_access *a)
{
    const struct iok_schema *cs = &st->canon[file];
    int dn = st->var_decomp[file][v];
    struct iok_reqlist tmp;
    iok_reqlist_init(&tmp);
    struct iok_access *c = iok_reqlist_add(&tmp, cs, v, (int)st->tmpl[dn - 1].n);
    int rc = IOK_OK;
    if (!c || (canonical_runs(st, cs, v, dn, step, c), iok_reqlist_finish(&tmp, cs)))
        rc = iok_error(IOK_EIO, "out of memory for the values of %s", cs->vars[v].name);
    if (rc == IOK_OK) {
        iok_data_fill(cs, &tmp, seed, how);
        if (tmp.acc[0].nelems != a->nelems || iok_access_set_values(a, blob, tmp.acc[0].buf))
            rc = iok_error(IOK_EIO, "blob block of %s: %lld elements for %lld runs' %lld",
                           cs->vars[v].name, (long long)a->nelems, (long long)c->nsub,
                           (long long)tmp.acc[0].nelems);
    }
    iok_reqlist_free(&tmp);
    return rc;
}

/* Every rank of the subfile's group writes one block per decomposed
 * variable at its prefix (the canonical values of its runs, in their
 * order); the group's root writes the non-decomposed variables (canonical
 * values, same shape) and the index. */
static int
blob_requests(const struct e3sm_state *st, const struct iok_schema *s, int file, int step,
              uint64_t seed, enum iok_values how, struct iok_reqlist *out)
{
    const struct e3sm_blob *b = &st->bl;
    int in_group = b->group == st->group_of[file], root = in_group && b->grank == 0;
    for (int i = 0; i < s->nvars; i++) {
        int v = st->order[file][i], rec = iok_var_is_record(s, v), nd = s->vars[v].ndims;
        if (!rec && step > 0)
            continue;
        int dn = v < st->ncanon[file] ? st->var_decomp[file][v] : 0;
        int has = dn ? in_group && b->elems[dn - 1] > 0 : root;
        struct iok_access *a = iok_reqlist_add(out, s, v, has);
        if (!a)
            return iok_error(IOK_EIO, "out of memory building requests of %s", s->vars[v].name);
        for (int k = 0; k < nd && has; k++) {
            a->starts[k] = rec && k == 0 ? step : dn ? b->prefix[dn - 1] : 0;
            a->counts[k] = rec && k == 0 ? 1 : dn ? b->elems[dn - 1] : iok_var_dim_len(s, v, k);
        }
    }
    if (iok_reqlist_finish(out, s))
        return iok_error(IOK_EIO, "out of memory for E3SM buffers");
    for (int i = 0; i < out->n; i++) {
        struct iok_access *a = &out->acc[i];
        if (a->varid < st->ncanon[file] && a->nsub && st->var_decomp[file][a->varid])
            IOK_TRY(blob_values(st, s, file, a->varid, step, seed, how, a));
    }
    for (int i = 0; root && i < out->n; i++) { /* the index: its own values */
        struct iok_access *a = &out->acc[i];
        int id;
        char what[32];
        if (a->varid < st->ncanon[file] ||
            sscanf(s->vars[a->varid].name, "D%d.%31s", &id, what) != 2)
            continue;
        const void *vals = !strcmp(what, "nreqs")     ? (const void *)b->g_nreqs[id - 1]
                           : !strcmp(what, "offsets") ? (const void *)b->g_off[id - 1]
                                                      : (const void *)b->g_len[id - 1];
        if (iok_access_set_values(a, s, vals))
            return iok_error(IOK_EIO, "out of memory for the blob index");
    }
    return IOK_OK;
}

/* ---- requests: the canonical layout ---- */

static int
e3sm_requests(const void *kopts, const struct iok_run *run, const struct iok_plan *plan, int file,
              int step, enum iok_op op, struct iok_reqlist *out)
{
    struct e3sm_state *st = plan->priv;
    const struct iok_schema *s = &plan->files[file].schema;
    if (op == IOK_OP_WRITE)
        st->wrote[file] = 1;
    if (st->blob)
        return blob_requests(st, s, file, step, (uint64_t)run->core->seed, run->core->values, out);
    for (int i = 0; i < s->nvars; i++) {
        int v = st->order[file][i], rec = iok_var_is_record(s, v);
        if (!rec && step > 0)
            continue; /* fixed variables go with the first record */
        int nd = s->vars[v].ndims, dn = st->var_decomp[file][v];
        const struct e3sm_tmpl *t = dn ? &st->tmpl[dn - 1] : NULL;
        int64_t nsub = t ? t->n : run->rank == 0;
        struct iok_access *a = iok_reqlist_add(out, s, v, (int)nsub);
        if (!a)
            return iok_error(IOK_EIO, "out of memory building requests of %s", s->vars[v].name);
        if (!t) { /* rank 0: the whole variable (one record of it) */
            for (int k = 0; k < nd && nsub; k++) {
                a->starts[k] = rec && k == 0 ? step : 0;
                a->counts[k] = rec && k == 0 ? 1 : iok_var_dim_len(s, v, k);
            }
            continue;
        }
        canonical_runs(st, s, v, dn, step, a);
    }
    if (iok_reqlist_finish(out, s))
        return iok_error(IOK_EIO, "out of memory for E3SM buffers");
    return st->replay ? e3sm_replay_values(st, s, file, step, out) : IOK_OK;
}

/* e3sm_io.c's set_info(): collective buffering for writes whatever the
 * library; for PnetCDF no gap between variables and byte swap in place */
const struct iok_kernel iok_kernel_e3sm = {
    .name = "e3sm",
    /* the shipped maps' paths: iokernels --list --json says where "data" is */
    .summary = "E3SM-IO F, G and I cases from a decomposition file (positional FILE); shipped "
               "16-rank maps: data/e3sm/map_f_case_16p.nc, map_g_case_16p.nc, map_i_case_16p.nc "
               "(installed: share/iokernels/data/e3sm/); --generate for any size",
    .options = e3sm_options,
    .opts_size = sizeof(struct e3sm_opts),
    .input_by_path = 1,
    .configure = e3sm_configure,
    .check_ranks = e3sm_check_ranks,
    .plan = e3sm_plan,
    .requests = e3sm_requests,
    .exchange = e3sm_exchange,
    .report = e3sm_report,
    .default_barriers = "phase", /* e3sm_io: an MPI_Barrier before every timed phase */
    .original_hints = e3sm_hints,
};
