/* The core's view of one run: its options, the chosen backend, and the
 * measured results that reports and the JSON record are made from. */
#ifndef IOKERNELS_RUN_H
#define IOKERNELS_RUN_H

#include <stdint.h>

#include <mpi.h>

#include "iokernels/backend.h"
#include "iokernels/options.h"

/* Options every kernel has (the "core" table). */
struct iok_core_opts {
    char backend[IOK_OPT_STRLEN];
    char mode[IOK_OPT_STRLEN]; /* write | read | both */
    char io[IOK_OPT_STRLEN];   /* coll | indep */
    char api[IOK_OPT_STRLEN];  /* blocking | nonblocking | varn */
    char json[IOK_OPT_STRLEN]; /* JSON Lines file to append to; "" = none */
    int verify;
    int overwrite;
    int fsync;
    int64_t seed;
    int quiet;
    int ceiling;
};

enum iok_phase {
    IOK_PH_REQUESTS, /* building request lists (not I/O) */
    IOK_PH_DATAGEN,  /* generating values to write (not I/O) */
    IOK_PH_EXCHANGE, /* moving data between ranks before/after I/O (rearranger) */
    IOK_PH_OPEN,     /* create or open */
    IOK_PH_DEFINE,   /* define mode: dimensions, variables, attributes */
    IOK_PH_POST,     /* put / get calls */
    IOK_PH_WAIT,     /* completing posted requests */
    IOK_PH_FLUSH,    /* --fsync */
    IOK_PH_CLOSE,
    IOK_PH_CHECK, /* comparing read values with expected ones (not I/O) */
    IOK_NPHASES
};
extern const char *const iok_phase_names[IOK_NPHASES];
/* 1 for the phases made of I/O library calls only. */
int iok_phase_is_io(enum iok_phase p);

enum iok_op { IOK_OP_WRITE, IOK_OP_READ, IOK_OP_VERIFY };
extern const char *const iok_op_names[3];

struct iok_stat {
    double min, avg, max;
};

struct iok_phase_result {
    double job;           /* sum over occurrences of latest end - earliest start */
    struct iok_stat rank; /* each rank's own summed duration */
    int count;            /* occurrences */
};

/* A contiguous MPI-IO write of the same bytes by the same ranks (--ceiling). */
struct iok_ceiling {
    int measured;
    int64_t bytes;
    double time, bandwidth;
};

/* One pass over one file: a write, a read, or the read-back of --verify. */
struct iok_pass_result {
    enum iok_op op;
    int file; /* index in the kernel's plan */
    char path[IOK_OPT_STRLEN];
    int64_t bytes;    /* payload, summed over ranks */
    int64_t requests; /* subarrays, summed over ranks */
    struct iok_stat rank_bytes;
    int64_t own_bytes; /* this rank's share (differs per rank) */
    struct iok_phase_result ph[IOK_NPHASES];
    double io_time;              /* sum of the I/O phases' job times */
    struct iok_stat io_rank;     /* each rank's own time in the I/O phases */
    double bandwidth;            /* bytes / io_time, bytes per second */
    struct iok_stat peak_rss;    /* bytes, VmHWM over the pass */
    int64_t checked, mismatches; /* elements compared (read and verify passes) */
    char first_bad[512];         /* the first mismatch, from the lowest rank with one */
    struct iok_ceiling ceiling;  /* write passes with --ceiling */
};

#define IOK_MAX_PASSES 16

struct iok_result {
    int npasses;
    struct iok_pass_result pass[IOK_MAX_PASSES];
    double parse_time;          /* reading input files and building the plan, max over ranks */
    struct iok_stat parse_rank; /* the same, each rank's own */
};

/* What kernels get to see of the run. */
struct iok_run {
    MPI_Comm comm;
    int rank, nprocs;
    struct iok_core_opts core;
    const struct iok_backend *backend;
    void *backend_opts;
    enum iok_api api;
    int collective;
    int do_write, do_read;
    const char *input_path; /* the kernel's input file actually read, or NULL */
};

#endif
