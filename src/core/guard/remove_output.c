/* SPDX-License-Identifier: BSD-3-Clause */
/* Removing what a run wrote, when the kernel's original removes its output
 * (E3SM-IO without -k): a file, or a directory of files as ADIOS2 writes
 * (BP5: data.N, md.N, md.idx, mmd.0, profiling.json). Only one level: a
 * directory holding directories is left as it is, never walked. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iokernels/kernel.h"

int
iok_remove_output(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return -1;
    if (!S_ISDIR(sb.st_mode))
        return unlink(path);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *e;
    char file[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        if (lstat(file, &sb) == 0 && !S_ISDIR(sb.st_mode))
            unlink(file);
    }
    closedir(d);
    return rmdir(path);
}
