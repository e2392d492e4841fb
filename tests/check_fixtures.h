/* check_fixtures.h -- small hand-made hardware descriptions with round numbers, so every expected
 * cost in the tests can be worked by hand. Sources are "test fixture": the figures are invented. */
#ifndef DSE_CHECK_FIXTURES_H
#define DSE_CHECK_FIXTURES_H

/* GPU: matrix fp16 10 units x 1000 FLOP/cycle x 1000 MHz = 1e13 FLOP/s; vector fp16/fp32 1e12.
 * L2 cache 1 MiB at 1000 GB/s and 1 pJ/B; DRAM 16 GiB at 100 GB/s and 10 pJ/B; 5 us per op;
 * idle 10 W; MAC 0.5 pJ. */
static const char FIX_GPU[] =
    "{\"schema\":\"dse-hwdesc-1\",\"name\":\"fix-gpu\",\"devices\":[{\"name\":\"gpu\",\"class\":\"gpu\","
    "\"process_nm\":45,\"clock\":{\"base_MHz\":1000,\"boost_MHz\":1000,\"source\":\"test fixture\"},"
    "\"compute\":["
    "{\"engine\":\"matrix\",\"precision\":\"fp16\",\"units\":10,\"flops_per_cycle_per_unit\":1000,"
    "\"headline_TFLOPS\":10,\"energy_pJ_per_mac\":0.5,\"source\":\"test fixture\"},"
    "{\"engine\":\"vector\",\"precision\":\"fp16\",\"units\":10,\"flops_per_cycle_per_unit\":100,"
    "\"energy_pJ_per_mac\":1,\"source\":\"test fixture\"},"
    "{\"engine\":\"vector\",\"precision\":\"fp32\",\"units\":10,\"flops_per_cycle_per_unit\":100,"
    "\"energy_pJ_per_mac\":2,\"source\":\"test fixture\"}],"
    "\"memory\":[{\"name\":\"l2\",\"kind\":\"cache\",\"capacity_MiB\":1,\"bandwidth_GBps\":1000,"
    "\"energy_pJ_per_byte\":1,\"source\":\"test fixture\"},"
    "{\"name\":\"dram\",\"kind\":\"dram\",\"capacity_GiB\":16,\"bandwidth_GBps\":100,"
    "\"energy_pJ_per_byte\":10,\"source\":\"test fixture\"}],"
    "\"power\":{\"idle_W\":10,\"tdp_W\":100,\"source\":\"test fixture\"},"
    "\"overhead\":{\"per_op_us\":5,\"source\":\"test fixture\"}}]}";

/* CPU: vector fp32 4 cores x 32 FLOP/cycle x 2000 MHz = 256 GFLOP/s; L2 1 MiB 200 GB/s; DRAM
 * 8 GiB 20 GB/s; no per-op overhead; idle 2 W. */
static const char FIX_CPU[] =
    "{\"schema\":\"dse-hwdesc-1\",\"name\":\"fix-cpu\",\"devices\":[{\"name\":\"cpu\",\"class\":\"cpu\","
    "\"clock\":{\"base_MHz\":1000,\"boost_MHz\":2000,\"source\":\"test fixture\"},"
    "\"compute\":[{\"engine\":\"vector\",\"precision\":\"fp32\",\"units\":4,\"flops_per_cycle_per_unit\":32,"
    "\"energy_pJ_per_mac\":4,\"source\":\"test fixture\"}],"
    "\"memory\":[{\"name\":\"l2\",\"kind\":\"cache\",\"capacity_MiB\":1,\"bandwidth_GBps\":200,"
    "\"energy_pJ_per_byte\":2,\"source\":\"test fixture\"},"
    "{\"name\":\"dram\",\"kind\":\"dram\",\"capacity_GiB\":8,\"bandwidth_GBps\":20,"
    "\"energy_pJ_per_byte\":20,\"source\":\"test fixture\"}],"
    "\"power\":{\"idle_W\":2,\"tdp_W\":10,\"source\":\"test fixture\"}}]}";

/* Systolic: one 128x128 int8 array = 32768 ops/cycle x 1000 MHz = 32.768 TOPS; SRAM 24 MiB at
 * 1000 GB/s; DRAM 8 GiB at 30 GB/s. */
