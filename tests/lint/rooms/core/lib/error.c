/* SPDX-License-Identifier: BSD-3-Clause */
/* Up to guard by a call: the prototype written by hand instead of the
 * include, a circle with guard/limits.c (the one arrow named here). */
#include "core/lib/lib.h"

int iok_limits_note(int status);

int
iok_error(int code, const char *text)
{
    return text ? code : iok_limits_note(code);
}
