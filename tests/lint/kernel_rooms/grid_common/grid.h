/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-kernel-rooms: a room that reaches into a
 * kernel (grid_common->alpha): a room is shared by kernels, never theirs. */
#ifndef PLANTED_GRID_H
#define PLANTED_GRID_H

#include "kernels/alpha/alpha.h"

int grid(int x);

#endif
