/* SPDX-License-Identifier: BSD-3-Clause */
/* One engine parameter in "Key=Value,..." as ADIOS2 reads it (keys in any
 * case, blanks before a key ignored). Included by adios2.c only. */
#ifndef IOK_ADIOS2_PARAM_H
#define IOK_ADIOS2_PARAM_H

#include <string.h>
#include <strings.h>

/* The value of `key` (up to the next ',' or the end), or NULL. */
static const char *
a2_param_find(const char *params, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = params; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        p += strspn(p, " \t");
        if (!strncasecmp(p, key, n) && p[n] == '=')
            return p + n + 1;
    }
    return NULL;
}

#endif
