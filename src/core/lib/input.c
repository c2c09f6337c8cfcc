/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank 0 reads an input file whole and broadcasts it (see input.h). */
#include "iokernels/input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "iokernels/error.h"

/* Every input read here is text, which C reads up to its first NUL: a NUL
 * byte would silently end the input there (a replay file's operations
 * after it dropped, exit 0), so it is refused, naming its line. */
static int
nul_line(const char *text, long len, const char *path, const char *what)
{
    const char *nul = memchr(text, '\0', (size_t)len);
    if (!nul)
        return 0;
    int line = 1;
    for (const char *p = text; p < nul; p++)
        line += *p == '\n';
    iok_error(IOK_EUSAGE,
              "%s line %d: a NUL byte (at byte %ld): the %s must be text; is it the right file, "
              "copied whole?",
              path, line, (long)(nul - text), what);
    return 1;
}

/* Returns the length read, -1 for "absent", -2 for an error (recorded). */
static long
read_local(const char *path, const char *what, int optional, char **text)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT && optional)
            return -1;
        iok_error(IOK_EUSAGE, "cannot open %s %s (%s): check the path", what, path,
                  strerror(errno));
        return -2;
    }
    if (!S_ISREG(st.st_mode)) {
        iok_error(IOK_EUSAGE, "%s %s is not a regular file: name the file itself", what, path);
        return -2;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        iok_error(IOK_EUSAGE, "cannot open %s %s (%s): check its permissions", what, path,
                  strerror(errno));
        return -2;
    }
    long len = (long)st.st_size;
    *text = malloc((size_t)len + 1);
    if (!*text || fread(*text, 1, (size_t)len, f) != (size_t)len) {
        iok_error(IOK_EUSAGE, "cannot read %s %s (%s)", what, path,
                  *text ? strerror(errno) : "out of memory");
        len = -2;
    }
    fclose(f);
    if (len >= 0 && nul_line(*text, len, path, what))
        len = -2;
    return len;
}

int
iok_read_text(const char *path, const char *what, char **text)
{
    *text = NULL;
    long len = read_local(path, what, 0, text);
    if (len < 0) {
        free(*text);
        *text = NULL;
        return IOK_EUSAGE;
    }
    (*text)[len] = '\0';
    return IOK_OK;
}

int
iok_read_shared_text(const char *path, const char *what, MPI_Comm comm, int optional, char **text)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    long len = -1;
    *text = NULL;
    if (rank == 0)
        len = read_local(path, what, optional, text);
    MPI_Bcast(&len, 1, MPI_LONG, 0, comm);
    if (len < 0) {
        free(*text);
        *text = NULL;
        return iok_agree(comm, len == -1 ? IOK_OK : IOK_EUSAGE);
    }
    if (rank != 0)
        *text = malloc((size_t)len + 1);
    int ok = *text != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) {
        free(*text);
        *text = NULL;
        return iok_agree(comm, ok ? IOK_OK : iok_error(IOK_EIO, "out of memory for %s", path));
    }
    MPI_Bcast(*text, (int)len, MPI_CHAR, 0, comm);
    (*text)[len] = '\0';
    return IOK_OK;
}