static const char FIX_SYSTOLIC[] =
    "{\"schema\":\"dse-hwdesc-1\",\"name\":\"fix-sys\",\"devices\":[{\"name\":\"tpu\",\"class\":\"systolic\","
    "\"clock\":{\"base_MHz\":1000,\"boost_MHz\":1000,\"source\":\"test fixture\"},"
    "\"compute\":[{\"engine\":\"matrix\",\"precision\":\"int8\",\"units\":1,\"flops_per_cycle_per_unit\":32768,"
    "\"headline_TOPS\":32.768,\"energy_pJ_per_mac\":0.2,\"source\":\"test fixture\"}],"
    "\"memory\":[{\"name\":\"sram\",\"kind\":\"sram\",\"capacity_MiB\":24,\"bandwidth_GBps\":1000,"
    "\"energy_pJ_per_byte\":1,\"source\":\"test fixture\"},"
    "{\"name\":\"dram\",\"kind\":\"dram\",\"capacity_GiB\":8,\"bandwidth_GBps\":30,"
    "\"energy_pJ_per_byte\":20,\"source\":\"test fixture\"}],"
    "\"power\":{\"idle_W\":20,\"tdp_W\":40,\"source\":\"test fixture\"}}]}";

/* A system: a CPU as above and an int8 NPU (4 TOPS: 2000 ops/cycle x 2000 MHz, 4 MiB SRAM at
 * 400 GB/s, 8 GiB host memory over the link at 1 GB/s) that runs only matmul, conv2d and eltwise;
 * PCIe link 1 GB/s, 2 us, 40 pJ/B. DRAM and host memory are DDR3: 162.5 pJ/B (hw_memtech.c). */
static const char FIX_NPU_SYSTEM[] =
    "{\"schema\":\"dse-hwdesc-1\",\"name\":\"fix-npu\",\"devices\":["
    "{\"name\":\"cpu\",\"class\":\"cpu\",\"clock\":{\"base_MHz\":1000,\"boost_MHz\":2000,\"source\":\"test fixture\"},"
    "\"compute\":[{\"engine\":\"vector\",\"precision\":\"fp32\",\"units\":4,\"flops_per_cycle_per_unit\":32,"
    "\"source\":\"test fixture\"},{\"engine\":\"vector\",\"precision\":\"int8\",\"units\":4,"
    "\"flops_per_cycle_per_unit\":128,\"source\":\"test fixture\"}],"
    "\"memory\":[{\"name\":\"dram\",\"kind\":\"dram\",\"technology\":\"ddr3\",\"capacity_GiB\":8,\"bandwidth_GBps\":20,"
    "\"source\":\"test fixture\"}],\"power\":{\"idle_W\":2,\"tdp_W\":10,\"source\":\"test fixture\"}},"
    "{\"name\":\"npu\",\"class\":\"npu\",\"clock\":{\"base_MHz\":2000,\"boost_MHz\":2000,\"source\":\"test fixture\"},"
    "\"compute\":[{\"engine\":\"matrix\",\"precision\":\"int8\",\"units\":1,\"flops_per_cycle_per_unit\":2000,"
    "\"headline_TOPS\":4,\"source\":\"test fixture\"}],"
    "\"memory\":[{\"name\":\"sram\",\"kind\":\"sram\",\"capacity_MiB\":4,\"bandwidth_GBps\":400,"
    "\"source\":\"test fixture\"},{\"name\":\"host\",\"kind\":\"host\",\"technology\":\"ddr3\",\"capacity_GiB\":8,\"bandwidth_GBps\":1,"
    "\"source\":\"test fixture\"}],\"power\":{\"idle_W\":0.5,\"tdp_W\":2,\"source\":\"test fixture\"},"
    "\"ops\":[\"matmul\",\"conv2d\",\"eltwise\"]}],"
    "\"links\":[{\"name\":\"pcie\",\"type\":\"pcie\",\"endpoints\":[\"cpu\",\"npu\"],\"bandwidth_GBps\":1,"
    "\"latency_us\":2,\"energy_pJ_per_byte\":40,\"source\":\"test fixture\"}]}";

#endif
