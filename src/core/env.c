/* SPDX-License-Identifier: BSD-3-Clause */
/* The suite's own environment variables (IOK_*), read once at start-up and
 * checked like options: a value that is not what the variable takes is one
 * line naming the variable and what it takes, exit 2, never a silent
 * default (IOK_AGREE_SECONDS was atoi: "abc", "-1" and "0" meant 10 s, and
 * a huge value overflowed into decades of waiting for a failed rank).
 * IOK_FAULT is parsed by fault.c, which knows its phases. An empty value is
 * the same as an unset one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "iokernels/error.h"

#define AGREE_DEFAULT 10
#define AGREE_MAX 86400 /* a day: past it a failed rank's wait is a hang */

static int agree_s = AGREE_DEFAULT;
static int progress = -1; /* -1: unset (a terminal decides), 0 or 1 */

static const char *
value_of(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Whole seconds, "N" or "Ns", 1 to AGREE_MAX. */
static int
parse_seconds(const char *v, int *out)
{
    char *end = NULL;
    errno = 0;
    long s = strtol(v, &end, 10); /* a leading digit: no blanks, no sign */
    if (*v < '0' || *v > '9' || errno || (*end && strcmp(end, "s")) || s < 1 || s > AGREE_MAX)
        return -1;
    *out = (int)s;
    return 0;
}

int
iok_env_check(void)
{
    const char *v = value_of("IOK_AGREE_SECONDS");
    if (v && parse_seconds(v, &agree_s))
        return iok_error(IOK_EUSAGE,
                         "IOK_AGREE_SECONDS=%s: expected whole seconds from 1 to %d (e.g. 30 or "
                         "30s; unset: %d)",
                         iok_quote(v), AGREE_MAX, AGREE_DEFAULT);
    v = value_of("IOK_PROGRESS");
    if (v && strcmp(v, "0") && strcmp(v, "1"))
        return iok_error(IOK_EUSAGE,
                         "IOK_PROGRESS=%s: expected 1 (a progress line even when stderr is no "
                         "terminal) or 0 (never); unset: only on a terminal",
                         iok_quote(v));
    progress = v ? v[0] == '1' : -1;
    return IOK_OK;
}

int
iok_env_agree_seconds(void)
{
    return agree_s;
}

int
iok_env_progress(void)
{
    return progress;
}
