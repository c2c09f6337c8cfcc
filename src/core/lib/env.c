/* SPDX-License-Identifier: BSD-3-Clause */
/* The suite's own environment variables (IOK_*), read once at start-up and
 * checked like options: a value that is not what the variable takes is one
 * line naming the variable and what it takes, exit 2, never a silent
 * default (IOK_AGREE_SECONDS was atoi: "abc", "-1" and "0" meant 10 s, and
 * a huge value overflowed into decades of waiting for a failed rank).
 * IOK_CLOCK_ROUNDS was atoi too ("abc", "-5" and "1e99" ran silently) and
 * IOK_REWRITE_IN_PLACE took any value but "0" as on ("no", "false").
 * IOK_FAULT is parsed by fault.c, which knows its phases. An empty value is
 * the same as an unset one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/lib.h"
#include "iokernels/error.h"

#define AGREE_DEFAULT IOK_AGREE_SECONDS_DEFAULT
#define AGREE_MAX 86400 /* a day: past it a failed rank's wait is a hang */
#define ROUNDS_DEFAULT 10
#define ROUNDS_MAX 1000 /* rank 0 pings every rank this many times at start-up */

static int agree_s = AGREE_DEFAULT;
static int progress = -1; /* -1: unset (a terminal decides), 0 or 1 */
static int rounds = ROUNDS_DEFAULT;
static int rewrite = 0;

static const char *
value_of(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* A whole number from 1 to max, digits only, then `unit` if any ("s"). */
static int
parse_whole(const char *v, int max, const char *unit, int *out)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10); /* a leading digit: no blanks, no sign */
    if (*v < '0' || *v > '9' || errno || (*end && (!unit || strcmp(end, unit))) || n < 1 || n > max)
        return -1;
    *out = (int)n;
    return 0;
}

/* "0" or "1" into *out. */
static int
parse_flag(const char *v, int *out)
{
    if (strcmp(v, "0") && strcmp(v, "1"))
        return -1;
    *out = v[0] == '1';
    return 0;
}

int
iok_env_check(void)
{
    const char *v = value_of("IOK_AGREE_SECONDS");
    if (v && parse_whole(v, AGREE_MAX, "s", &agree_s))
        return iok_error(IOK_EUSAGE,
                         "IOK_AGREE_SECONDS=%s: expected whole seconds from 1 to %d (e.g. 30 or "
                         "30s; unset: %d)",
                         iok_quote(v), AGREE_MAX, AGREE_DEFAULT);
    v = value_of("IOK_PROGRESS");
    if (v && parse_flag(v, &progress))
        return iok_error(IOK_EUSAGE,
                         "IOK_PROGRESS=%s: expected 1 (a progress line even when stderr is no "
                         "terminal) or 0 (never); unset: only on a terminal",
                         iok_quote(v));
    if (!v)
        progress = -1;
    v = value_of("IOK_CLOCK_ROUNDS");
    if (v && parse_whole(v, ROUNDS_MAX, NULL, &rounds))
        return iok_error(IOK_EUSAGE,
                         "IOK_CLOCK_ROUNDS=%s: expected a whole number of clock ping-pong rounds "
                         "per rank from 1 to %d (unset: %d)",
                         iok_quote(v), ROUNDS_MAX, ROUNDS_DEFAULT);
    if (!v)
        rounds = ROUNDS_DEFAULT;
    v = value_of("IOK_REWRITE_IN_PLACE");
    if (v && parse_flag(v, &rewrite))
        return iok_error(IOK_EUSAGE,
                         "IOK_REWRITE_IN_PLACE=%s: expected 1 (a later iteration rewrites the "
                         "previous one's file in place) or 0 (it starts from a removed file); "
                         "unset: 0",
                         iok_quote(v));
    if (!v)
        rewrite = 0;
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

int
iok_env_clock_rounds(void)
{
    return rounds;
}

int
iok_env_rewrite_in_place(void)
{
    return rewrite;
}
