/* SPDX-License-Identifier: BSD-3-Clause */
/* The null backend: every call returns at once and moves no bytes. It
 * measures the core itself: its I/O phase times must be ~0. */
#include <stdlib.h>

#include "iokernels/backend.h"
#include "iokernels/error.h"

static int dummy_handle;

static const char *
null_version(void)
{
    return "none";
}

static int
null_create(void **h, const char *path, const struct iok_schema *s,
            const struct iok_backend_params *p)
{
    *h = &dummy_handle;
    return IOK_OK;
}

static int
null_define(void *h)
{
    return IOK_OK;
}

static int
null_xfer(void *h, enum iok_dir dir, struct iok_reqlist *r)
{
    return IOK_OK;
}

const struct iok_backend iok_backend_null = {
    .abi = IOK_BACKEND_ABI,
    .name = "null",
    .summary = "no I/O at all (measures the core; reads cannot verify)",
    .ext = ".null",
    .caps = IOK_CAP_COLLECTIVE | IOK_CAP_INDEPENDENT | IOK_CAP_NONBLOCKING | IOK_CAP_VARN |
            IOK_CAP_NOIO | IOK_CAP_EMPTY_DIMS | IOK_CAP_READWRITE,
    .version = null_version,
    .create = null_create,
    .define = null_define,
    .open = null_create,
    .xfer = null_xfer,
    .flush = null_define,
    .close = null_define,
};
