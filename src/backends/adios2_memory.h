/* SPDX-License-Identifier: BSD-3-Clause */
/* ADIOS2 2.12's BP5 writer copies every put it does not defer (a sync put,
 * or a deferred one below MinDeferredSize, 4 MiB) into chunks of
 * BufferChunkSize (128 MiB unless set): a new chunk of the larger of that
 * and the put when the put does not fit the last one, again after each data
 * write (FlushData) and each step. When that allocation fails, ChunkV says
 * so on stdout and carries on with no chunk: SIGSEGV in ChunkV::AddToVec
 * under ulimit -v, even for a step of 1 MiB. Under an address-space limit
 * the backend follows the chunks as ADIOS2 fills them and, before a put
 * that starts one, reserves (maps and unmaps, touching nothing) what the
 * chunk will take: when that fails, the put fails with a line naming
 * memory, before the library is called. Included by adios2.c only. */
#ifndef IOK_ADIOS2_MEMORY_H
#define IOK_ADIOS2_MEMORY_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "adios2_param.h"
#include "iokernels/error.h"

#define A2_CHUNK_DEFAULT ((size_t)128 << 20)  /* ADIOS2's DefaultBufferChunkSize */
#define A2_DEFERRED_DEFAULT ((size_t)4 << 20) /* ADIOS2's DefaultMinDeferredSize */
#define A2_CHUNK_SLACK ((size_t)64 << 10)     /* its block rounding and alignment */

struct a2_mem {
    unsigned long long limit_kib; /* the address-space limit; 0: none, nothing checked */
    size_t chunk, min_deferred;
    size_t tail; /* bytes in the chunk being filled; 0: none yet */
};

/* The value of `key` as ADIOS2 reads a size (digits, then b, kb, mb or gb
 * in any case, powers of 1024), or `def`. */
static size_t
a2_param_bytes(const char *params, const char *key, size_t def)
{
    const char *v = a2_param_find(params, key);
    char *end;
    unsigned long long n = v ? strtoull(v, &end, 10) : 0;
    if (!v || end == v)
        return def;
    int shift = !strncasecmp(end, "gb", 2)   ? 30
                : !strncasecmp(end, "mb", 2) ? 20
                : !strncasecmp(end, "kb", 2) ? 10
                                             : 0;
    return (size_t)(n << shift);
}

/* For a BP5 writer with `params` (the engine's): the limit, and the chunk
 * sizes ADIOS2 will use (none followed with BufferVType=malloc). */
static void
a2_mem_init(struct a2_mem *m, const char *engine, const char *params)
{
    struct rlimit r;
    memset(m, 0, sizeof *m);
    const char *vtype = a2_param_find(params, "BufferVType");
    if (strcmp(engine, "BP5") || (vtype && !strncasecmp(vtype, "malloc", 6)) ||
        getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
        return;
    m->limit_kib = (unsigned long long)r.rlim_cur / 1024;
    m->chunk = a2_param_bytes(params, "BufferChunkSize", A2_CHUNK_DEFAULT);
    m->min_deferred = a2_param_bytes(params, "MinDeferredSize", A2_DEFERRED_DEFAULT);
}

/* Before a put of `bytes` (deferred: --api nonblocking). */
static int
a2_mem_before_put(struct a2_mem *m, size_t bytes, int deferred, const char *path, int rank)
{
    if (!m->limit_kib || (deferred && bytes >= m->min_deferred)) /* not copied */
        return IOK_OK;
    if (m->tail && m->tail + bytes <= m->chunk) {
        m->tail += bytes;
        return IOK_OK;
    }
    size_t need = (bytes > m->chunk ? bytes : m->chunk) + A2_CHUNK_SLACK;
    void *p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return iok_error(IOK_EIO,
                         "out of memory: ADIOS2's BP5 writer of %s needs a buffer chunk of %zu "
                         "MiB on rank %d, more than its address-space limit (ulimit -v %llu KiB) "
                         "leaves; raise the limit, or take smaller chunks (--adios2-params "
                         "BufferChunkSize=16Mb)",
                         path, need >> 20, rank, m->limit_kib);
    munmap(p, need);
    m->tail = bytes;
    return IOK_OK;
}

/* After ADIOS2 wrote the data it held (a data write, the end of a step):
 * its next put starts a new chunk. */
static void
a2_mem_flushed(struct a2_mem *m)
{
    m->tail = 0;
}

#endif
