/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's guard room: what stands between a run and the system it
 * runs on, checked before and after the passes: resource limits, signals,
 * fault injection, path and file-kind checks, full disks, the MPI-IO
 * layer, TMPDIR, the system probes (sysinfo.c) and the loading of modules
 * (module.c, which names an address-space limit a failed load met). */
#ifndef IOK_CORE_GUARD_H
#define IOK_CORE_GUARD_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <mpi.h>

#include "core/lib/lib.h"

/* System probes. */
int iok_mem_reset_peak(void);     /* writes 5 to /proc/self/clear_refs; 0 if it could */
int64_t iok_mem_peak_bytes(void); /* VmHWM, or -1 when unknown */
/* The whole process's peak so far, across resets of VmHWM (what
 * /usr/bin/time reports at the end), or -1 when unknown. */
int64_t iok_mem_process_peak_bytes(void);
void iok_dirname(const char *path, char *dir, size_t len); /* "." when none */
void iok_fs_describe(const char *path, char *fstype, size_t len, int64_t *free_bytes);

/* /proc/self/io of this rank now (fields -1 when unreadable). */
void iok_osbytes_now(struct iok_osbytes *b);

/* The MPI-IO implementation the MPI library picks (mpiio_layer.c): with
 * OpenMPI, the io component by priority and the io, fcoll, fbtl, fs and
 * sharedfp selections as set ("" = the library's choice); with an
 * MPICH-derived library, ROMIO (its only one) and ROMIO_HINTS. `mpi`: the
 * library and its version ("Open MPI 4.1.4", "MPICH 4.0.2"). */
#define IOK_MPIIO_NSETTINGS 5
struct iok_mpiio_layer {
    char mpi[64];
    char io[256];
    int nsettings;
    struct {
        char framework[16];
        char value[256];
    } setting[IOK_MPIIO_NSETTINGS];
};
/* 0 when the MPI library is neither OpenMPI nor MPICH-derived. */
int iok_mpiio_layer(struct iok_mpiio_layer *l);
/* Before MPI_Init: OpenMPI's OMPIO without the shared-file-pointer
 * components that crash on long paths (mpiio_layer.c), unless the user set
 * the selection. Nothing with other MPI libraries. */
void iok_mpiio_layer_defaults(void);
/* A usage error when `path` (`what`: "output file", ...) is too long for
 * the shared-file-pointer component the user's own OpenMPI setting allows
 * (lockedfile, which aborts the job on it); IOK_OK otherwise. */
int iok_mpiio_path_check(const char *path, int nprocs, const char *what);
/* `path` (a buffer of `len`) as it is handed to MPI-IO: a name of one
 * character without a folder becomes "./NAME" under OpenMPI, whose OMPIO
 * cannot open it otherwise (mpiio_layer.c). */
void iok_mpiio_name(char *path, size_t len);
/* Every planned file's name against NAME_MAX, and iok_mpiio_path_check
 * for the backends that open through MPI-IO (path_check.c). */
int iok_check_plan_paths(const struct iok_run *run, const struct iok_plan *plan);
/* The planned paths the backends that open through MPI-IO are handed,
 * through iok_mpiio_name (path_check.c); on every rank. */
void iok_plan_mpiio_names(const struct iok_run *run, struct iok_plan *plan);
/* The report's "MPI-IO layer" line; nothing when the library tells none. */
void iok_mpiio_layer_report(FILE *out);
/* The MPI-IO layer as the record's JSON (mpiio_layer.c). */
json_t *iok_mpiio_layer_json(void);

/* Full disks (write_check.c): a failed write names a full file system in
 * its message; after a write pass, the rank(s) that hold `path` (`mine`)
 * check that the file system is not full and that it holds `bytes`. */
/* A write's failure named: a file system that is full now, else `err` (the
 * errno right after the failed call, 0 if none) where it is a system error
 * a write ends with (ENOSPC, EDQUOT, EIO, EFBIG, EROFS). */
void iok_note_full(const char *path, int err);
int iok_check_written(MPI_Comm comm, const char *path, int mine, const struct iok_schema *s,
                      int64_t bytes);

