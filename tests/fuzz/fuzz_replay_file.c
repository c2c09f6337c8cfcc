/* SPDX-License-Identifier: BSD-3-Clause */
/* Replay files (kernels/replay/replay_file.c): parsed, and when accepted
 * planned for 1 and 3 ranks (the schedule, the fill, the layout of data
 * lines), as the kernel plans them. */
#include "fuzz.h"
#include "kernels/replay/replay_file.h"
#include "kernels/replay/replay_plan.h"

void
fuzz_one(const char *text, size_t size)
{
    struct rp_trace t;
    if (rp_parse(text, size, "fuzz.replay", &t) != 0) {
        fuzz_check_message("rp_parse", iok_errmsg());
        return;
    }
    for (int p = 1; p <= 3; p += 2) {
        struct rp_plan plan;
        struct iok_schema s[8];
        iok_error_clear();
        if (rp_plan_build(&t, p, 1, "fuzz.replay", &plan, s, 8) != 0)
            fuzz_check_message("rp_plan_build", iok_errmsg());
        for (int f = 0; f < plan.nfiles; f++)
            iok_schema_free(&s[f]);
        rp_plan_free(&plan);
    }
    rp_free(&t);
}
