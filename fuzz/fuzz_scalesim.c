/* fuzz_scalesim.c -- libFuzzer target for SCALE-Sim configurations (hw_load_scalesim_buf) and the
 * systolic tier's replay of SCALE-Sim's memory (model_systolic_layer).
 *
 * The first 6 bytes choose a GEMM (M, K, N each 1..512, two bytes apiece, the low 9 bits); the rest is the .cfg
 * text. A configuration that loads is replayed on that GEMM: no crash, no hang (the replay refuses a
 * layer over MODEL_SA_MAX_STEPS steps), totals = compute + stalls, stalls >= 0.
 * Build and run: sh fuzz/run.sh [seconds] scalesim */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "hw.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6)
        return 0;
    double dim[3];
    for (int i = 0; i < 3; i++)
        dim[i] = 1 + ((data[2 * i] | data[2 * i + 1] << 8) & 511); /* up to 512: replays stay short, and
                                                                   the loader gets the executions */
    static struct hw_system sys; /* large: not on the stack */
    struct dse_err e;
    if (hw_load_scalesim_buf((const char *)data + 6, (unsigned long)(size - 6), "fuzz.cfg", &sys, &e) != DSE_OK)
        return 0;
    struct sa_report r;
    if (model_systolic_layer(&sys.dev[0], dim[0], dim[1], dim[2], 1, &r) == 0 &&
        (r.stall_cycles < 0 || r.total_cycles != r.compute_cycles + r.stall_cycles))
        abort();
    return 0;
}
