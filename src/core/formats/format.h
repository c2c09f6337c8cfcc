/* SPDX-License-Identifier: BSD-3-Clause */
/* What a path holds, told by its content (format.c over cdf.h, hdf5_sb.h and
 * bp.h): the one set of rules for the core's check of a backend's files
 * (file_kind.c) and for a kernel's input (E3SM's decomposition maps). */
#ifndef IOKERNELS_FORMATS_FORMAT_H
#define IOKERNELS_FORMATS_FORMAT_H

#include <stdint.h>

enum iok_format {
    IOK_FMT_NONE,   /* cannot be read (missing, no permission) */
    IOK_FMT_FOLDER, /* a folder of no format below */
    IOK_FMT_BP,     /* an ADIOS2 BP4/BP5 dataset (a folder) */
    IOK_FMT_BP3,    /* an ADIOS BP3 file */
    IOK_FMT_CDF1,
    IOK_FMT_CDF2,
    IOK_FMT_CDF5,
    IOK_FMT_HDF5,  /* at 0 or after a user block */
    IOK_FMT_EMPTY, /* a file of 0 bytes */
    IOK_FMT_OTHER, /* a file (or a device) of no format below */
};

/* The format of an open regular file of size bytes; *hdf5_at: where the
 * HDF5 superblock is (IOK_FMT_HDF5 only). */
enum iok_format iok_format_of_file(int fd, int64_t size, int64_t *hdf5_at);

/* The format of path, a folder or a file (IOK_FMT_NONE when it cannot be
 * read). */
enum iok_format iok_format_of_path(const char *path);

/* 1 for CDF-1, -2 and -5. */
int iok_format_is_cdf(enum iok_format f);

/* "an HDF5 file", "a NetCDF 64-bit offset file (CDF-2)", ... */
const char *iok_format_name(enum iok_format f);

#endif
