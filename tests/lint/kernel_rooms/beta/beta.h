/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-kernel-rooms: kernel beta's header. */
#ifndef PLANTED_BETA_H
#define PLANTED_BETA_H

#include "kernels/grid_common/grid.h"

int beta(int x);

#endif
