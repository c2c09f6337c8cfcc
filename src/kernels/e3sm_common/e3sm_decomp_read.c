/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading a decomposition file: which container (by its signature), then the
 * same questions whatever the container. Every rank reads the per-rank
 * request counts (Dn.nreqs, one integer per decomposition rank) and then only
 * the (offset, length) pairs of the decomposition ranks it carries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/format.h"
#include "e3sm_decomp.h"
#include "e3sm_source.h"
#include "iokernels/error.h"
#include "iokernels/module.h"

enum kind { K_NONE, K_CDF, K_HDF5, K_BP, K_UNKNOWN };

/* Rank 0 tells the container by its content (the core's rules, the same
 * as for a backend's files: core/formats/format.h); a path named .bp that
 * is none of them goes to ADIOS2, which names what is wrong with it. Every
 * rank learns the answer. */
static enum kind
detect(const char *path, MPI_Comm comm, char *format, size_t len)
{
    int rank, k = K_NONE, f = IOK_FMT_NONE;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        f = iok_format_of_path(path);
        size_t pl = strlen(path);
        if (f == IOK_FMT_NONE)
            k = K_NONE;
        else if (iok_format_is_cdf(f))
            k = K_CDF;
        else if (f == IOK_FMT_HDF5)
            k = K_HDF5;
        else if (f == IOK_FMT_BP || f == IOK_FMT_BP3 || (pl > 3 && !strcmp(path + pl - 3, ".bp")))
            k = K_BP;
        else
            k = K_UNKNOWN;
    }
    MPI_Bcast(&k, 1, MPI_INT, 0, comm);
    MPI_Bcast(&f, 1, MPI_INT, 0, comm);
    if (k == K_CDF)
        snprintf(format, len, "CDF-%d", f == IOK_FMT_CDF1 ? 1 : f == IOK_FMT_CDF2 ? 2 : 5);
    else if (k == K_HDF5)
        snprintf(format, len, "HDF5");
    return (enum kind)k;
}

/* Dn.WHAT (one entry per decomposition rank), present only in map files:
 * read into buf and *have set when the file holds it. */
static int
read_optional(struct e3sm_src *src, const char *path, int id, const char *what, int64_t n,
              int64_t *buf, int *have)
{
    char name[64];
    int64_t len;
    snprintf(name, sizeof name, "D%d.%s", id, what);
    int r = src->var_len(src, name, &len);
    if (r == 0)
        return IOK_OK;
    *have = 1;
    if (r < 0)
        return -r;
    if (len != n)
        return iok_error(IOK_EUSAGE, "%s: %s has %lld entries, expected %lld", path, name,
                         (long long)len, (long long)n);
    return src->read(src, name, 0, n, buf);
}

/* One decomposition's counts, per decomposition rank (Dn.nreqs, and in map
 * files Dn.fill_starts and Dn.raw_nreqs: one allocation), and the part of
 * Dn.offsets / Dn.lengths this rank reads. */
struct counts {
    int64_t n, noff; /* decomposition ranks; pairs in the file */
    int64_t *nreqs, *fill, *raw;
    int have_fill, have_raw;
    int64_t first, count; /* the decomposition ranks this rank carries */
    int64_t start, cnt;   /* their pairs: [start, start + cnt) of the file's */
};

/* Dn.dims, the decomposed array's shape, and its number of elements. */
static int
read_dims(struct e3sm_src *src, int id, struct e3sm_decomp *d)
{
    char name[64];
    snprintf(name, sizeof name, "D%d.dims", id);
    int r = src->att(src, name, d->dims, E3SM_MAX_DDIMS);
    if (r < 0)
        return -r;
    if (r == 0)
        return iok_error(IOK_EUSAGE,
                         "%s: missing global attribute %s (the dimensions of decomposition D%d)",
                         src->path, name, id);
    d->ndims = r;
    d->total = 1;
    for (int k = 0; k < d->ndims; k++) {
        if (d->dims[k] < 1)
            return iok_error(IOK_EUSAGE, "%s: %s[%d] = %lld: dimensions must be positive",
                             src->path, name, k, (long long)d->dims[k]);
        d->total *= d->dims[k];
    }
    return IOK_OK;
}

/* The lengths of Dn.nreqs (c->n) and Dn.offsets (c->noff), checked against
 * Dn.lengths', D1's and what the file's size can hold. */
