/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-kernel-rooms: kernel beta's header. */
#ifndef PLANTED_BETA_H
#define PLANTED_BETA_H

#include "kernels/shared_common/shared.h"

int beta(int x);

#endif
