/* SPDX-License-Identifier: BSD-3-Clause */
/* The profile ADIOS2 2.12's BP5 reader writes when it closes:
 * /tmp/<name>_<pid in hex>_profiling.json (<name>: the last component of
 * the path it opened), in the system's /tmp whatever TMPDIR says, and
 * whatever the engine's parameters say (BP5 has no Profile key; its
 * writer's profiling.json, like BP4's, goes inside the dataset). Nothing a
 * run writes may stay outside its folder: each process removes its own
 * file after the close, unless that file was there before the open (not
 * the run's) or the user asked for profiles (--adios2-params Profile=On:
 * then it stays where ADIOS2 puts it, as docs/backends.md says).
 * Included by adios2.c only. */
#ifndef IOK_ADIOS2_PROFILE_H
#define IOK_ADIOS2_PROFILE_H

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adios2_param.h"
#include "iokernels/options.h"

struct a2_profile {
    char path[IOK_OPT_STRLEN + 64];
    int remove; /* 1: the run's own, removed after the close */
};

/* `key` is set to on, true, yes or 1 (ADIOS2 takes these in any case). */
static int
a2_param_on(const char *params, const char *key)
{
    const char *v = a2_param_find(params, key);
    size_t len = v ? strcspn(v, ",") : 0;
    static const char *const on[] = {"on", "true", "yes", "1"};
    for (size_t i = 0; v && i < sizeof on / sizeof *on; i++)
        if (len == strlen(on[i]) && !strncasecmp(v, on[i], len))
            return 1;
    return 0;
}

/* Before the reader opens `opened`. */
static void
a2_profile_note(struct a2_profile *p, const char *opened, const char *params)
{
    const char *slash = strrchr(opened, '/');
    struct stat st;
    int n = snprintf(p->path, sizeof p->path, "/tmp/%s_%x_profiling.json",
                     slash ? slash + 1 : opened, (unsigned)getpid());
    p->remove = n > 0 && (size_t)n < sizeof p->path && !a2_param_on(params, "Profile") &&
                lstat(p->path, &st) != 0;
}

/* After the reader's close (or after a failure that closed it). */
static void
a2_profile_remove(struct a2_profile *p)
{
    if (p->remove)
        unlink(p->path);
    p->remove = 0;
}

#endif
