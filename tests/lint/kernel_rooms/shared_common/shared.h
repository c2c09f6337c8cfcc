/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-kernel-rooms: a room that reaches into a
 * kernel (shared_common->alpha): a room is shared by kernels, never theirs. */
#ifndef PLANTED_SHARED_H
#define PLANTED_SHARED_H

#include "kernels/alpha/alpha.h"

int shared(int x);

#endif