static int
read_sizes(struct e3sm_src *src, int id, struct e3sm_decomps *out, struct counts *c)
{
    const char *path = src->path;
    char name[64];
    int64_t nlen = 0;
    const char *what[3] = {"nreqs", "offsets", "lengths"};
    int64_t *lens[3] = {&c->n, &c->noff, &nlen};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "D%d.%s", id, what[i]);
        int r = src->var_len(src, name, lens[i]);
        if (r < 0)
            return -r;
        if (r == 0)
            return iok_error(IOK_EUSAGE,
                             "%s: missing variable %s: an E3SM decomposition file holds "
                             "Dn.nreqs, Dn.offsets and Dn.lengths for each decomposition",
                             path, name);
    }
    int64_t n = c->n, noff = c->noff;
    if (id == 1)
        out->decomp_nprocs = n;
    else if (n != out->decomp_nprocs)
        return iok_error(IOK_EUSAGE, "%s: D%d.nreqs has %lld entries but D1.nreqs has %lld", path,
                         id, (long long)n, (long long)out->decomp_nprocs);
    if (noff != nlen)
        return iok_error(IOK_EUSAGE, "%s: D%d.offsets holds %lld values but D%d.lengths %lld", path,
                         id, (long long)noff, id, (long long)nlen);
    if (n < 1 || noff < 0)
        return iok_error(IOK_EUSAGE, "%s: D%d.nreqs has %lld entries: no decomposition rank", path,
                         id, (long long)n);
    if (src->max_values > 0 && (n > src->max_values || noff > src->max_values / 2))
        return iok_error(IOK_EUSAGE,
                         "%s: D%d claims %lld ranks and %lld requests, more than the file's size "
                         "can hold: a damaged file",
                         path, id, (long long)n, (long long)noff);
    return IOK_OK;
}

/* The per-rank counts, read and checked (each 0 or more, all adding up to
 * Dn.offsets' length, fill_starts within them), and where the pairs of the
 * decomposition ranks this rank carries are. The caller frees c->nreqs. */
static int
read_counts(struct e3sm_src *src, MPI_Comm comm, int id, struct e3sm_decomps *out, struct counts *c)
{
    const char *path = src->path;
    char name[64];
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    int64_t n = c->n, noff = c->noff;
    c->nreqs = calloc((size_t)(3 * n + 1), sizeof *c->nreqs);
    if (!c->nreqs)
        return iok_error(IOK_EIO, "%s: out of memory for D%d's %lld request counts", path, id,
                         (long long)n);
    int64_t *nreqs = c->nreqs, *fill = nreqs + n;
    c->fill = fill;
    c->raw = nreqs + 2 * n;
    snprintf(name, sizeof name, "D%d.nreqs", id);
    int rc = src->read(src, name, 0, n, nreqs);
    if (rc == IOK_OK)
        rc = read_optional(src, path, id, "fill_starts", n, fill, &c->have_fill);
    if (rc == IOK_OK)
        rc = read_optional(src, path, id, "raw_nreqs", n, c->raw, &c->have_raw);
    if (id == 1)
        out->layout = c->have_fill ? E3SM_LAYOUT_MAP : E3SM_LAYOUT_LEGACY;
    int64_t sum = 0;
    e3sm_assign(n, nprocs, rank, &c->first, &c->count);
    for (int64_t i = 0; rc == IOK_OK && i < n; i++) {
        if (nreqs[i] < 0 || nreqs[i] > noff - sum)
            rc = iok_error(IOK_EUSAGE,
                           "%s: D%d.nreqs[%lld] = %lld: the counts must be 0 or more and add up "
                           "to the %lld entries of D%d.offsets",
                           path, id, (long long)i, (long long)nreqs[i], (long long)noff, id);
        else if (c->have_fill && (fill[i] < 0 || fill[i] > nreqs[i]))
            rc = iok_error(IOK_EUSAGE, "%s: D%d.fill_starts[%lld] = %lld is outside 0..%lld", path,
                           id, (long long)i, (long long)fill[i], (long long)nreqs[i]);
        if (i < c->first)
            c->start += nreqs[i];
        else if (i < c->first + c->count)
            c->cnt += nreqs[i];
        sum += nreqs[i];
    }
    if (rc == IOK_OK && sum != noff)
        rc = iok_error(IOK_EUSAGE,
                       "%s: D%d.nreqs sums to %lld requests but D%d.offsets holds %lld: the "
                       "decomposition file is inconsistent",
                       path, id, (long long)sum, id, (long long)noff);
    return rc;
}

