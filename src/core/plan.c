/* SPDX-License-Identifier: BSD-3-Clause */
/* Releasing a kernel's plan. */
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
