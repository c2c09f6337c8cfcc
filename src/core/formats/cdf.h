/* SPDX-License-Identifier: BSD-3-Clause */
/* A NetCDF classic (CDF-1/2/5) file: its signature, and its header checked
 * against the file's size before a library parses it (cdf.c). */
#ifndef IOKERNELS_FORMATS_CDF_H
#define IOKERNELS_FORMATS_CDF_H

#include <stdint.h>

/* The version (1, 2 or 5) when the first n bytes of b hold a CDF-1/2/5
 * signature, else 0. */
int iok_cdf_version(const unsigned char *b, int64_t n);

/* IOK_OK if every count and length of path's header fits in the file, else
 * an iok_error (IOK_EUSAGE) naming the file, the field and its byte offset. */
int iok_cdf_header_check(const char *path);
/* The same walk; *data_end: the least bytes the file must hold for the
 * data its header describes (its offsets, sizes and record count), or -1
 * when unknown. The core tells a truncated file by it (file_kind.c). */
int iok_cdf_header_walk(const char *path, int64_t *data_end);

#endif
