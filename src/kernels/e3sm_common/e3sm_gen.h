/* SPDX-License-Identifier: BSD-3-Clause */
/* E3SM decompositions generated from the models' structure instead of read
 * from a map file, for any resolution and number of ranks:
 *
 *   f:ne=30,procs=512        atmosphere: cubed sphere, spectral elements
 *   g:cells=285,procs=16     ocean: MPAS-like quasi-uniform mesh
 *   i:nlat=96,nlon=144       land: lat-lon grid, land gridcells only
 *
 * Every parameter defaults to the shipped 16-rank case (data/e3sm). The
 * result is what e3sm_decomp_read() makes of a map file: per decomposition
 * the global dimensions and the sorted, merged runs of the decomposition
 * ranks this rank carries. Each rank builds only its own part; the global
 * tables (curve order, chunk owners) are O(elements) and built by each. */
#ifndef IOKERNELS_E3SM_GEN_H
#define IOKERNELS_E3SM_GEN_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "e3sm_decomp.h"
#include "e3sm_gen_case.h"

/* The text of a --generate (CASE:KEY=VALUE,...) at most, with its NUL */
#define E3SM_GEN_SPECLEN 256

/* Parses "f:ne=30,procs=512" (g:..., i:...); unknown keys and bad values
 * are refused with a reason. Then sets the dimensions and builds the case's
 * tables (e3sm_gen_free releases them, also after a failure). */
int e3sm_gen_parse(const char *spec, struct e3sm_gen *g, char *err, size_t errlen);
void e3sm_gen_free(struct e3sm_gen *g);

/* Raw pairs of decomposition d (0-based) of decomposition rank r, appended
 * to out (unsorted, unmerged: e3sm_runs_build merges them). Returns 0 or -1
 * (out of memory). */
int e3sm_gen_pairs(const struct e3sm_gen *g, int d, int64_t r, struct e3sm_runs *out);

/* The runs of decomposition d of decomposition ranks [first, first+count). */
int e3sm_gen_runs(const struct e3sm_gen *g, int d, int64_t first, int64_t count,
                  struct e3sm_runs *out, int64_t *pairs, char *err, size_t errlen);

/* This rank's part, as e3sm_decomp_read() returns it (collective only in
 * that every rank calls it; no communication). iok_status. */
int e3sm_gen_decomps(const struct e3sm_gen *g, MPI_Comm comm, struct e3sm_decomps *out);

/* Parses spec and builds this rank's part into out; label gets "generated
 * SPEC" (all parameters spelled out). iok_status, the same on every rank. */
int e3sm_gen_load(const char *spec, MPI_Comm comm, struct e3sm_decomps *out, char *label,
                  size_t len);

/* Decomposition d of all ranks as the contents of a map file (e3sm_dat.h;
 * with want_raw the elements before merging too). 0, or -1 with a reason
 * (sizes past a map file's 32-bit integers). */
struct e3sm_dat;
int e3sm_gen_dat(const struct e3sm_gen *g, int d, int want_raw, struct e3sm_dat *out, char *err,
                 size_t errlen);

#endif
