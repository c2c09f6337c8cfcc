/* SPDX-License-Identifier: BSD-3-Clause */
/* NetCDF-Bench geometry: parsing, defaults, validation, decomposition. */
#include "ncb_geom.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

static const char *const axis[NCB_NDIMS] = {"t", "x", "y", "z"};

int
ncb_parse_geom(const char *text, const char *what, int64_t out[NCB_NDIMS])
{
    const char *p = text;
    int n = 0;
    for (;;) {
        if (!isdigit((unsigned char)*p))
            break;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || v <= 0)
            break;
        out[n++] = v;
        p = end;
        if (n == NCB_NDIMS || *p != ':')
            break;
        p++;
    }
    if (n != NCB_NDIMS || *p)
        return iok_error(IOK_EUSAGE,
                         "%s '%s': expected t:x:y:z, four positive integers (e.g. 10:64:64:8)",
                         what, iok_quote(text));
    return IOK_OK;
}

int64_t
ncb_elems(const int64_t dims[NCB_NDIMS])
{
    int64_t n = 1;
    for (int k = 0; k < NCB_NDIMS; k++)
        if (__builtin_mul_overflow(n, dims[k], &n))
            return -1;
    return n;
}

static void
format_geom(const int64_t d[NCB_NDIMS], char *out, size_t len)
{
    snprintf(out, len, "%" PRId64 ":%" PRId64 ":%" PRId64 ":%" PRId64, d[0], d[1], d[2], d[3]);
}

static int
default_geometries(const struct ncb_spec *spec, struct ncb_geom *g)
{
    if (spec->data && spec->data[0]) {
        IOK_TRY(ncb_parse_geom(spec->data, "-d/--data-geometry", g->data));
    } else {
        int64_t d[NCB_NDIMS] = {100, 100 * g->nn, 100 * g->ppn, 10};
        memcpy(g->data, d, sizeof d);
    }
    if (g->data[NCB_X] % g->nn)
        return iok_error(IOK_EUSAGE,
                         "data geometry x = %" PRId64 " is not a multiple of the number of nodes "
                         "nn = %" PRId64 " (-n): change -d or -n",
                         g->data[NCB_X], g->nn);
    if (g->data[NCB_Y] % g->ppn)
        return iok_error(IOK_EUSAGE,
                         "data geometry y = %" PRId64 " is not a multiple of the processes per "
                         "node ppn = %" PRId64 " (-p): change -d or -p",
                         g->data[NCB_Y], g->ppn);
    if (spec->block && spec->block[0]) {
        IOK_TRY(ncb_parse_geom(spec->block, "-b/--block-geometry", g->block));
    } else {
        int64_t b[NCB_NDIMS] = {1, g->data[NCB_X] / g->nn, g->data[NCB_Y] / g->ppn, g->data[NCB_Z]};
        memcpy(g->block, b, sizeof b);
    }
    return IOK_OK;
}

static int
check_block(struct ncb_geom *g)
{
    char d[128], b[128];
    format_geom(g->data, d, sizeof d);
    format_geom(g->block, b, sizeof b);
    /* nn blocks side by side along x, ppn along y, one along z */
    const int64_t per[NCB_NDIMS] = {1, g->nn, g->ppn, 1};
    for (int k = 0; k < NCB_NDIMS; k++) {
        int64_t need;
        if (__builtin_mul_overflow(g->block[k], per[k], &need) || need > g->data[k])
            return iok_error(IOK_EUSAGE,
                             "block geometry %s does not fit the data geometry %s: along %s, "
                             "%" PRId64 " block(s) of %" PRId64 " exceed %" PRId64
                             "; use a smaller -b",
                             b, d, axis[k], per[k], g->block[k], g->data[k]);
    }
    if (g->data[NCB_T] % g->block[NCB_T])
        return iok_error(IOK_EUSAGE,
                         "data geometry t = %" PRId64 " is not a multiple of the block's t = "
                         "%" PRId64 ": each call moves block t time steps; change -d or -b",
                         g->data[NCB_T], g->block[NCB_T]);
    g->steps = g->data[NCB_T] / g->block[NCB_T];
    if (g->steps > INT_MAX)
        return iok_error(IOK_EUSAGE, "%" PRId64 " calls per rank (t / block t) are too many",
                         g->steps);
    /* the block fits the data, so the data's size bounds every other */
    int64_t de = ncb_elems(g->data);
    if (de < 0 || de > INT64_MAX / 4)
        return iok_error(IOK_EUSAGE, "data geometry %s is too large (more than 2^63 bytes)", d);
    return IOK_OK;
}

