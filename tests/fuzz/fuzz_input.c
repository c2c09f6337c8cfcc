/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernels' own input files (BTIO's inputbt.data, AMReX's ParmParse
 * inputs, Chombo's input file, e3sm-decomp's list), read into the option
 * sets exactly as main.c does. FUZZ_KERNEL names the kernel at build time. */
#include "core/cmd/cmd.h"
#include "fuzz.h"
#include "iokernels/backend.h"
#include "iokernels/kernel.h"

#define STR2(x) #x
#define STR(x) STR2(x)

void
fuzz_one(const char *text, size_t size)
{
    (void)size;
    const struct iok_kernel *k = iok_kernel_find(STR(FUZZ_KERNEL));
    if (!k || !k->read_input)
        abort();
    struct core_flags core = {0}; /* zeroed: defaults frees a heap string it replaces */
    void *kopts = calloc(1, k->opts_size ? k->opts_size : 1);
    struct iok_optset sets[2] = {{"core", iok_core_options, &core}, {k->name, k->options, kopts}};
    for (int i = 0; i < 2; i++)
        iok_opts_defaults(&sets[i]);
    if (k->read_input(text, "fuzz.input", sets, 2) != 0)
        fuzz_check_message("read_input", iok_errmsg());
    for (int i = 0; i < 2; i++)
        iok_opts_release(&sets[i]);
    free(kopts);
}
