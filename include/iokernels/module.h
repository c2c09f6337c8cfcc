/* SPDX-License-Identifier: BSD-3-Clause */
/* Parts of the suite linked against a heavy I/O library (the backends other
 * than null and mpiio, E3SM's map readers) are shared modules loaded on
 * first use, so that a run loads only the libraries it uses: a BTIO run on
 * MPI-IO maps no HDF5, NetCDF or ADIOS2, and its memory is MPI's and ours. */
#ifndef IOKERNELS_MODULE_H
#define IOKERNELS_MODULE_H

/* The symbol SYMBOL of module NAME (the file iok-NAME.so in the module
 * directory), loaded on the first call and kept. NULL when the module or the
 * symbol is missing; then iok_error has recorded the reason (IOK_EUSAGE:
 * the path tried and the loader's message). */
void *iok_module_symbol(const char *name, const char *symbol);
/* The message of the last failure of iok_module_symbol (the module's own
 * path and the loader's reason), kept even when iok_error held an earlier
 * message. */
const char *iok_module_error(void);

/* The directory the modules are loaded from: $IOKERNELS_MODULES, else
 * PREFIX/lib/iokernels beside an installed binary, else the build tree's. */
const char *iok_module_dir(void);

#endif
