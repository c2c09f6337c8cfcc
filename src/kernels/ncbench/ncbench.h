/* SPDX-License-Identifier: BSD-3-Clause */
/* NetCDF-Bench kernel: shared between the kernel (ncbench.c) and its report
 * (ncb_report.c). */
#ifndef NCBENCH_H
#define NCBENCH_H

#include <stdio.h>

#include "iokernels/kernel.h"
#include "ncb_geom.h"

#define NCB_GEOMLEN 128 /* a geometry's text: four numbers */
#define NCB_FORMAT_CHOICES "human|parser"
enum ncb_format { NCB_FORMAT_HUMAN, NCB_FORMAT_PARSER };

/* The original's options (benchtool), plus -z. */
struct ncb_opts {
    int read, write, unlimited, fill;
    int nn, ppn;
    char data[NCB_GEOMLEN], block[NCB_GEOMLEN], chunk[NCB_GEOMLEN]; /* t:x:y:z, auto */
    char iotype[32];                                                /* ind|coll|... */
    char testfile[IOK_OPT_STRLEN];
    enum ncb_format format; /* -x: NCB_FORMAT_CHOICES */
    int level;              /* deflate level, 0 = none */
    int fpp;                /* file per process */
    /* settled by configure(), not options */
    int verify_only; /* --verify alone: check the existing file, no benchmark table */
};

/* What plan() settles, for requests() and the report. */
struct ncb_state {
    struct ncb_geom g;
};

/* The human report (the original's header and tables, then ours) or, with
 * -x parser, CSV: one row per pass and rank. Rank 0. */
void ncb_report(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
                const struct iok_result *res, FILE *out);

#endif
