/* Loading the suite's own shared modules (iokernels/module.h). */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iokernels/error.h"
#include "iokernels/module.h"

#ifndef IOK_BUILD_MODULE_DIR
#define IOK_BUILD_MODULE_DIR "."
#endif

static int
is_dir(const char *d)
{
    return d[0] && access(d, X_OK) == 0;
}

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
    char exe[PATH_MAX], guess[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        snprintf(guess, sizeof guess, "%s/../lib/iokernels", dirname(exe));
        if (is_dir(guess) && realpath(guess, dir))
            return dir;
    }
    snprintf(dir, sizeof dir, "%s", IOK_BUILD_MODULE_DIR);
    return dir;
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
        iok_error(IOK_EUSAGE,
                  "cannot load the module %s (%s): reinstall iokernels, or set "
                  "IOKERNELS_MODULES to the directory holding iok-%s.so",
                  path, why ? why : "unknown reason", name);
        return NULL;
    }
    void *sym = dlsym(h, symbol);
    if (!sym)
        iok_error(IOK_EUSAGE, "the module %s lacks %s: it comes from another version of iokernels",
                  path, symbol);
    return sym;
}
