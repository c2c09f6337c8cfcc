/* SPDX-License-Identifier: BSD-3-Clause */
/* PIO .dat decomposition files, as e3sm-decomp reads them. */
#include "fuzz.h"
#include "kernels/e3sm_common/e3sm_dat.h"

void
fuzz_one(const char *text, size_t size)
{
    (void)size;
    struct e3sm_dat d;
    char err[512] = "";
    memset(&d, 0, sizeof d);
    if (e3sm_dat_parse(text, &d, err, sizeof err) != 0)
        fuzz_check_message("e3sm_dat_parse", err);
    e3sm_dat_free(&d);
}
