/* SPDX-License-Identifier: BSD-3-Clause */
/* The option parser: a command line (one argument per input line) split and
 * applied to the core's, a kernel's and every backend's table, as main.c
 * does. */
#include "core/cmd/cmd.h"
#include "fuzz.h"
#include "iokernels/backend.h"
#include "iokernels/kernel.h"

#define MAX_ARGS 64
#define MAX_SETS 16

void
fuzz_one(const char *text, size_t size)
{
    (void)size;
    char *copy = strdup(text), *save = NULL;
    char *argv[MAX_ARGS];
    int argc = 0;
    for (char *a = strtok_r(copy, "\n", &save); a && argc < MAX_ARGS;
         a = strtok_r(NULL, "\n", &save))
        argv[argc++] = a;
    /* the first argument picks the kernel's table, as on the real command line */
    const struct iok_kernel *k = argc ? iok_kernel_find(argv[0]) : NULL;
    if (!k)
        k = iok_kernel_at(0);
    struct iok_optset sets[MAX_SETS];
    void *mem[MAX_SETS] = {0};
    int nsets = 0;
    mem[nsets] = calloc(1, sizeof(struct core_flags));
    sets[nsets] = (struct iok_optset){"core", iok_core_options, mem[nsets]};
    nsets++;
    mem[nsets] = calloc(1, k->opts_size ? k->opts_size : 1);
    sets[nsets] = (struct iok_optset){k->name, k->options, mem[nsets]};
    nsets++;
    for (int i = 0; i < iok_backend_count() && nsets < MAX_SETS; i++) {
        const struct iok_backend *b = iok_backend_at(i);
        if (!b->options)
            continue;
        mem[nsets] = calloc(1, b->opts_size);
        sets[nsets] = (struct iok_optset){b->name, b->options, mem[nsets]};
        nsets++;
    }
    for (int i = 0; i < nsets; i++)
        iok_opts_defaults(&sets[i]);
    struct iok_cmdline cl;
    int rc = iok_cmdline_split(argc > 0 ? argc - 1 : 0, argv + (argc > 0), sets, nsets, &cl);
    if (rc == 0)
        rc = iok_cmdline_apply(&cl, sets, nsets);
    if (rc != 0)
        fuzz_check_message("command line", iok_errmsg());
    char out[IOK_OPT_STRLEN];
    for (int i = 0; i < nsets; i++) /* every value formats back */
        for (const struct iok_option *o = sets[i].opts; o && o->name; o++)
            iok_opts_format(&sets[i], o, out, sizeof out);
    iok_cmdline_free(&cl);
    for (int i = 0; i < nsets; i++) {
        iok_opts_release(&sets[i]);
        free(mem[i]);
    }
    free(copy);
}
