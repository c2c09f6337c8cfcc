/* SPDX-License-Identifier: BSD-3-Clause */
/* E3SM decompositions: which elements of a decomposed array each rank
 * accesses, as sorted (offset, length) runs. Pure parts (the assignment of
 * decomposition ranks to ranks, sorting and merging of runs, validation) are
 * here and unit-tested; e3sm_decomp_read.c reads the files. */
#ifndef IOKERNELS_E3SM_DECOMP_H
#define IOKERNELS_E3SM_DECOMP_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#define E3SM_MAX_DECOMP 6
#define E3SM_MAX_DDIMS 4

/* (offset, length) pairs of elements of a flattened decomposed array: one
 * rank's sorted, merged runs, never crossing a row of its fastest dimension,
 * as e3sm_runs_build makes them; or a growable list of pairs as given
 * (e3sm_runs_add: the generator's, before they are built into runs). */
struct e3sm_runs {
    int64_t n, cap; /* cap: the room allocated */
    int64_t *off, *len;
    int64_t nelems; /* sum of len */
};

struct e3sm_decomp {
    int ndims;
    int64_t dims[E3SM_MAX_DDIMS]; /* C order: dims[ndims-1] is the fastest */
    int64_t total;                /* product of dims */
    int64_t file_pairs;           /* (offset, length) pairs of the file for this rank */
    int64_t fill_pairs;           /* of which after fill_starts (gap fillers) */
    int64_t all_pairs;            /* pairs of all decomposition ranks (Dn.total_nreqs) */
    struct e3sm_runs runs;        /* this rank's runs */
};

enum e3sm_layout { E3SM_LAYOUT_MAP, E3SM_LAYOUT_LEGACY };

struct e3sm_decomps {
    int ndecomp;
    int64_t decomp_nprocs;
    enum e3sm_layout layout; /* map files have Dn.fill_starts / Dn.raw_* */
    char format[32];         /* "CDF-5", "HDF5", ... as detected */
    struct e3sm_decomp d[E3SM_MAX_DECOMP];
};

/* The decomposition ranks [*first, *first + *count) this rank carries, as
 * the original: contiguous blocks of decomp_nprocs / nprocs, the first
 * decomp_nprocs % nprocs ranks one more; ranks past decomp_nprocs get none. */
void e3sm_assign(int64_t decomp_nprocs, int nprocs, int rank, int64_t *first, int64_t *count);

/* Builds sorted runs from n (offset, length) pairs of an array of `total`
 * elements whose fastest dimension has `fastest` elements: pairs crossing a
 * row are split, then sorted by offset and adjacent ones merged, never
 * across a row. Returns 0, or -1 with a one-line reason in err (an offset
 * out of range, a length below 1, overlapping pairs). */
int e3sm_runs_build(const int64_t *off, const int64_t *len, int64_t n, int64_t fastest,
                    int64_t total, struct e3sm_runs *out, char *err, size_t errlen);
/* The same; with sorted 0 the pieces stay in file order, unmerged (the
 * original's -q), and are checked for overlap all the same. */
int e3sm_runs_build_order(const int64_t *off, const int64_t *len, int64_t n, int64_t fastest,
                          int64_t total, int sorted, struct e3sm_runs *out, char *err,
                          size_t errlen);

/* Collective: 0 when no element is in the runs of two ranks, else -1 with
 * the first overlap found in err (on the rank that found it; the caller
 * agrees). Cost: one MPI_Alltoallv of the runs and a sort per rank. */
int e3sm_runs_check_disjoint(const struct e3sm_runs *r, int64_t total, MPI_Comm comm, char *err,
                             size_t errlen);

/* Appends one pair, growing the list: 0, or -1 out of memory. */
int e3sm_runs_add(struct e3sm_runs *r, int64_t off, int64_t len);
void e3sm_runs_free(struct e3sm_runs *r);
void e3sm_decomps_free(struct e3sm_decomps *d);

/* Reads a decomposition file (map layout in NetCDF classic, NetCDF-4 or
 * HDF5; legacy layout in NetCDF classic) collectively: every rank reads the
 * per-rank counts and only its own pairs. Returns an iok_status with the
 * error recorded (on the ranks that saw it); the caller agrees. */
int e3sm_decomp_read(const char *path, MPI_Comm comm, struct e3sm_decomps *out);

/* How the maps are used, as the original's options: skip_fill drops the
 * pairs after Dn.fill_starts (the gap fillers; the original without -u),
 * unsorted keeps each rank's pairs in file order (-q). */
struct e3sm_read_opts {
    int skip_fill, unsorted;
};
int e3sm_decomp_read_opts(const char *path, MPI_Comm comm, const struct e3sm_read_opts *ro,
                          struct e3sm_decomps *out);

#endif
