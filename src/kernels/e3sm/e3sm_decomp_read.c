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

/* Reads one decomposition, id 1-based. */
static int
read_one(struct e3sm_src *src, MPI_Comm comm, int id, const struct e3sm_read_opts *ro,
         struct e3sm_decomps *out)
{
    struct e3sm_decomp *d = &out->d[id - 1];
    const char *path = src->path;
    char name[64];
    int rank, nprocs, r;
    int64_t n = 0, noff = 0, nlen = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);

    snprintf(name, sizeof name, "D%d.dims", id);
    r = src->att(src, name, d->dims, E3SM_MAX_DDIMS);
    if (r < 0)
        return -r;
    if (r == 0)
        return iok_error(IOK_EUSAGE,
                         "%s: missing global attribute %s (the dimensions of decomposition D%d)",
                         path, name, id);
    d->ndims = r;
    d->total = 1;
    for (int k = 0; k < d->ndims; k++) {
        if (d->dims[k] < 1)
            return iok_error(IOK_EUSAGE, "%s: %s[%d] = %lld: dimensions must be positive", path,
                             name, k, (long long)d->dims[k]);
        d->total *= d->dims[k];
    }
    const char *what[3] = {"nreqs", "offsets", "lengths"};
    int64_t *lens[3] = {&n, &noff, &nlen};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "D%d.%s", id, what[i]);
        r = src->var_len(src, name, lens[i]);
        if (r < 0)
            return -r;
        if (r == 0)
            return iok_error(IOK_EUSAGE,
                             "%s: missing variable %s: an E3SM decomposition file holds "
                             "Dn.nreqs, Dn.offsets and Dn.lengths for each decomposition",
                             path, name);
    }
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
    /* per decomposition rank: requests, where the fill requests start, raw counts */
    int64_t *nreqs = calloc((size_t)(3 * n + 1), sizeof *nreqs), *fill = nreqs + n,
            *raw = nreqs + 2 * n;
    if (!nreqs)
        return iok_error(IOK_EIO, "%s: out of memory for D%d's %lld request counts", path, id,
                         (long long)n);
    int have_fill = 0, have_raw = 0, rc = IOK_OK;
    snprintf(name, sizeof name, "D%d.nreqs", id);
    rc = src->read(src, name, 0, n, nreqs);
    if (rc == IOK_OK)
        rc = read_optional(src, path, id, "fill_starts", n, fill, &have_fill);
    if (rc == IOK_OK)
        rc = read_optional(src, path, id, "raw_nreqs", n, raw, &have_raw);
    if (id == 1)
        out->layout = have_fill ? E3SM_LAYOUT_MAP : E3SM_LAYOUT_LEGACY;
    int64_t sum = 0, first, count, start = 0, cnt = 0;
    e3sm_assign(n, nprocs, rank, &first, &count);
    for (int64_t i = 0; rc == IOK_OK && i < n; i++) {
        if (nreqs[i] < 0 || nreqs[i] > noff - sum)
            rc = iok_error(IOK_EUSAGE,
                           "%s: D%d.nreqs[%lld] = %lld: the counts must be 0 or more and add up "
                           "to the %lld entries of D%d.offsets",
                           path, id, (long long)i, (long long)nreqs[i], (long long)noff, id);
        else if (have_fill && (fill[i] < 0 || fill[i] > nreqs[i]))
            rc = iok_error(IOK_EUSAGE, "%s: D%d.fill_starts[%lld] = %lld is outside 0..%lld", path,
                           id, (long long)i, (long long)fill[i], (long long)nreqs[i]);
        if (i < first)
            start += nreqs[i];
        else if (i < first + count)
            cnt += nreqs[i];
        sum += nreqs[i];
    }
    if (rc != IOK_OK) {
        free(nreqs);
        return rc;
    }
    if (sum != noff)
        rc = iok_error(IOK_EUSAGE,
                       "%s: D%d.nreqs sums to %lld requests but D%d.offsets holds %lld: the "
                       "decomposition file is inconsistent",
                       path, id, (long long)sum, id, (long long)noff);
    d->all_pairs = noff;
    int64_t *off = malloc((size_t)(2 * cnt + 1) * sizeof *off), *len = off + cnt;
    if (!off && rc == IOK_OK)
        rc = iok_error(IOK_EIO, "%s: out of memory for D%d's %lld requests", path, id,
                       (long long)cnt);
    if (rc == IOK_OK) {
        snprintf(name, sizeof name, "D%d.offsets", id);
        rc = src->read(src, name, start, cnt, off);
    }
    if (rc == IOK_OK) {
        snprintf(name, sizeof name, "D%d.lengths", id);
        rc = src->read(src, name, start, cnt, len);
    }
    /* each pair in range; each rank's real requests add up to its raw count */
    int64_t at = 0;
    for (int64_t dr = first; rc == IOK_OK && dr < first + count; dr++) {
        int64_t real = have_fill ? fill[dr] : nreqs[dr], elems = 0;
        for (int64_t j = 0; rc == IOK_OK && j < nreqs[dr]; j++, at++) {
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
        if (rc == IOK_OK && have_raw && elems != raw[dr])
            rc = iok_error(IOK_EUSAGE,
                           "%s: D%d decomposition rank %lld: its lengths sum to %lld elements "
                           "but D%d.raw_nreqs says %lld",
                           path, id, (long long)dr, (long long)elems, id, (long long)raw[dr]);
    }
    d->file_pairs = cnt;
    if (rc == IOK_OK && have_fill && ro->skip_fill) { /* keep each rank's real pairs */
        int64_t kept = 0, from = 0;
        for (int64_t dr = first; dr < first + count; from += nreqs[dr], dr++)
            for (int64_t j = 0; j < fill[dr]; j++, kept++) {
                off[kept] = off[from + j];
                len[kept] = len[from + j];
            }
        memmove(off + kept, len, (size_t)kept * sizeof *len);
        len = off + kept;
        cnt = kept;
    }
    if (rc == IOK_OK) {
        char why[256];
        if (e3sm_runs_build_order(off, len, cnt, d->dims[d->ndims - 1], d->total, !ro->unsorted,
                                  &d->runs, why, sizeof why))
            rc = iok_error(IOK_EUSAGE, "%s: D%d, decomposition ranks %lld-%lld: %s", path, id,
                           (long long)first, (long long)(first + count - 1), why);
    }
    free(off);
    free(nreqs);
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
