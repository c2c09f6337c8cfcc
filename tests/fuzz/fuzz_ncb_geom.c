/* SPDX-License-Identifier: BSD-3-Clause */
/* NetCDF-Bench geometries: "t:x:y:z" strings, then the decomposition of a
 * data geometry into blocks for a few rank counts. Input: up to three
 * geometries separated by newlines (data, block, chunk). */
#include "fuzz.h"
#include "kernels/ncbench/ncb_geom.h"

void
fuzz_one(const char *text, size_t size)
{
    (void)size;
    char *copy = strdup(text), *save = NULL;
    int64_t dims[3][NCB_NDIMS];
    int n = 0;
    for (char *line = strtok_r(copy, "\n", &save); line && n < 3;
         line = strtok_r(NULL, "\n", &save)) {
        iok_error_clear();
        if (ncb_parse_geom(line, "--data-geometry", dims[n]) != 0) {
            fuzz_check_message("ncb_parse_geom", iok_errmsg());
            free(copy);
            return;
        }
        n++;
    }
    free(copy);
    if (n == 0)
        return;
    int64_t e = ncb_elems(dims[0]);
    char pretty[64];
    ncb_pretty_size(e > 0 && e < INT64_MAX / 8 ? e * 8 : e, pretty, sizeof pretty);
}