/* This rank's pairs, read into *off (c->cnt offsets, then c->cnt lengths:
 * one allocation) and checked: each inside the array, each decomposition
 * rank's real ones (before its fill_starts) adding up to its raw count. */
static int
read_pairs(struct e3sm_src *src, int id, const struct counts *c, struct e3sm_decomp *d,
           int64_t **offp)
{
    const char *path = src->path;
    char name[64];
    int64_t cnt = c->cnt, start = c->start;
    int64_t *off = malloc((size_t)(2 * cnt + 1) * sizeof *off), *len = off + cnt;
    *offp = off;
    if (!off)
        return iok_error(IOK_EIO, "%s: out of memory for D%d's %lld requests", path, id,
                         (long long)cnt);
    snprintf(name, sizeof name, "D%d.offsets", id);
    int rc = src->read(src, name, start, cnt, off);
    if (rc == IOK_OK) {
        snprintf(name, sizeof name, "D%d.lengths", id);
        rc = src->read(src, name, start, cnt, len);
    }
    int64_t at = 0;
    for (int64_t dr = c->first; rc == IOK_OK && dr < c->first + c->count; dr++) {
        int64_t real = c->have_fill ? c->fill[dr] : c->nreqs[dr], elems = 0;
        for (int64_t j = 0; rc == IOK_OK && j < c->nreqs[dr]; j++, at++) {
            if (len[at] < 1 || off[at] < 0 || off[at] > d->total - len[at])
                rc = iok_error(IOK_EUSAGE,
                               "%s: D%d request %lld (offset %lld, length %lld) is outside the "
                               "%lld elements of the decomposed array: the decomposition file "
                               "is inconsistent",
                               path, id, (long long)(start + at), (long long)off[at],
                               (long long)len[at], (long long)d->total);
            if (j < real)
                elems += len[at];
            else
                d->fill_pairs++;
        }
        if (rc == IOK_OK && c->have_raw && elems != c->raw[dr])
            rc = iok_error(IOK_EUSAGE,
                           "%s: D%d decomposition rank %lld: its lengths sum to %lld elements "
                           "but D%d.raw_nreqs says %lld",
                           path, id, (long long)dr, (long long)elems, id, (long long)c->raw[dr]);
    }
    return rc;
}

/* Keeps each decomposition rank's real pairs (those before its fill_starts),
 * moved to the front of off[] with their lengths right after them: returns
 * how many, *len pointing at the lengths. */
static int64_t
drop_fill(const struct counts *c, int64_t *off, int64_t **len)
{
    int64_t *l = *len, kept = 0, from = 0;
    for (int64_t dr = c->first; dr < c->first + c->count; from += c->nreqs[dr], dr++)
        for (int64_t j = 0; j < c->fill[dr]; j++, kept++) {
            off[kept] = off[from + j];
            l[kept] = l[from + j];
        }
    memmove(off + kept, l, (size_t)kept * sizeof *l);
    *len = off + kept;
    return kept;
}

/* Reads one decomposition, id 1-based: its shape, the counts of every
 * decomposition rank, this rank's pairs, built into its runs. */
static int
read_one(struct e3sm_src *src, MPI_Comm comm, int id, const struct e3sm_read_opts *ro,
         struct e3sm_decomps *out)
{
    struct e3sm_decomp *d = &out->d[id - 1];
    struct counts c = {0};
    IOK_TRY(read_dims(src, id, d));
    IOK_TRY(read_sizes(src, id, out, &c));
    int rc = read_counts(src, comm, id, out, &c);
    int64_t *off = NULL, *len, cnt = c.cnt;
    if (rc == IOK_OK) {
        d->all_pairs = c.noff;
        rc = read_pairs(src, id, &c, d, &off);
        d->file_pairs = cnt;
    }
    if (rc == IOK_OK) {
        char why[256];
        len = off + cnt;
        if (c.have_fill && ro->skip_fill)
            cnt = drop_fill(&c, off, &len);
        if (e3sm_runs_build_order(off, len, cnt, d->dims[d->ndims - 1], d->total, !ro->unsorted,
                                  &d->runs, why, sizeof why))
            rc = iok_error(IOK_EUSAGE, "%s: D%d, decomposition ranks %lld-%lld: %s", src->path, id,
                           (long long)c.first, (long long)(c.first + c.count - 1), why);
    }
    free(off);
    free(c.nreqs);
    return rc;
}

