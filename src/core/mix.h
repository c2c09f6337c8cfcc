/* SPDX-License-Identifier: BSD-3-Clause */
/* iokernels mix (mix.c): the members, the rounds, what rank 0 keeps
 * (mix_report.c: gathered, printed, recorded). */
#ifndef IOK_MIX_H
#define IOK_MIX_H

#include <stdio.h>

#include "core.h"
#include "cores.h"

#define IOK_MIX_MAX 16

struct iok_mix_member {
    int index; /* 1-based, as the command line orders the parts */
    const struct iok_kernel *kernel;
    int nranks, first; /* the job's ranks first .. first + nranks - 1 */
    double start;      /* seconds after the common start, together */
    int argc;          /* its options (inside the mix's argv) */
    char **argv;
    int overwrite;  /* --overwrite among them */
    char label[96]; /* "member 2 (e3sm): " */
    /* rank 0 of the job: what the rounds gave */
    double *alone, *together; /* seconds per iteration; NAN where not run */
    double *overlap;          /* [j]: bytes moved inside member j's windows, together */
    double together_bytes;    /* bytes moved in together rounds */
    void *runs;               /* json_t array: each run's record */
};

struct iok_mix {
    int iterations, n, nstart;
    int member_dirs; /* --member-dirs: member i in ./memberI */
    char json[IOK_OPT_STRLEN];
    struct iok_mix_member m[IOK_MIX_MAX];
    char **args;               /* the members' options, one after another */
    struct iok_mix_member *me; /* this rank's member */
    int mrank;                 /* this rank in its member */
    MPI_Comm xcomm;            /* the mix's own messages */
    double world_offset;       /* this rank's clock against the job's rank 0 */
    iok_member_fn run;         /* main.c's */
    int failed_member, failed_iteration, failed_together; /* 0: none */
    long record_at;         /* the --json file's size before the mix's record (-1: not yet) */
    struct iok_cores cores; /* rank 0: the job's nodes, each member's ranks as a tag bit */
    int node_ranks;         /* the job's ranks on this rank's node */
};

/* One round: every member together, or member `solo` alone. */
struct iok_mix_round {
    int iteration, together, solo;
    int nw[IOK_MIX_MAX];    /* rank 0: each member's pass windows, on the job's clock */
    double *w[IOK_MIX_MAX]; /* start, end, bytes per pass */
    char *report[IOK_MIX_MAX];
};

/* Collective over the job (mix_outputs.c): refuses two members writing one
 * file, and members whose files do not fit their file system together
 * (planned: this member's list on its rank 0, iok_member_planned). */
int iok_mix_check_outputs(struct iok_mix *mx, const char *planned);
int iok_mix_alloc(struct iok_mix *mx);
void iok_mix_free(struct iok_mix *mx);
/* Collective over the job: each active member's rank 0 sends its run to
 * the job's rank 0, which keeps it. */
int iok_mix_gather(struct iok_mix *mx, struct iok_mix_round *r, int active, int mrc,
                   const struct iok_member_run *mr, const char *text);
void iok_mix_round_free(struct iok_mix *mx, struct iok_mix_round *r);
void iok_mix_print_members(const struct iok_mix *mx, FILE *out);
void iok_mix_print_round(const struct iok_mix *mx, const struct iok_mix_round *r, FILE *out);
void iok_mix_print_summary(const struct iok_mix *mx, FILE *out);
/* Rank 0: the mix's record, rewritten in place after every round. */
int iok_mix_write_record(struct iok_mix *mx, const char *status, int exit_code);

#endif
