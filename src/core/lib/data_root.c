/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the data the suite ships lives (E3SM schemas and maps, grids,
 * campaigns): beside an installed binary, PREFIX/share/iokernels; for a
 * binary in its build tree, the source tree it was built from. The binary
 * finds it from its own location, so an installed tree can be moved. */
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iokernels/input.h"

#ifndef IOK_SOURCE_DIR
#define IOK_SOURCE_DIR "."
#endif

/* The file whose presence says "this is the suite's data root". */
#define MARKER "/data/e3sm/variables.tsv"

static int
holds_data(const char *root)
{
    char probe[2 * PATH_MAX];
    snprintf(probe, sizeof probe, "%s" MARKER, root);
    return access(probe, R_OK) == 0;
}

int
iok_beside_exe(const char *rel, char *out, size_t len)
{
    char exe[PATH_MAX], guess[2 * PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || len < PATH_MAX)
        return 0;
    exe[n] = '\0';
    snprintf(guess, sizeof guess, "%s/%s", dirname(exe), rel);
    return access(guess, R_OK) == 0 && realpath(guess, out) != NULL;
}

const char *
iok_data_root(void)
{
    static char root[PATH_MAX];
    static int done;
    if (done)
        return root;
    done = 1;
    const char *env = getenv("IOKERNELS_DATA");
    if (env && env[0]) {
        snprintf(root, sizeof root, "%s", env);
        return root;
    }
    char guess[PATH_MAX];
    if (iok_beside_exe("../share/iokernels", guess, sizeof guess) && holds_data(guess)) {
        snprintf(root, sizeof root, "%s", guess);
        return root;
    }
    if (holds_data(IOK_SOURCE_DIR)) {
        snprintf(root, sizeof root, "%s", IOK_SOURCE_DIR);
        return root;
    }
    root[0] = '\0'; /* nothing found: callers name the file they could not read */
    return root;
}
