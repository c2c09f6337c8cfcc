/* SPDX-License-Identifier: BSD-3-Clause */
/* A backend executes a kernel's description with one I/O library. It never
 * knows which kernel produced the schema and the requests, and it never
 * times or reports anything: the core times each call from outside.
 *
 * Each entry point is one timed phase:
 *   create + define   (write)  or  open   (read)
 *   xfer              post the step's accesses, to the file (IOK_DIR_WRITE)
 *                     or from it (IOK_DIR_READ)
 *   wait              complete what xfer posted (NULL when every call blocks)
 *   flush             make written data durable (--fsync), inside the write
 *   close
 * Errors: return an iok_status after iok_error() with a message naming the
 * file and the library call. Collective calls must be entered by every rank
 * even when its own list is empty. */
#ifndef IOKERNELS_BACKEND_H
#define IOKERNELS_BACKEND_H

#include <mpi.h>

#include "iokernels/error.h"
#include "iokernels/options.h"
#include "iokernels/request.h"
#include "iokernels/schema.h"

#define IOK_BACKEND_ABI 2 /* 2: one xfer entry where put and get were */

/* A transfer's direction (as IOR's xfer(access, ...)): a backend whose put
 * and get differ only in it serves both from one function. */
enum iok_dir { IOK_DIR_WRITE, IOK_DIR_READ };

enum iok_api { IOK_API_BLOCKING, IOK_API_NONBLOCKING, IOK_API_VARN };

enum iok_caps {
    IOK_CAP_COLLECTIVE = 1u << 0,  /* collective transfers */
    IOK_CAP_INDEPENDENT = 1u << 1, /* independent transfers */
    IOK_CAP_NONBLOCKING = 1u << 2, /* --api nonblocking */
    IOK_CAP_VARN = 1u << 3,        /* --api varn */
    IOK_CAP_ATTRS = 1u << 4,       /* stores attributes (self-describing) */
    IOK_CAP_NOIO = 1u << 5,        /* moves no bytes (the null backend) */
    IOK_CAP_CHUNKS = 1u << 6,      /* honours iok_var.chunk (chunked storage) */
    IOK_CAP_FILL = 1u << 7,        /* honours iok_var.fill */
    IOK_CAP_DEFLATE = 1u << 8,     /* honours iok_var.deflate */
    IOK_CAP_GROUPS = 1u << 9,      /* schema groups: group paths, attributes on groups */
    IOK_CAP_COMPOUND = 1u << 10,   /* schema compound types on variables and attributes */
    IOK_CAP_HINTS = 1u << 11,      /* hands iok_backend_params.info to its library */
    /* collective mode needs each access's calls_max (request.h): the core
     * agrees on it once per step, untimed, before xfer */
    IOK_CAP_AGREED_CALLS = 1u << 12,
    /* stores fixed dimensions of length 0 (variables without elements):
     * NetCDF has none (length 0 means unlimited) */
    IOK_CAP_EMPTY_DIMS = 1u << 13,
    /* honours each list's own level (iok_reqlist.level): collective and
     * independent calls in one run */
    IOK_CAP_CALL_LEVEL = 1u << 14,
    /* honours iok_backend_params.readwrite: create() opens the new file for
     * reading too, so that a read xfer may read what a write xfer wrote before close */
    IOK_CAP_READWRITE = 1u << 15,
};

/* What the core hands a backend when it creates or opens a file. */
struct iok_backend_params {
    MPI_Comm comm;
    int collective;   /* 1 collective, 0 independent transfers */
    enum iok_api api; /* checked against caps by the core */
    const void *opts; /* the backend's own option struct */
    /* The run's hints (--hints, --hints-file), built once by the core:
     * MPI_INFO_NULL when none. A backend with IOK_CAP_HINTS passes it to its
     * library's create and open (MPI_File_open, ncmpi_create, the mpio fapl,
     * nc_create_par) through iok_params_info() and never frees it. Environment variables the
     * libraries read themselves (ROMIO_HINTS, PNETCDF_HINTS) apply on top. */
    MPI_Info info;
    /* create(): 1 opens the new file for reading as well as writing (the
     * core's interleaved pass over a file it both writes and reads, for
     * backends with IOK_CAP_READWRITE); 0: write-only, as every write pass */
    int readwrite;
};

