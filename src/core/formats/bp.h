/* SPDX-License-Identifier: BSD-3-Clause */
/* ADIOS BP data told by their content (bp.c): a BP4/BP5 dataset is a
 * folder whose md.idx begins with its header, a BP3 file ends in its
 * minifooter. */
#ifndef IOKERNELS_FORMATS_BP_H
#define IOKERNELS_FORMATS_BP_H

#include <stdint.h>

/* 1 when the folder path holds md.idx beginning "ADIOS-BP" (BP4 and BP5
 * alike), else 0. */
int iok_bp_dataset(const char *path);

/* 1 when the open file fd of size bytes ends in a BP3 minifooter (its
 * three index offsets in order inside the file, version 3), else 0. */
int iok_bp3_file(int fd, int64_t size);

#endif
