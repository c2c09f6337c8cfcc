/* SPDX-License-Identifier: BSD-3-Clause */
/* Report lines shared by the AMR kernels (the core prints the generic
 * block after every kernel's report). */
#ifndef IOK_AMR_REPORT_H
#define IOK_AMR_REPORT_H

#include <stdio.h>

#include "amr_layout.h"
#include "iokernels/run.h"

/* One line per level: boxes, cells, boxes per rank (min..max). */
void amr_report_levels(const struct amr_hier *h, int nprocs, FILE *out);

#endif
