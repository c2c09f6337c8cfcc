/* SPDX-License-Identifier: BSD-3-Clause */
/* Releasing a kernel's plan; checking its pass order. */
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"
#include "iokernels/grow.h"
#include "iokernels/kernel.h"

int
iok_plan_add_file(struct iok_plan *plan, struct iok_file_plan **fp)
{
    int64_t cap = plan->files_cap;
    if (iok_grow((void **)&plan->files, &cap, (int64_t)plan->nfiles + 1, sizeof *plan->files) ||
        cap > INT32_MAX)
        return iok_error(IOK_EIO, "out of memory for the plan's %d files", plan->nfiles + 1);
    plan->files_cap = (int)cap;
    *fp = &plan->files[plan->nfiles++];
    memset(*fp, 0, sizeof **fp);
    return IOK_OK;
}

int *
iok_plan_pass_order(struct iok_plan *plan, int n)
{
    int *p = realloc(plan->pass_order, (size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) {
        iok_error(IOK_EIO, "out of memory for the plan's order of %d passes", n);
        return NULL;
    }
    return plan->pass_order = p;
}

void
iok_plan_free(struct iok_plan *plan)
{
    for (int f = 0; f < plan->nfiles; f++)
        iok_schema_free(&plan->files[f].schema);
    free(plan->files);
    free(plan->pass_order);
    if (plan->free_priv && plan->priv)
        plan->free_priv(plan->priv);
    memset(plan, 0, sizeof *plan);
}

/* Group g's steps name shared files of the plan, writes or reads. */
static int
group_valid(const struct iok_plan *plan, int g)
{
    if (g < 0 || g >= plan->nfilegroups || !plan->filegroups || plan->filegroups[g].nsteps < 1)
        return 0;
    const struct iok_filegroup *gr = &plan->filegroups[g];
    for (int i = 0; i < gr->nsteps; i++) {
        const struct iok_filegroup_step *st = &gr->steps[i];
        if (st->file < 0 || st->file >= plan->nfiles || plan->files[st->file].per_rank ||
            (st->op != IOK_OP_WRITE && st->op != IOK_OP_READ) || st->step < 0)
            return 0;
    }
    return 1;
}

int
iok_plan_order_valid(const struct iok_plan *plan)
{
    if (plan->npass_order < 0 || plan->npass_order > 2 * plan->nfiles)
        return 0;
    for (int i = 0; i < plan->npass_order; i++) {
        int e = plan->pass_order[i];
        if (e < 0 ? !group_valid(plan, IOK_PASS_GROUP_OF(e)) : e >= 2 * plan->nfiles)
            return 0;
        for (int j = i + 1; j < plan->npass_order; j++)
            if (plan->pass_order[j] == e || (e >= 0 && e % 2 && plan->pass_order[j] == e - 1))
                return 0;
    }
    return 1;
}