static int
check_chunk(const struct ncb_spec *spec, struct ncb_geom *g)
{
    if (!spec->chunk || !spec->chunk[0])
        return IOK_OK;
    g->chunked = 1;
    if (!strcmp(spec->chunk, "auto")) {
        memcpy(g->chunk, g->block, sizeof g->chunk);
        return IOK_OK;
    }
    IOK_TRY(ncb_parse_geom(spec->chunk, "-c/--chunk-geometry (or auto)", g->chunk));
    char c[128], d[128];
    format_geom(g->chunk, c, sizeof c);
    format_geom(g->data, d, sizeof d);
    for (int k = g->unlimited ? NCB_X : NCB_T; k < NCB_NDIMS; k++)
        if (g->chunk[k] > g->data[k])
            return iok_error(IOK_EUSAGE,
                             "chunk geometry %s exceeds the data geometry %s along %s: use a "
                             "smaller -c (or -c auto)",
                             c, d, axis[k]);
    int64_t ce = ncb_elems(g->chunk);
    if (ce < 0 || ce >= ((int64_t)1 << 32) / 4)
        return iok_error(IOK_EUSAGE,
                         "chunk geometry %s holds 4 GiB or more: HDF5 chunks must be smaller; "
                         "use a smaller -c",
                         c);
    return IOK_OK;
}

int
ncb_resolve(const struct ncb_spec *spec, int nprocs, struct ncb_geom *g)
{
    memset(g, 0, sizeof *g);
    g->unlimited = spec->unlimited;
    if (spec->nn < 0 || spec->ppn < 0)
        return iok_error(IOK_EUSAGE,
                         "-n/--nn and -p/--ppn must be positive, got %" PRId64 " and %" PRId64,
                         spec->nn, spec->ppn);
    g->nn = spec->nn ? spec->nn : 1;
    if (spec->ppn) {
        g->ppn = spec->ppn;
    } else if (nprocs % g->nn == 0) {
        g->ppn = nprocs / g->nn;
    } else {
        return iok_error(IOK_EUSAGE,
                         "%d ranks do not split over nn = %" PRId64 " nodes: run a multiple of "
                         "nn ranks or give -n/-p",
                         nprocs, g->nn);
    }
    if (g->nn > INT_MAX / g->ppn || g->nn * g->ppn != nprocs)
        return iok_error(IOK_EUSAGE,
                         "%d ranks but nn x ppn = %" PRId64 " x %" PRId64
                         ": run nn * ppn ranks or change -n/-p",
                         nprocs, g->nn, g->ppn);
    IOK_TRY(default_geometries(spec, g));
    IOK_TRY(check_block(g));
    return check_chunk(spec, g);
}

void
ncb_block_start(const struct ncb_geom *g, int rank, int64_t start[NCB_NDIMS])
{
    start[NCB_T] = 0;
    start[NCB_X] = g->block[NCB_X] * (rank / g->ppn);
    start[NCB_Y] = g->block[NCB_Y] * (rank % g->ppn);
    start[NCB_Z] = 0;
}

int
ncb_read_source(int rank, int nprocs)
{
    return (rank + 1) % nprocs;
}

void
ncb_pretty_size(int64_t bytes, char *out, size_t len)
{
    static const char *const units[] = {"", "k", "M", "G", "T", "P", "E"};
    int digits = 1;
    for (int64_t v = bytes; v >= 10; v /= 10)
        digits++;
    int e = (digits - 1) / 3;
    int64_t unit = 1;
    for (int i = 0; i < e; i++)
        unit *= 1000;
    int64_t whole = bytes / unit, tenth = e ? (bytes % unit) / (unit / 10) : 0;
    snprintf(out, len, "%" PRId64 ".%" PRId64 " %sB", whole, tenth, units[e]);
}
