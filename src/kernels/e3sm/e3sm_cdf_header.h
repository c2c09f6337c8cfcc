/* SPDX-License-Identifier: BSD-3-Clause */
/* A NetCDF classic (CDF-1/2/5) header checked against the file's size before
 * a library parses it (e3sm_cdf_header.c). */
#ifndef IOKERNELS_E3SM_CDF_HEADER_H
#define IOKERNELS_E3SM_CDF_HEADER_H

#include <stdint.h>

/* IOK_OK if every count and length of path's header fits in the file, else
 * an iok_error (IOK_EUSAGE) naming the file, the field and its byte offset. */
int e3sm_cdf_header_check(const char *path);
/* The same walk; *data_end: the least bytes the file must hold for the
 * data its header describes (its offsets, sizes and record count), or -1
 * when unknown. The core uses it to tell a truncated file (file_kind.c). */
int e3sm_cdf_header_walk(const char *path, int64_t *data_end);

#endif