struct iok_backend {
    int abi; /* IOK_BACKEND_ABI */
    const char *name;
    const char *summary;
    const char *ext; /* file name extension, with the dot: ".nc" */
    unsigned caps;
    const struct iok_option *options; /* may be NULL */
    size_t opts_size;

    /* Library name and version, e.g. "PnetCDF 1.12.3". */
    const char *(*version)(void);

    int (*create)(void **handle, const char *path, const struct iok_schema *s,
                  const struct iok_backend_params *p);
    int (*define)(void *handle); /* dimensions, variables, attributes; end define */
    /* Opens an existing file for reading; checks that every variable of s is
     * there with the expected shape (records at least as many as s says). */
    int (*open)(void **handle, const char *path, const struct iok_schema *s,
                const struct iok_backend_params *p);
    /* Optional (NULL = none), not timed: validates a step's list against
     * what the backend can do and sets acc[i].calls (this rank's library
     * calls for access i; the core has set it to nsub). Called by the core
     * before the ranks agree on the step, so that xfer neither checks nor
     * agree inside the timed region. */
    int (*prepare)(void *handle, struct iok_reqlist *r);
    /* Posts the step's accesses: writes r's buffers (IOK_DIR_WRITE, which
     * leaves them as they are) or reads into them (IOK_DIR_READ). */
    int (*xfer)(void *handle, enum iok_dir dir, struct iok_reqlist *r);
    int (*wait)(void *handle);  /* may be NULL: every call of xfer blocks */
    int (*flush)(void *handle); /* may be NULL: then --fsync is refused */
    int (*close)(void *handle);
    /* May be NULL. The hints in effect on an open file, as the library
     * reports them (MPI_File_get_info, ncmpi_inq_file_info, ...): a new
     * info in *out that the core frees, or MPI_INFO_NULL when the library
     * cannot tell. Called by the core on every rank, untimed, after
     * create + define or open. Not collective unless the backend says so. */
    int (*info)(void *handle, MPI_Info *out);
};

/* Completes what xfer posted (nothing when the backend has no wait). */
static inline int
iok_backend_wait(const struct iok_backend *b, void *handle)
{
    return b->wait ? b->wait(handle) : IOK_OK;
}

/* A backend that compresses (IOK_CAP_DEFLATE) through a parallel library
 * that compresses only in collective transfers (parallel HDF5, NetCDF-4 on
 * it): every variable's deflate level is 0-9, and none is above 0 unless
 * the transfers are collective. library: named in the message. */
static inline int
iok_backend_check_deflate(const char *path, const struct iok_schema *s,
                          const struct iok_backend_params *p, const char *library)
{
    for (int v = 0; v < s->nvars; v++) {
        int level = s->vars[v].deflate;
        if (level < 0 || level > 9)
            return iok_error(IOK_EUSAGE, "%s: variable %s asks for deflate level %d: use 0-9", path,
                             s->vars[v].name, level);
        if (level > 0 && !p->collective)
            return iok_error(IOK_EUSAGE,
                             "%s: variable %s is compressed (deflate %d): parallel %s writes "
                             "compressed data only with collective transfers",
                             path, s->vars[v].name, level, library);
    }
    return IOK_OK;
}

/* The info to hand the library: p->info, or MPI_INFO_NULL when the caller
 * left the field zero (a zero MPI_Info is not MPI_INFO_NULL in OpenMPI). */
static inline MPI_Info
iok_params_info(const struct iok_backend_params *p)
{
    return p->info ? p->info : MPI_INFO_NULL;
}

/* The registry, generated at configure time from the backends built.
 * Backends other than null and mpiio are modules loaded on first use
 * (iokernels/module.h): iok_backend_find and iok_backend_at load them and
 * return NULL when the load fails, its reason kept for iok_backend_error_at
 * (not left in iok_error: a backend the run does not choose is no error of
 * the run); iok_backend_known, iok_backend_name_at and
 * iok_backend_loaded_at never load anything. */
const struct iok_backend *iok_backend_find(const char *name);
int iok_backend_known(const char *name);
int iok_backend_count(void);
const char *iok_backend_name_at(int i);
const struct iok_backend *iok_backend_at(int i);
const struct iok_backend *iok_backend_loaded_at(int i);
/* Why backend i's module did not load; NULL when it loaded or was not tried. */
const char *iok_backend_error_at(int i);

#endif
