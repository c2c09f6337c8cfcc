/* SPDX-License-Identifier: BSD-3-Clause */
/* NetCDF-Bench geometry: the 4-D data (t:x:y:z), the block each rank moves
 * per call, the optional chunk shape, and the rank layout nn x ppn. Pure
 * functions, unit-tested (tests/unit/test_ncb_geom.c). */
#ifndef NCB_GEOM_H
#define NCB_GEOM_H

#include <stddef.h>
#include <stdint.h>

enum { NCB_T, NCB_X, NCB_Y, NCB_Z, NCB_NDIMS };

/* What the user gave: text as typed ("" = not given), nn/ppn (0 = not given). */
struct ncb_spec {
    const char *data, *block, *chunk; /* "t:x:y:z"; chunk also "auto" */
    int64_t nn, ppn;
    int unlimited;
};

struct ncb_geom {
    int64_t nn, ppn;
    int64_t data[NCB_NDIMS], block[NCB_NDIMS], chunk[NCB_NDIMS]; /* chunk all 0: none */
    int chunked, unlimited;
    int64_t steps; /* data t / block t: one call per step */
};

/* Parses "t:x:y:z": exactly four positive integers. `what` names the option
 * in the error ("-d/--data-geometry"). IOK_OK or IOK_EUSAGE (error recorded). */
int ncb_parse_geom(const char *text, const char *what, int64_t out[NCB_NDIMS]);

/* Resolves defaults and checks everything before any I/O, for `nprocs` ranks:
 *   nn, ppn: as given, else the caller's environment defaults (see ncbench.c);
 *   nprocs == nn * ppn;
 *   data (100, 100 nn, 100 ppn, 10), block (1, x/nn, y/ppn, z) by default;
 *   x % nn == 0, y % ppn == 0, t % block t == 0, block within the data
 *   (nn blocks along x, ppn along y); chunk "auto" = block, else within the
 *   data (t unbounded with an unlimited time) and below 4 GiB;
 *   no size overflows. */
int ncb_resolve(const struct ncb_spec *spec, int nprocs, struct ncb_geom *g);

/* Start of rank r's block at t = 0: (0, bx (r / ppn), by (r % ppn), 0). */
void ncb_block_start(const struct ncb_geom *g, int rank, int64_t start[NCB_NDIMS]);

/* The rank whose block rank r reads: the next one, (r + 1) % nprocs, so that
 * no rank reads what it wrote itself (its own page cache). */
int ncb_read_source(int rank, int nprocs);

/* Elements of a geometry (product of its four sides). */
int64_t ncb_elems(const int64_t dims[NCB_NDIMS]);

/* The original's size in decimal units, truncated to one decimal:
 * 10485760 -> "10.4 MB", 524288 -> "524.2 kB", 128 -> "128.0 B". */
void ncb_pretty_size(int64_t bytes, char *out, size_t len);

#endif
