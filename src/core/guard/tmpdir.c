/* SPDX-License-Identifier: BSD-3-Clause */
/* TMPDIR, checked before MPI_Init, which reads it: OpenMPI keeps its
 * session folder there in a process started without mpiexec, or by a
 * launcher that leaves that to each process (srun). A missing TMPDIR was
 * created by MPI_Init and left behind; a read-only one, or a file, made it
 * print some 50 lines of its own and fail, and no line of the suite's.
 * (Under OpenMPI's mpiexec the launcher meets TMPDIR first: it creates a
 * missing one itself and fails on the others before any rank starts.) An
 * empty TMPDIR is an unset one: /tmp. The path is named whole, as other
 * paths are (iok_error keeps it on one line). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "iokernels/error.h"

int
iok_tmpdir_check(void)
{
    const char *t = getenv("TMPDIR");
    struct stat st;
    if (!t || !*t)
        return IOK_OK;
    if (stat(t, &st) != 0)
        return iok_error(IOK_EUSAGE,
                         "TMPDIR=%s: %s: the MPI library keeps its session files there; create "
                         "that folder, point TMPDIR at a writable one, or unset it (/tmp)",
                         t, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return iok_error(IOK_EUSAGE,
                         "TMPDIR=%s is not a folder: the MPI library keeps its session files "
                         "there; point TMPDIR at a writable folder, or unset it (/tmp)",
                         t);
    if (access(t, W_OK | X_OK) != 0)
        return iok_error(IOK_EUSAGE,
                         "TMPDIR=%s is not writable (%s): the MPI library keeps its session files "
                         "there; point TMPDIR at a writable folder, or unset it (/tmp)",
                         t, strerror(errno));
    return IOK_OK;
}

int
iok_launcher_rank(void)
{
    /* OpenMPI's mpiexec, MPICH's hydra, PMIx launchers, Slurm's srun */
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                        "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = getenv(names[i]);
        if (v && *v >= '0' && *v <= '9')
            return atoi(v);
    }
    return -1;
}
