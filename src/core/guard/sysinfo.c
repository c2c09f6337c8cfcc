/* SPDX-License-Identifier: BSD-3-Clause */
/* What the operating system says: peak memory, the file system written to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "core/guard/guard.h"

/* The process's peak before the last reset of VmHWM: a reset also resets
 * getrusage's ru_maxrss (both read the same high-water mark), so the peak
 * of the whole process is kept here, as a running maximum. */
static int64_t peak_before_reset;

int
iok_mem_reset_peak(void)
{
    int64_t now = iok_mem_peak_bytes();
    if (now > peak_before_reset)
        peak_before_reset = now;
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int64_t
iok_mem_peak_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    int64_t kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

int64_t
iok_mem_process_peak_bytes(void)
{
    int64_t peak = iok_mem_peak_bytes();
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0 && (int64_t)ru.ru_maxrss * 1024 > peak)
        peak = (int64_t)ru.ru_maxrss * 1024; /* kB on Linux */
    return peak > peak_before_reset ? peak : peak_before_reset;
}

static const struct {
    long magic;
    const char *name;
} fs_names[] = {
    {0xEF53, "ext4"},        {0x58465342, "xfs"},      {0x9123683E, "btrfs"}, {0x01021994, "tmpfs"},
    {0x794c7630, "overlay"}, {0x0BD00BD0, "lustre"},   {0x47504653, "gpfs"},  {0x6969, "nfs"},
    {0x65735546, "fuse"},    {0x73717368, "squashfs"}, {0x2FC12FC1, "zfs"},   {0x00c36400, "ceph"},
};

void
iok_dirname(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, len, ".");
}

void
iok_fs_describe(const char *path, char *fstype, size_t len, int64_t *free_bytes)
{
    char dir[4096];
    iok_dirname(path, dir, sizeof dir);
    struct statfs sf;
    struct statvfs sv;
    snprintf(fstype, len, "unknown");
    *free_bytes = -1;
    if (statfs(dir, &sf) == 0) {
        snprintf(fstype, len, "0x%lx", (unsigned long)sf.f_type);
        for (size_t i = 0; i < sizeof fs_names / sizeof fs_names[0]; i++)
            if ((unsigned long)fs_names[i].magic == (unsigned long)sf.f_type)
                snprintf(fstype, len, "%s", fs_names[i].name);
    }
    if (statvfs(dir, &sv) == 0)
        *free_bytes = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
}

void
iok_osbytes_now(struct iok_osbytes *b)
{
    b->rchar = b->wchar = b->read_bytes = b->write_bytes = -1;
    FILE *f = fopen("/proc/self/io", "r");
    if (!f)
        return;
    char key[64];
    long long v;
    while (fscanf(f, "%63[^:]: %lld\n", key, &v) == 2) {
        if (!strcmp(key, "rchar"))
            b->rchar = v;
        else if (!strcmp(key, "wchar"))
            b->wchar = v;
        else if (!strcmp(key, "read_bytes"))
            b->read_bytes = v;
        else if (!strcmp(key, "write_bytes"))
            b->write_bytes = v;
    }
    fclose(f);
}
