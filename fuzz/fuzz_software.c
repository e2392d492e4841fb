/* fuzz_software.c -- libFuzzer target for the software stack loader (pass_load_buf): the schema,
 * targets, passes, memory planner and runtime fields of software/NAME.json and their bounds.
 * Build and run: sh fuzz/run.sh [seconds] software */
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "pass.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sw_stack s;
    struct dse_err e;
    dse_err_clear(&e);
    (void)pass_load_buf((const char *)data, (unsigned long)size, "fuzz.json", &s, &e);
    return 0;
}
