/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading the suite's own shared modules (iokernels/module.h). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "iokernels/error.h"
#include "iokernels/input.h"
#include "iokernels/module.h"

#ifndef IOK_BUILD_MODULE_DIR
#define IOK_BUILD_MODULE_DIR "."
#endif

const char *
iok_module_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0])
        return dir;
    const char *env = getenv("IOKERNELS_MODULES");
    if (env && env[0]) {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    if (!iok_beside_exe("../lib/iokernels", dir, sizeof dir))
        snprintf(dir, sizeof dir, "%s", IOK_BUILD_MODULE_DIR);
    return dir;
}

/* The last failure's message, kept whatever iok_error already holds. */
static char last_error[1024 + 2 * PATH_MAX];

const char *
iok_module_error(void)
{
    return last_error;
}

void *
iok_module_symbol(const char *name, const char *symbol)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/iok-%s.so", iok_module_dir(), name);
    /* RTLD_NOW: a module missing a symbol fails here, not mid-run; never
     * closed (the I/O libraries it pulls in keep state until exit).
     * RTLD_GLOBAL: the I/O library the module pulls in joins the global
     * scope, where a preloaded tracer (Darshan's PnetCDF and HDF5 modules)
     * finds it with dlsym(RTLD_NEXT): with RTLD_LOCAL every rank of a
     * traced pnetcdf, netcdf4 or hdf5 run failed ("Darshan failed to map
     * symbol: ncmpi_create"). A run loads one backend module (and at most
     * one reader of E3SM's maps), so no two copies of a library meet. */
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *why = dlerror();
        unsigned long long kib;
        int short_of_memory = iok_limits_as_short(&kib); /* "failed to map segment" */
        if (short_of_memory)
            snprintf(last_error, sizeof last_error,
                     "cannot load the module %s (%s): out of memory: the process's address-space "
                     "limit, ulimit -v %llu KiB, leaves less than %d MiB; raise it",
                     path, why ? why : "unknown reason", kib, IOK_AS_PROBE_MIB);
        else
            snprintf(last_error, sizeof last_error,
                     "cannot load the module %s (%s): reinstall iokernels, or set "
                     "IOKERNELS_MODULES to the directory holding iok-%s.so",
                     path, why ? why : "unknown reason", name);
        iok_error(short_of_memory ? IOK_EIO : IOK_EUSAGE, "%s", last_error);
        return NULL;
    }
    void *sym = dlsym(h, symbol);
    if (!sym) {
        snprintf(last_error, sizeof last_error,
                 "the module %s lacks %s: it comes from another version of iokernels", path,
                 symbol);
        iok_error(IOK_EUSAGE, "%s", last_error);
    }
    return sym;
}
