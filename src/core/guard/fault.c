/* SPDX-License-Identifier: BSD-3-Clause */
/* Debug fault injection: IOK_FAULT=PHASE:RANK makes the backend's call of
 * that phase fail on that rank, without calling it, as a library call that
 * failed on one rank while the others may be inside the same collective.
 * PHASE is open (create on a write), define, put (get on a read), wait or
 * close; or written: no call fails, but after a write pass that rank
 * overwrites the closed file with NUL bytes (the check after the write
 * must catch it); RANK a rank of MPI_COMM_WORLD. Read once at start-up; in the pass a
 * disarmed fault costs one branch on a static flag, outside the timed work. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "iokernels/error.h"

int iok_fault_armed;
static enum iok_phase fault_phase;
static char fault_spec[64];
static char fault_name[16]; /* the call as IOK_FAULT names it: put, wait, ... */

static const struct {
    const char *name;
    enum iok_phase phase;
} fault_names[] = {{"open", IOK_PH_OPEN},   {"create", IOK_PH_OPEN},  {"define", IOK_PH_DEFINE},
                   {"put", IOK_PH_POST},    {"get", IOK_PH_POST},     {"wait", IOK_PH_WAIT},
                   {"close", IOK_PH_CLOSE}, {"written", IOK_PH_CHECK}};

int
iok_fault_init(int rank, int nprocs)
{
    const char *e = getenv("IOK_FAULT");
    if (!e || !*e)
        return IOK_OK;
    const char *colon = strchr(e, ':');
    char *end = NULL;
    long r = colon ? strtol(colon + 1, &end, 10) : -1;
    int found = -1;
    for (size_t i = 0; colon && i < sizeof fault_names / sizeof *fault_names; i++)
        if (strlen(fault_names[i].name) == (size_t)(colon - e) &&
            !strncmp(e, fault_names[i].name, (size_t)(colon - e)))
            found = (int)i;
    if (found < 0 || !end || end == colon + 1 || *end || r < 0)
        return iok_error(IOK_EUSAGE,
                         "IOK_FAULT=%s: expected PHASE:RANK, PHASE one of open, define, put, "
                         "wait, close, written (unset it for a normal run)",
                         iok_quote(e));
    if (r >= nprocs) /* a fault nobody injects would let the test pass untested */
        return iok_error(IOK_EUSAGE,
                         "IOK_FAULT=%s: rank %ld, but the job has %d rank%s (0 to %d): name one "
                         "of them",
                         iok_quote(e), r, nprocs, nprocs == 1 ? "" : "s", nprocs - 1);
    snprintf(fault_spec, sizeof fault_spec, "%s", e);
    fault_phase = fault_names[found].phase;
    snprintf(fault_name, sizeof fault_name, "%s", fault_names[found].name);
    iok_fault_armed = r == rank;
    return IOK_OK;
}

int
iok_fault_hit(enum iok_phase p, const char *path)
{
    if (p != fault_phase)
        return 0;
    iok_error(IOK_EIO, "the backend's %s of %s failed (a fault injected by IOK_FAULT=%s)",
              fault_name, path, iok_quote(fault_spec));
    return 1;
}

/* NUL over every byte of a file, or of the files of a folder (ADIOS2's BP) */
static void
zero_path(const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode) && depth < 2) {
        DIR *d = opendir(path);
        for (struct dirent *e; d && (e = readdir(d));) {
            char sub[PATH_MAX];
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
                zero_path(sub, depth + 1);
        }
        if (d)
            closedir(d);
        return;
    }
    int fd = open(path, O_WRONLY);
    static const char zeros[4096];
    for (off_t at = 0; fd >= 0 && at < st.st_size; at += (off_t)sizeof zeros) {
        size_t n = st.st_size - at < (off_t)sizeof zeros ? (size_t)(st.st_size - at) : sizeof zeros;
        if (pwrite(fd, zeros, n, at) != (ssize_t)n)
            break;
    }
    if (fd >= 0)
        close(fd);
}

void
iok_fault_written(const char *path)
{
    if (iok_fault_armed && fault_phase == IOK_PH_CHECK)
        zero_path(path, 0);
}
