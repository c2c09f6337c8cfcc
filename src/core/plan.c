/* SPDX-License-Identifier: BSD-3-Clause */
/* Releasing a kernel's plan; checking its pass order. */
#include <string.h>

#include "iokernels/kernel.h"

void
iok_plan_free(struct iok_plan *plan)
{
    for (int f = 0; f < plan->nfiles; f++)
        iok_schema_free(&plan->files[f].schema);
    if (plan->free_priv && plan->priv)
        plan->free_priv(plan->priv);
    memset(plan, 0, sizeof *plan);
}

int
iok_plan_order_valid(const struct iok_plan *plan)
{
    if (plan->npass_order < 0 || plan->npass_order > 2 * plan->nfiles)
        return 0;
    for (int i = 0; i < plan->npass_order; i++) {
        int e = plan->pass_order[i];
        if (e < 0 || e >= 2 * plan->nfiles)
            return 0;
        for (int j = i + 1; j < plan->npass_order; j++)
            if (plan->pass_order[j] == e || (e % 2 && plan->pass_order[j] == e - 1))
                return 0;
    }
    return 1;
}
