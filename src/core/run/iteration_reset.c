/* SPDX-License-Identifier: BSD-3-Clause */
/* Like-for-like iterations: every write pass starts from the state the
 * first one did. The first iteration creates its file (it did not exist);
 * a later one would otherwise truncate it inside the timed create, which a
 * file system may make slower (ext4's auto_da_alloc flushes a file
 * truncated to zero at its close: 0.8-1.0 s of a 240 MiB BTIO write) or
 * faster (blocks already allocated). So before iterations 2.. the previous
 * iteration's file is removed, untimed, as IOR removes its file after each
 * repetition. Only a file the run created: a file that existed before the
 * run (--overwrite) stays, and every iteration truncates it alike.
 * IOK_REWRITE_IN_PLACE=1 keeps the previous iteration's file (the state
 * before this was done; tests show the difference with it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/run/run.h"
#include "iokernels/error.h"

int
iok_iteration_reset(const struct iok_run *run, const struct iok_plan *plan, int file, int iteration,
                    const struct iok_result *res, char *state, size_t len)
{
    const struct iok_file_plan *fp = &plan->files[file];
    const struct iok_pass_result *first = NULL;
    for (int j = 0; j < res->npasses && !first; j++)
        if (res->pass[j].iteration == 0 && res->pass[j].file == file &&
            res->pass[j].op == IOK_OP_WRITE)
            first = &res->pass[j];
    if (run->backend->caps & IOK_CAP_NOIO) {
        snprintf(state, len, "no file (backend moves no bytes)");
        return IOK_OK;
    }
    if (iteration == 0 || !first) {
        snprintf(state, len, "%s", "");
        return IOK_OK; /* the pass says what it found (engine_files.c) */
    }
    if (!first->created) {
        snprintf(state, len,
                 "existing file: not the run's, truncated by the create as in every "
                 "iteration (--overwrite)");
        return IOK_OK;
    }
    if (iok_env_rewrite_in_place()) { /* env.c */
        snprintf(state, len, "previous iteration's file rewritten in place (IOK_REWRITE_IN_PLACE)");
        return IOK_OK;
    }
    int rc = IOK_OK;
    if (run->rank == 0 || fp->per_rank) {
        char path[IOK_OPT_STRLEN + 16];
        if (fp->per_rank)
            snprintf(path, sizeof path, "%s.%d", fp->path, run->rank);
        else
            snprintf(path, sizeof path, "%s", fp->path);
        if (iok_remove_output(path) != 0 && errno != ENOENT)
            rc = iok_error(IOK_EIO,
                           "cannot remove %s, the previous iteration's output, before iteration "
                           "%d (%s)",
                           path, iteration + 1, strerror(errno));
    }
    snprintf(state, len, "previous iteration's file removed (untimed)");
    return iok_agree(run->comm, rc);
}
