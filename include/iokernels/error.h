/* SPDX-License-Identifier: BSD-3-Clause */
/* Error codes, the per-rank error message, and agreement across ranks.
 *
 * Every function that can fail returns one of the codes below. The first
 * failure on a rank records one message (iok_error); later failures on the
 * same rank keep the first message. At each phase end the ranks agree on the
 * outcome (iok_agree), so an error seen on one rank ends the whole job and no
 * rank waits forever in a collective. Only main() ends the process. */
#ifndef IOKERNELS_ERROR_H
#define IOKERNELS_ERROR_H

#include <mpi.h>
#include <stddef.h>

enum iok_status {
    IOK_OK = 0,
    IOK_EIO = 1,     /* I/O or runtime error */
    IOK_EUSAGE = 2,  /* bad input, option or usage */
    IOK_EVERIFY = 3, /* data read back differs from what was written */
};

/* Records the first error of this rank and returns code. printf-style. */
int iok_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Input text quoted in an error message ("got '%s'", iok_quote(token)):
 * bytes outside printable ASCII escaped as \xNN, cut after about
 * IOK_QUOTE_MAX characters of the result (then "..."), so that a binary or huge input
 * keeps the message one short line. The result lives in one of a few
 * rotating static buffers: valid until IOK_QUOTE_SLOTS more calls, enough
 * for the quotes of one message. */
#define IOK_QUOTE_MAX 60
#define IOK_QUOTE_SLOTS 4
const char *iok_quote(const char *text);
/* The same for the first len bytes of text (which need not end in '\0'). */
const char *iok_quote_n(const char *text, size_t len);

/* The message recorded by iok_error on this rank ("" if none). */
const char *iok_errmsg(void);

/* Forget the recorded message (used by tests that expect several errors). */
void iok_error_clear(void);
/* The same, and the job's failure forgotten: the next run in this process
 * (a case of --check-batch) starts as a job of its own. */
void iok_error_reset_job(void);
/* This rank's error is a consequence of one already reported (a close
 * failing after a failed write): it is agreed on, but not printed again. */
void iok_error_spent(void);
/* Adds context to the recorded message, if there is one (returns 1 then). */
int iok_error_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Every rank passes its own status; all ranks get the worst one (highest code
 * wins: usage beats I/O). The lowest rank that failed prints its message once
 * to stderr as "iokernels: error: ..." so the user sees one line. */
int iok_agree(MPI_Comm comm, int status);
/* The same, carrying up to IOK_AGREE_MAX_VALUES more values reduced by MAX in
 * the same call (v, n: in this rank's, out the maximum over ranks). */
#define IOK_AGREE_MAX_VALUES 30
int iok_agree_max(MPI_Comm comm, int status, int *v, int n);
/* A barrier of the suite's own, which never meets a library's collective
 * (the agreements' communicator); bounded once the job has failed. */
void iok_barrier(MPI_Comm comm);

#define IOK_TRY(call)                                                                              \
    do {                                                                                           \
        int iok_try_rc_ = (call);                                                                  \
        if (iok_try_rc_ != IOK_OK)                                                                 \
            return iok_try_rc_;                                                                    \
    } while (0)

#endif
