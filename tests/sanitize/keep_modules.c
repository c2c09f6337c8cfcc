/* SPDX-License-Identifier: BSD-3-Clause */
/* LD_PRELOAD'ed under the sanitizers only: dlclose() does nothing, so that
 * the plugins OpenMPI (and HDF5) unload at finalize stay mapped and
 * LeakSanitizer can name their leaks ("<unknown module>" otherwise), which
 * lsan.supp then suppresses by library. Our own leaks are still reported. */
int
dlclose(void *handle)
{
    (void)handle;
    return 0;
}
