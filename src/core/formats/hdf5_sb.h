/* SPDX-License-Identifier: BSD-3-Clause */
/* An HDF5 file's superblock: found by its signature at byte 0 or after a
 * user block (512, 1024, 2048, ... bytes), as the HDF5 library looks for
 * it, and the size it says the file holds (hdf5_sb.c). */
#ifndef IOKERNELS_FORMATS_HDF5_SB_H
#define IOKERNELS_FORMATS_HDF5_SB_H

#include <stdint.h>

/* 1 and *at = the signature's byte offset when the open file fd of size
 * bytes holds an HDF5 superblock, else 0. */
int iok_hdf5_find(int fd, int64_t size, int64_t *at);

/* The bytes the superblock at `at` says the file holds (base address + end
 * of file address), or -1 when unknown. */
int64_t iok_hdf5_eof(int fd, int64_t at);

#endif
