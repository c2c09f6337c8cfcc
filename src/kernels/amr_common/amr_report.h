/* The part of the AMR kernels' reports that their originals lack: backend,
 * planning time, per pass the time outside the I/O (requests, data
 * generation, check), peak memory, verification and ceiling. */
#ifndef IOK_AMR_REPORT_H
#define IOK_AMR_REPORT_H

#include <stdio.h>

#include "amr_layout.h"
#include "iokernels/run.h"

void amr_report_suite(const struct iok_run *run, const struct iok_result *res, FILE *out);

/* One line per level: boxes, cells, boxes per rank (min..max). */
void amr_report_levels(const struct amr_hier *h, int nprocs, FILE *out);

#endif
