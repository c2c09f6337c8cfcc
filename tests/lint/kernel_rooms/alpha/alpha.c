/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-kernel-rooms: kernel alpha reaching into
 * kernel beta (the reach it must name, alpha->beta), beside what it must let
 * pass: its own header, the core's, a room's by either path, a system
 * header, an include inside a comment:
 * #include "kernels/beta/beta.h" */
#include <stdio.h>

#include "../grid_common/grid.h"
#include "alpha.h"
#include "iokernels/error.h"
#include "kernels/beta/beta.h"
#include "kernels/grid_common/grid.h"

int
alpha(int x)
{
    return beta(grid(x));
}
