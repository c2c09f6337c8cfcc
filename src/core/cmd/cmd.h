/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's top room, the commands: main.c (a kernel's run, --list,
 * --help), `iokernels ceiling` (ceiling_cmd.c), --check-batch
 * (check_batch.c) and the core's options (core_options.c). */
#ifndef IOK_CORE_CMD_H
#define IOK_CORE_CMD_H

#include "core/lib/lib.h"
#include "core/mix/mix.h"

/* The core's options (core_options.c) and the struct they fill. */
struct core_flags {
    struct iok_core_opts o;
    int collective, independent, help;
    int check;                        /* --check: configure and plan, no I/O */
    char check_ranks[IOK_OPT_STRLEN]; /* --ranks N[,N...] with --check */
};
extern const struct iok_option iok_core_options[];

/* The git commit built, "commit abc123def456[, dirty]" or "unknown commit"
 * (generated at each build by cmake/version.cmake). */
extern const char iok_commit[];

/* `iokernels ceiling`: the probe on its own. */
int iok_ceiling_main(int argc, char **argv);

/* iokernels --check-batch (check_batch.c): one `KERNEL --check` a stdin line,
 * each run by run on MPI_COMM_WORLD; 0 when every line was answered. */
int iok_check_batch_main(int argc, char **argv, iok_member_fn run);
/* The line for a name that is no kernel, printed; returns IOK_EUSAGE. */
int iok_unknown_kernel(const char *name);

#endif
