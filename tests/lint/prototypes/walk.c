/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-prototypes: the definition. */
#include "walk.h"

int
walk(const char *path, long *end)
{
    *end = path ? 1 : 0;
    return 0;
}
