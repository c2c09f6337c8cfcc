/* SPDX-License-Identifier: BSD-3-Clause */
/* Down to lib: both arrows (the include and the call) are allowed. */
#include "core/guard/guard.h"
#include "core/lib/lib.h"

int
iok_limits_note(int status)
{
    return iok_error(status, "too many open files");
}
