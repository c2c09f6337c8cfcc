/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's mix room, `iokernels mix` (mix.c): the members, the rounds, what rank 0 keeps
 * (mix_report.c: gathered, printed, recorded), a member's run
 * (mix_member.c) and its outputs (mix_outputs.c). */
#ifndef IOK_CORE_MIX_H
#define IOK_CORE_MIX_H

#include <stdio.h>

#include <mpi.h>

#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/record/record.h"

/* A mix (mix.c): each member runs its kernel as alone, on its own ranks. */
struct iok_member_run {
    MPI_Comm comm;   /* the member's ranks */
    int check_only;  /* read options, configure and plan, then return: nothing written */
    int want_record; /* build the member's JSON record into `record` */
    FILE *report;    /* where the member's rank 0 prints its report (NULL: stdout) */
    int node_ranks;  /* a together round: the job's ranks on this rank's node, all running
                        (the record's node_cores count them); 0: the member's own */
    /* filled on the member's rank 0 by iok_member_collect */
    double io_seconds; /* the sum of its passes' open->close spans */
    int npass;         /* its passes' windows, on the member's clock (rank 0's) */
    double *win_start, *win_end, *win_bytes;
    char *record; /* malloc'd JSON text of the member's record, or NULL */
    /* the outputs its first run created (kept over its runs): each later
     * run starts from the same state, as iteration_reset.c does */
    char *planned; /* check_only, rank 0: the files it writes, one a line (described) */
    int made_set, nmade;
    char (*made)[IOK_OPT_STRLEN + 16]; /* this rank's path of each */
};
/* After the member's passes (collective over the member's ranks; in: the
 * record's input, NULL for none). */
int iok_member_collect(struct iok_member_run *m, const struct iok_run *run,
                       const struct iok_plan *plan, const struct iok_result *res,
                       const struct iok_json_input *in);
/* Rank 0, check_only: the files the member's plan writes, into m->planned,
 * as the file system sees them and with the room they need (mix_outputs.c). */
int iok_member_planned(struct iok_member_run *m, const struct iok_run *run,
                       const struct iok_plan *plan);
/* Collective over the member: removes what its first run created, untimed. */
int iok_member_remove_made(struct iok_member_run *m, const struct iok_run *run);
void iok_member_run_free(struct iok_member_run *m);
/* run: main.c's run of one kernel, on m->comm (main.c is outside the
 * core library that the unit tests link) */
typedef int (*iok_member_fn)(const struct iok_kernel *k, int argc, char **argv,
                             struct iok_member_run *m);
int iok_mix_main(int argc, char **argv, iok_member_fn run);

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
