# SPDX-License-Identifier: BSD-3-Clause
"""The environment variables the suite reads, for the man page. A test
(tests/docs/test_reference.py) finds every getenv("NAME") of src/ here."""

# (name, what it does), in the order the man page lists them
VARIABLES = (
    (
        "IOK_FAULT",
        "PHASE:RANK (PHASE one of open, create, define, put, get, wait, close; RANK one of the "
        "job's ranks): fails that backend call on that rank, to test the failure paths; unset "
        "for a normal run. Any other value is refused (exit 2).",
    ),
    (
        "IOK_AGREE_SECONDS",
        "how long a failing rank waits for the others to agree before it aborts the job: whole "
        "seconds from 1 to 86400, as 30 or 30s (default 10); any other value is refused (exit 2).",
    ),
    (
        "IOK_CLOCK_ROUNDS",
        "ping-pong rounds per rank of the job clock's offset estimate against rank 0 "
        "(default 10, 1-1000): the round with the smallest round trip is kept. Any other value "
        "is refused (exit 2).",
    ),
    (
        "IOK_REWRITE_IN_PLACE",
        "1: a later iteration's write rewrites the previous iteration's file instead of "
        "removing it first (the state before like-for-like iterations; for comparisons); 0 or "
        "unset: removed first. Any other value is refused (exit 2).",
    ),
    (
        "IOK_PROGRESS",
        "1: a progress line per record on rank 0's standard error even when it is not a "
        "terminal; 0: never; unset: on a terminal only. Any other value is refused (exit 2).",
    ),
    (
        "TMPDIR",
        "where the MPI library keeps its session files: when set, it must be a writable "
        "folder, checked before MPI starts (a missing, read-only or non-folder one is refused "
        "with exit 2, and nothing is created); OpenMPI's mpiexec checks it before that.",
    ),
    (
        "IOKERNELS_DATA",
        "the folder holding the shipped data (E3SM maps, input files), instead of the one "
        "found beside the binary or in the source tree.",
    ),
    (
        "IOKERNELS_MODULES",
        "the folder of the backend modules (iok-backend-NAME.so), instead of ../lib/iokernels "
        "beside the binary.",
    ),
    (
        "IOKERNELS_BIN",
        "the iokernels binary the campaign tool (iokernels-campaign) runs; IOK_BIN is the "
        "older name.",
    ),
    (
        "ROMIO_HINTS",
        "read by ROMIO itself (a hints file); recorded in the JSON record with "
        "PNETCDF_HINTS, MPICH_MPIIO_HINTS and OMPI_MCA_io when set.",
    ),
    (
        "OMPI_MCA_io",
        "OpenMPI's MPI-IO component (ompio, romio321); it and the other OMPI_MCA_* settings of "
        "the io, fcoll, fbtl, fs and sharedfp frameworks are recorded as the run's MPI-IO layer.",
    ),
    (
        "OMPI_MCA_sharedfp",
        "OpenMPI's shared-file-pointer components; unless the user sets it (here or in a "
        "parameter file), iokernels sets ^lockedfile,individual before MPI_Init (docs/backends.md: "
        "lockedfile aborts on a path of 245 characters or more).",
    ),
    (
        "SLURM_NNODES",
        "ncbench: the number of nodes when --nn is 0 (with SLURM_NTASKS_PER_NODE for --ppn).",
    ),
    (
        "SLURM_JOB_ID",
        "recorded in the JSON record (with SLURM_STEP_ID) when set.",
    ),
)

# read by the suite but no setting of the user's: OpenMPI's own (the list of
# its parameter files, the session directory whose files a signal removes),
# HOME (where OpenMPI's per-user parameter file is) and the launchers' rank
# of a process before MPI_Init (which one prints a TMPDIR error)
INTERNAL = (
    "HOME",
    "OMPI_MCA_mca_base_param_files",
    "OMPI_MCA_orte_jobfam_session_dir",
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
)
