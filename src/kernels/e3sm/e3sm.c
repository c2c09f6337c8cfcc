/* E3SM-IO: stub while the layers land. */
#include "iokernels/error.h"
#include "iokernels/kernel.h"

static int
e3sm_plan(const void *kopts, const struct iok_run *run, struct iok_plan *plan)
{
    return iok_error(IOK_EUSAGE, "e3sm: not yet");
}

const struct iok_kernel iok_kernel_e3sm = {
    .name = "e3sm",
    .summary = "E3SM-IO F, G and I cases from decomposition files",
    .plan = e3sm_plan,
};