static int
read_all(struct e3sm_src *src, MPI_Comm comm, const struct e3sm_read_opts *ro,
         struct e3sm_decomps *out)
{
    char name[64];
    int64_t n;
    for (int id = 1; id <= E3SM_MAX_DECOMP; id++) {
        snprintf(name, sizeof name, "D%d.nreqs", id);
        int r = src->var_len(src, name, &n);
        if (r < 0)
            return -r;
        if (r == 0)
            break;
        out->ndecomp = id;
    }
    if (out->ndecomp == 0)
        return iok_error(IOK_EUSAGE,
                         "%s has no variable D1.nreqs: not an E3SM decomposition file (make one "
                         "from PIO .dat files with iokernels e3sm-decomp)",
                         src->path);
    for (int id = 1; id <= out->ndecomp; id++)
        IOK_TRY(read_one(src, comm, id, ro, out));
    return IOK_OK;
}

/* The readers of the three formats are modules (iokernels/module.h): a run
 * whose map is a .dat file or generated loads none of their libraries. */
static int
open_by_module(enum kind k, struct e3sm_src *s, const char *path, MPI_Comm comm)
{
#ifndef IOK_HAVE_PNETCDF
    if (k == K_CDF)
        return iok_error(IOK_EUSAGE,
                         "%s is a NetCDF classic file but this build has no PnetCDF: use the "
                         "NetCDF-4 (.nc4) or HDF5 (.h5) form of the decomposition",
                         path);
#endif
#ifndef IOK_HAVE_HDF5
    if (k == K_HDF5)
        return iok_error(IOK_EUSAGE,
                         "%s is an HDF5 (or NetCDF-4) file but this build has no parallel HDF5: "
                         "use the NetCDF classic (.nc) form of the decomposition",
                         path);
#endif
    int (*open)(struct e3sm_src *, const char *, MPI_Comm);
    void *sym = k == K_CDF  ? iok_module_symbol("e3sm_read_pnc", "e3sm_src_open_pnc")
                : k == K_BP ? iok_module_symbol("e3sm_read_bp", "e3sm_src_open_bp")
                            : iok_module_symbol("e3sm_read_h5", "e3sm_src_open_h5");
    if (!sym)
        return IOK_EUSAGE; /* the reason is recorded */
    *(void **)&open = sym; /* POSIX: a function's address from dlsym */
    return open(s, path, comm);
}

int
e3sm_src_open(struct e3sm_src *s, const char *path, MPI_Comm comm)
{
    char format[32];
    enum kind k = detect(path, comm, format, sizeof format);
    if (k == K_CDF || k == K_HDF5)
        return open_by_module(k, s, path, comm);
    return iok_error(IOK_EUSAGE, "%s: %s", path,
                     k == K_NONE ? "cannot open it" : "neither NetCDF classic nor HDF5");
}

int
e3sm_decomp_read(const char *path, MPI_Comm comm, struct e3sm_decomps *out)
{
    static const struct e3sm_read_opts all = {0, 0};
    return e3sm_decomp_read_opts(path, comm, &all, out);
}

int
e3sm_decomp_read_opts(const char *path, MPI_Comm comm, const struct e3sm_read_opts *ro,
                      struct e3sm_decomps *out)
{
    memset(out, 0, sizeof *out);
    enum kind k = detect(path, comm, out->format, sizeof out->format);
    switch (k) {
    case K_NONE:
        return iok_error(IOK_EUSAGE, "cannot open decomposition file %s: check the path", path);
    case K_BP:
#ifndef IOK_HAVE_ADIOS2
        return iok_error(IOK_EUSAGE,
                         "%s is an ADIOS BP map and this build has no ADIOS2 (the e3sm kernel "
                         "reads BP maps through the adios2 backend's library): use the same map "
                         "as NetCDF (.nc), NetCDF-4 (.nc4) or HDF5 (.h5), or make one from PIO "
                         ".dat files with iokernels e3sm-decomp",
                         path);
#else
        break;
#endif
    case K_UNKNOWN:
        return iok_error(IOK_EUSAGE,
                         "%s is neither NetCDF nor HDF5: not a decomposition file (PIO .dat "
                         "files are converted with iokernels e3sm-decomp)",
                         path);
    default:
        break;
    }
    struct e3sm_src src = {0};
    IOK_TRY(open_by_module(k, &src, path, comm));
    int rc = read_all(&src, comm, ro, out);
    int crc = src.close(&src);
    if (rc == IOK_OK)
        rc = crc;
    if (rc != IOK_OK) {
        int keep = out->ndecomp;
        e3sm_decomps_free(out);
        out->ndecomp = keep;
    }
    return rc;
}
