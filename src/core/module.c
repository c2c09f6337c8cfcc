/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading the suite's own shared modules (iokernels/module.h). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
     * closed (the I/O libraries it pulls in keep state until exit). */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(last_error, sizeof last_error,
                 "cannot load the module %s (%s): reinstall iokernels, or set "
                 "IOKERNELS_MODULES to the directory holding iok-%s.so",
                 path, why ? why : "unknown reason", name);
        iok_error(IOK_EUSAGE, "%s", last_error);
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
