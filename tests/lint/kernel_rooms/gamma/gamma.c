/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-kernel-rooms: kernel gamma reaching into
 * kernel beta by a relative path (gamma->beta). */
#include "../beta/beta.h"

int
gamma_of(int x)
{
    return beta(x);
}