/* Files by their signature (file_kind.c), rank 0 or a file's own rank
 * before any library opens it: a read's file is what `backend` reads and
 * not shorter than its header says; a write's path is no folder (a file for
 * ADIOS2) and `nfiles` files of the schema's data fit in its free space. */
int iok_check_input_kind(const char *path, const char *backend, const struct iok_schema *s);
/* After a write pass: the file holds its format's signature and is not
 * shorter than its header says (exit 1: the library reported success). */
int iok_check_written_kind(const char *path, const char *backend, const struct iok_schema *s);
int iok_check_output_room(const char *path, const char *backend, const struct iok_schema *s,
                          int nfiles, int overwrite);
/* Bytes of a schema's data in one file, what iok_check_output_room counts:
 * -1 when they overflow, 0 when compressed (unknown). */
int64_t iok_schema_data_bytes(const struct iok_schema *s);

/* Resource limits (limits.c): iok_limits_init before MPI_Init ignores
 * SIGXFSZ, so that a write past ulimit -f fails with EFBIG instead of
 * killing the process. */
void iok_limits_init(void);
/* On the rank whose call failed (status not OK): when the process met its
 * descriptor limit or its file size limit, appends that to the error's
 * message; returns the status to agree on (IOK_EIO for a full descriptor
 * table that a caller took for a bad input). */
int iok_limits_note(int status);
/* Under an address-space limit (ulimit -v) that leaves less than
 * IOK_AS_PROBE_MIB to map now: 1, and the limit in KiB; else 0. */
#define IOK_AS_PROBE_MIB 128
int iok_limits_as_short(unsigned long long *limit_kib);
/* A usage error when a file of `bytes` of data cannot be written under the
 * process's file size limit; checked before the file is created. */
int iok_limits_check_size(const char *path, int64_t bytes);
/* Under an address-space limit (ulimit -v), an out-of-memory error before
 * any file is created when one step's buffers of a planned file cannot be
 * reserved. */
int iok_limits_check_memory(const struct iok_run *run, const struct iok_plan *plan);

/* TMPDIR, before MPI_Init (tmpdir.c): a usage error when it is set and
 * missing, not a folder or not writable. */
int iok_tmpdir_check(void);
/* This process's rank as its launcher says before MPI_Init (OpenMPI, MPICH,
 * PMIx, Slurm); -1 when none does (a process started alone). */
int iok_launcher_rank(void);

/* Debug fault injection (fault.c): IOK_FAULT=PHASE:RANK. iok_fault_init
 * parses it once (a usage error when malformed); IOK_FAULTED(p, path) is 1
 * when this rank's backend call of phase p is to fail instead of being
 * made, its message recorded. A branch on a static flag when disarmed. */
extern int iok_fault_armed;
int iok_fault_init(int rank, int nprocs);
int iok_fault_hit(enum iok_phase p, const char *path);
/* IOK_FAULT=written:RANK: after a write pass closed its file, that rank
 * overwrites the file's bytes with NUL (a file holding none of what was
 * written), so that the check after the write is seen failing. */
void iok_fault_written(const char *path);
#define IOK_FAULTED(p, path) (iok_fault_armed && iok_fault_hit((p), (path)))

/* Signals (signals.c): SIGTERM, SIGINT, SIGHUP end the run with one line
 * (rank 0), the partial output removed unless keep, the record when given
 * (iok_signals_record takes the prefix), exit 128 + signal. doing: what
 * the run does now ("the write", path); partial: the output this run
 * created that the pass under way writes (NULL: none). */
void iok_signals_install(int rank, int keep);
void iok_signals_doing(const char *what, const char *path);
void iok_signals_partial(const char *path);
/* The file of the write pass under way; NULL outside a write pass. */
const char *iok_signals_writing(void);
/* After a failure was reported: a signal (mpiexec ending the job) only
 * ends the process. */
void iok_signals_quiet(void);

/* Before this rank ends the job (MPI_Abort): tells the other ranks of its
 * node that the SIGTERM that follows is the abort's. */
void iok_signals_job_failing(void);
void iok_signals_record(const char *path, char *prefix);

/* The label of iok_error_label (lib.h) for the signal lines. */
void iok_signals_label(const char *label);

#endif
