/* The per-rank error message and the agreement on the worst status. */
#include "iokernels/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char errmsg[2048];
static int reported; /* the last failure was printed; its message is spent */

int
iok_error(int code, const char *fmt, ...)
{
    if (errmsg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errmsg, sizeof errmsg, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *
iok_errmsg(void)
{
    return errmsg;
}

void
iok_error_clear(void)
{
    errmsg[0] = '\0';
    reported = 0;
}

int
iok_agree(MPI_Comm comm, int status)
{
    return iok_agree_max(comm, status, NULL, 0);
}

int
iok_agree_max(MPI_Comm comm, int status, int *v, int n)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    /* [0]: worst code; [1]: lowest failing rank (as nprocs - rank for MAX);
     * then the caller's values, in the same reduction. */
    int buf[2 * 8], *mine = buf, *all = buf + 8;
    if (n > 6)
        n = 6;
    mine[0] = status;
    mine[1] = status != IOK_OK ? nprocs - rank : 0;
    for (int i = 0; i < n; i++)
        mine[2 + i] = v[i];
    MPI_Allreduce(mine, all, 2 + n, MPI_INT, MPI_MAX, comm);
    for (int i = 0; i < n; i++)
        v[i] = all[2 + i];
    /* An error agreed on twice (a helper agrees, then its caller) prints
     * once: printing spends the message. */
    if (all[0] != IOK_OK && all[1] == nprocs - rank && (errmsg[0] || !reported)) {
        fprintf(stderr, "iokernels: error: %s\n",
                errmsg[0] ? errmsg : "unspecified failure (no message recorded)");
        fflush(stderr);
    }
    if (all[0] != IOK_OK && status != IOK_OK) {
        errmsg[0] = '\0';
        reported = 1;
    }
    return all[0];
}
