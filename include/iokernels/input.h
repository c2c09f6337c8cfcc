/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading a kernel's input text (input files, grid files): rank 0 reads the
 * whole file and broadcasts it, so one reader serves any number of ranks. */
#ifndef IOKERNELS_INPUT_H
#define IOKERNELS_INPUT_H

#include <mpi.h>
#include <stddef.h>

/* Collective. On success *text holds the file's contents (NUL-terminated,
 * the caller frees it). A missing file is an error unless `optional`, when
 * *text is NULL and IOK_OK is returned. Anything else (a directory, no
 * permission, a read error) is IOK_EUSAGE with a message naming the file,
 * on every rank. `what` names the file's role in the message ("input
 * file", "grids file"). */
int iok_read_shared_text(const char *path, const char *what, MPI_Comm comm, int optional,
                         char **text);

/* This rank alone reads a whole text file (NUL-terminated, the caller
 * frees it). A missing or unreadable file is IOK_EUSAGE with a message
 * naming `what` and the path. */
int iok_read_text(const char *path, const char *what, char **text);

/* The directory of the data the suite ships, laid out as in the source tree
 * (data/e3sm/, grids/, campaigns/): $IOKERNELS_DATA when set, else
 * PREFIX/share/iokernels beside an installed binary, else the source tree
 * the binary was built from; "" when none is found. */
const char *iok_data_root(void);

/* The real path of REL (e.g. "../lib/iokernels") taken from the directory of
 * the running binary, into OUT (at least PATH_MAX bytes): 1 if it exists. */
int iok_beside_exe(const char *rel, char *out, size_t len);

#endif
