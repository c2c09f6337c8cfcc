/* SPDX-License-Identifier: BSD-3-Clause */
/* The planned files' paths, checked before any is created: a name no file
 * system takes (past NAME_MAX) is a usage error naming the file, not a
 * library's failure at its create, and a path the MPI library's
 * shared-file-pointer component cannot take is refused (mpiio_layer.c);
 * a name OMPIO cannot open as given is handed over as "./NAME". */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "iokernels/error.h"

/* The name of the file each planned path stands for, as its highest rank
 * opens it (a file per process: "<path>.<rank>"). */
static void
file_name(const struct iok_run *run, const struct iok_file_plan *fp, char *out, size_t len)
{
    if (fp->per_rank)
        snprintf(out, len, "%s.%d", fp->path, run->nprocs - 1);
    else
        snprintf(out, len, "%s", fp->path);
}

int
iok_check_plan_paths(const struct iok_run *run, const struct iok_plan *plan)
{
    for (int f = 0; f < plan->nfiles; f++) {
        const struct iok_file_plan *fp = &plan->files[f];
        char path[IOK_OPT_STRLEN + 16];
        file_name(run, fp, path, sizeof path);
        const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
        if (strlen(name) > NAME_MAX)
            return iok_error(IOK_EUSAGE,
                             "file %s: its name is %zu bytes, more than NAME_MAX (%d) a file "
                             "name may have: shorten it",
                             path, strlen(name), NAME_MAX);
        /* the backends that open through MPI-IO: those that take its hints */
        if (run->backend->caps & IOK_CAP_HINTS)
            IOK_TRY(iok_mpiio_path_check(path, fp->per_rank ? 1 : run->nprocs, "file"));
    }
    return IOK_OK;
}

void
iok_plan_mpiio_names(const struct iok_run *run, struct iok_plan *plan)
{
    if (!(run->backend->caps & IOK_CAP_HINTS)) /* ADIOS2, null: no MPI-IO open */
        return;
    for (int f = 0; f < plan->nfiles; f++)
        if (!plan->files[f].per_rank) /* "<path>.<rank>" is longer */
            iok_mpiio_name(plan->files[f].path, sizeof plan->files[f].path);
}
