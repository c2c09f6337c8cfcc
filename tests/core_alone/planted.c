/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for the test core.links_alone.planted: a core file that
 * calls a kernel's function (the E3SM generator's mix). Linked with the
 * core alone it must fail, naming the symbol, or the test shows nothing. */
#include <stdint.h>

#include "kernels/e3sm_common/e3sm_gen_pairs.h"

uint64_t
iok_planted_uses_a_kernel(uint64_t x)
{
    return e3sm_gen_mix(x);
}
