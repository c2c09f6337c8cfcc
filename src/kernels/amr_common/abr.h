/* SPDX-License-Identifier: BSD-3-Clause */
/* ABR grid files (Chombo's AMRBoxesAndRanksIO text format): the boxes of
 * every level of an AMR hierarchy, with the ranks that held them.
 *
 *   ! comment lines and blank lines are skipped
 *   ABR file format version 0.1
 *   Number of Levels = 2
 *   Refinement Ratio = 4            (L-1 ratios, after the levels line)
 *   Cell Centering = 0
 *   Number of Time Steps = 1
 *   Number of Processors = 1
 *   Level 0 Domain = (0,0,0)(63,63,63)
 *   TimeStep: 0
 *   Number of Boxes on Level 0: 8
 *   (0,0,0)(31,31,31)[0] (32,0,0)(63,31,31)[0] ...   (several per line)
 *   Number of Boxes on Level 1: ...
 *
 * Each header key appears once, before TimeStep. Boxes must lie inside their
 * level's domain (level 0's refined by the ratios), must not overlap, and
 * each level nests in the one below it (a box coarsened by the ratio lies
 * over that level's boxes). */
#ifndef IOK_ABR_H
#define IOK_ABR_H

#include <stdio.h>

#include "amr_box.h"
#include "amr_layout.h"

struct abr_grid {
    int nlevels;
    int ratio[AMR_MAX_LEVELS]; /* between level l and l+1 */
    int nprocs;                /* as written; the kernels balance themselves */
    struct amr_box domain0;
    struct amr_boxlist boxes[AMR_MAX_LEVELS];
};

void abr_init(struct abr_grid *g);
void abr_free(struct abr_grid *g);

/* Parses the text of file `path`. IOK_OK, or IOK_EUSAGE with one message
 * naming the file and line ("grids.abr line 12: ..."). */
int abr_parse(const char *text, const char *path, struct abr_grid *g);

/* Level l's domain: level 0's refined by the ratios below l. */
struct amr_box abr_level_domain(const struct abr_grid *g, int level);

/* Writes g in the format above, `comment` as leading '!' lines (may hold
 * newlines), every box with rank 0, four boxes per line. -1 on a write error. */
int abr_write(FILE *f, const struct abr_grid *g, const char *comment);

#endif
