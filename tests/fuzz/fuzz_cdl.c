/* SPDX-License-Identifier: BSD-3-Clause */
/* The E3SM history schemas: the CDL reader (ncmpidump -h text). */
#include "fuzz.h"
#include "iokernels/schema.h"
#include "kernels/e3sm_common/e3sm_cdl.h"

void
fuzz_one(const char *text, size_t size)
{
    (void)size;
    struct iok_schema s;
    char err[512] = "";
    iok_schema_init(&s);
    if (e3sm_cdl_parse(text, 2, &s, err, sizeof err) != 0)
        fuzz_check_message("e3sm_cdl_parse", err);
    iok_schema_free(&s);
}
