/* SPDX-License-Identifier: BSD-3-Clause */
/* A deterministic AMR hierarchy in the spirit of the Chombo benchmark's lost
 * grid: level 0 is the cubic domain cut into max_box pieces; each finer
 * level covers, with boxes of min_box to max_box cells per side (multiples
 * of min_box, the blocking factor), the cells of a spherical shell centred in
 * the domain (radius a fraction of the side, width in cells of the level
 * below), nested in the level below. Pure: no MPI, no I/O. */
#ifndef IOK_ABRGEN_GRID_H
#define IOK_ABRGEN_GRID_H

#include "kernels/amr_common/abr.h"

struct abrgen_params {
    int domain, levels, ratio, min_box, max_box;
    double radius; /* shell radius, fraction of the domain side */
    double width;  /* shell width, in cells of the level below the refined one */
};

/* Checks the parameters: IOK_OK or IOK_EUSAGE naming the option. */
int abrgen_check(const struct abrgen_params *p);

/* Builds the grid (g initialised by it). IOK_OK or IOK_EIO (memory). */
int abrgen_make(const struct abrgen_params *p, struct abr_grid *g);

#endif
