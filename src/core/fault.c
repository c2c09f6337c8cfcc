/* SPDX-License-Identifier: BSD-3-Clause */
/* Debug fault injection: IOK_FAULT=PHASE:RANK makes the backend's call of
 * that phase fail on that rank, without calling it, as a library call that
 * failed on one rank while the others may be inside the same collective.
 * PHASE is open (create on a write), define, put (get on a read), wait or
 * close; RANK a rank of MPI_COMM_WORLD. Read once at start-up; in the pass a
 * disarmed fault costs one branch on a static flag, outside the timed work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "iokernels/error.h"

int iok_fault_armed;
static enum iok_phase fault_phase;
static char fault_spec[64];
static char fault_name[16]; /* the call as IOK_FAULT names it: put, wait, ... */

static const struct {
    const char *name;
    enum iok_phase phase;
} fault_names[] = {{"open", IOK_PH_OPEN},  {"create", IOK_PH_OPEN}, {"define", IOK_PH_DEFINE},
                   {"put", IOK_PH_POST},   {"get", IOK_PH_POST},    {"wait", IOK_PH_WAIT},
                   {"close", IOK_PH_CLOSE}};

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
                         "wait, close (unset it for a normal run)",
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
