/* SPDX-License-Identifier: BSD-3-Clause */
/* abrgen: writes an ABR grid file for the chombo kernel (a generated
 * hierarchy, see abrgen_grid.h). A tool, not an I/O kernel: its plan holds
 * no file for the core to time; rank 0 writes the small text file while
 * planning, refusing to replace an existing one without --overwrite. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abrgen_grid.h"
#include "iokernels/error.h"
#include "iokernels/kernel.h"

struct abrgen_opts {
    struct abrgen_params p;
    char output[IOK_OPT_STRLEN];
};

static const struct iok_option abrgen_options[] = {
    {"domain", 0, IOK_OPT_INT, offsetof(struct abrgen_opts, p.domain), "64",
     "cells per side of the cubic level-0 domain", .min = "1", .max = "4096", .unit = "cells"},
    {"levels", 0, IOK_OPT_INT, offsetof(struct abrgen_opts, p.levels), "2", "number of levels",
     .min = "1", .max = "4", .unit = "levels"},
    {"ratio", 0, IOK_OPT_INT, offsetof(struct abrgen_opts, p.ratio), "4",
     "refinement ratio between levels", .min = "2"},
    {"min-box", 0, IOK_OPT_INT, offsetof(struct abrgen_opts, p.min_box), "8",
     "smallest box side of the refined levels (the blocking factor)"},
    {"max-box", 0, IOK_OPT_INT, offsetof(struct abrgen_opts, p.max_box), "32", "largest box side"},
    {"radius", 0, IOK_OPT_DOUBLE, offsetof(struct abrgen_opts, p.radius), "0.25",
     "radius of the refined spherical shell, as a fraction of the domain side"},
    {"width", 0, IOK_OPT_DOUBLE, offsetof(struct abrgen_opts, p.width), "1",
     "width of the shell, in cells of the level below the refined one"},
    {"output", 'o', IOK_OPT_STRING, offsetof(struct abrgen_opts, output), NULL,
     "file to write (default sDxDxDLlevelsrRATIObMIN-MAX.abr)", .metavar = "FILE"},
    {NULL}};

static int
abrgen_configure(void *kopts, struct iok_core_opts *core, int (*given)(const char *name))
{
    struct abrgen_opts *o = kopts;
    IOK_TRY(abrgen_check(&o->p));
    if (!o->output[0])
        snprintf(o->output, sizeof o->output, "s%dx%dx%dL%dr%db%d-%d.abr", o->p.domain, o->p.domain,
                 o->p.domain, o->p.levels, o->p.ratio, o->p.min_box, o->p.max_box);
    if (core->mode != IOK_MODE_UNSET && core->mode != IOK_MODE_WRITE)
        return iok_error(IOK_EUSAGE, "abrgen only writes a grid file: drop --mode");
    return IOK_OK;
}

static int
write_grid(const struct abrgen_opts *o, const struct abr_grid *g, int overwrite)
{
    if (!overwrite && access(o->output, F_OK) == 0)
        return iok_error(IOK_EUSAGE,
                         "output file %s exists: pass --overwrite to replace it, or remove it",
                         o->output);
    FILE *f = fopen(o->output, "w");
    if (!f)
        return iok_error(IOK_EUSAGE, "cannot write %s (%s): choose another --output", o->output,
                         strerror(errno));
    char comment[512];
    snprintf(comment, sizeof comment,
             "written by iokernels abrgen --domain %d --levels %d --ratio %d --min-box %d "
             "--max-box %d --radius %g --width %g\n"
             "level 0: the domain in max-box pieces; finer levels: a spherical shell",
             o->p.domain, o->p.levels, o->p.ratio, o->p.min_box, o->p.max_box, o->p.radius,
             o->p.width);
    int bad = abr_write(f, g, comment);
    bad |= fclose(f) != 0;
    return bad ? iok_error(IOK_EIO, "cannot write %s: %s", o->output, strerror(errno)) : IOK_OK;
}

static void
free_grid(void *p)
{
    abr_free(p);
    free(p);
}

static int
abrgen_plan(const void *kopts, const struct iok_run *run, struct iok_plan *plan)
{
    const struct abrgen_opts *o = kopts;
    struct abr_grid *g = calloc(1, sizeof *g);
    if (!g)
        return iok_error(IOK_EIO, "out of memory generating the grid");
    plan->priv = g;
    plan->free_priv = free_grid;
    plan->nfiles = 0;
    IOK_TRY(abrgen_make(&o->p, g));
    return run->rank == 0 ? write_grid(o, g, run->core->overwrite) : IOK_OK;
}

static int
abrgen_requests(const void *kopts, const struct iok_run *run, const struct iok_plan *plan, int file,
                int step, enum iok_op op, struct iok_reqlist *out)
{
    return IOK_OK; /* no files */
}

static void
abrgen_report(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
              const struct iok_result *res, FILE *out)
{
    const struct abrgen_opts *o = kopts;
    const struct abr_grid *g = plan->priv;
    fprintf(out, "wrote %s: %d levels\n", o->output, g->nlevels);
    for (int l = 0; l < g->nlevels; l++) {
        struct amr_box d = abr_level_domain(g, l);
        fprintf(out, "level %d: domain (%d,%d,%d)(%d,%d,%d), %d boxes, %lld cells\n", l, d.lo[0],
                d.lo[1], d.lo[2], d.hi[0], d.hi[1], d.hi[2], g->boxes[l].n,
                (long long)amr_boxlist_cells(&g->boxes[l]));
    }
}

const struct iok_kernel iok_kernel_abrgen = {
    .name = "abrgen",
    .flags = IOK_KERNEL_TOOL,
    .summary = "writes an ABR grid file for chombo (a tool: no I/O is measured)",
    .options = abrgen_options,
    .opts_size = sizeof(struct abrgen_opts),
    .configure = abrgen_configure,
    .plan = abrgen_plan,
    .requests = abrgen_requests,
    .report = abrgen_report,
};
