/* SPDX-License-Identifier: BSD-3-Clause */
/* ABR grid files (Chombo's box hierarchy), as chombo and abrgen read them. */
#include "fuzz.h"
#include "kernels/amr_common/abr.h"

void
fuzz_one(const char *text, size_t size)
{
    (void)size;
    struct abr_grid g;
    abr_init(&g);
    if (abr_parse(text, "fuzz.abr", &g) != 0)
        fuzz_check_message("abr_parse", iok_errmsg());
    abr_free(&g);
}
