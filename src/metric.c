/* metric.c -- the metric registry. */
#include "metric.h"

#include <math.h>

#include <stddef.h>
#include <string.h>

#include "errbar.h"

#define F(field) offsetof(struct eval_totals, field)
#define LM ((1u << PH_PREFILL) | (1u << PH_DECODE) | (1u << PH_GENERATE))
#define TOK (LM | (1u << PH_TRAIN)) /* phases with tokens */
#define TRAIN (1u << PH_TRAIN)
#define ALL ((1u << PH_NONE) | LM | TRAIN) /* every phase: what a serving point also defines */
#define SRV METRIC_SERVE

const struct metric metric_table[] = {
    {"latency_ms", "ms", DIR_MIN, "end-to-end time of the evaluated phase", F(latency_s), 1e3, 0, 1},
    {"throughput_per_s", "1/s", DIR_MAX, "inferences (sequences) per second: batch / latency", F(throughput_per_s), 1, 0, -1},
    {"energy_mJ", "mJ", DIR_MIN, "energy of the evaluated phase, static included", F(energy_J), 1e3, 0, 0},
    {"avg_power_W", "W", DIR_MIN, "energy / latency", F(avg_power_W), 1, 0, 0},
    {"throttle_slowdown", "1", DIR_MIN, "latency / unthrottled latency: above 1 when a device throttled to fit its TDP or power cap", F(throttle_slowdown), 1, 0, 0},
    {"peak_memory_MB", "MB", DIR_MIN, "weights + KV cache + peak live activations (training: + gradients + optimizer states; per device of a layout)", F(peak_memory_bytes), 1e-6, 0, 0},
    {"grad_MB", "MB", DIR_MIN, "training: fp32 gradients per device (sharded from ZeRO 2)", F(grad_bytes), 1e-6, TRAIN, 0},
    {"optimizer_MB", "MB", DIR_MIN, "training: optimizer states (and fp32 master weights) per device (sharded from ZeRO 1)", F(optimizer_bytes), 1e-6, TRAIN, 0},
    {"kv_cache_MB", "MB", DIR_MIN, "KV cache at its largest", F(kv_bytes), 1e-6, LM, 0},
    {"macs", "MAC", DIR_NONE, "multiply-accumulates", F(macs), 1, 0, 0},
    {"flops", "FLOP", DIR_NONE, "arithmetic operations (a MAC is 2)", F(flops), 1, 0, 0},
    {"params", "1", DIR_NONE, "parameters", F(params), 1, 0, 0},
    {"active_params", "1", DIR_NONE, "parameters one token uses (MoE: its top-k routed experts, not all)", F(active_params), 1, 0, 0},
    {"weight_bytes", "B", DIR_MIN, "weights at the weight precision", F(weight_bytes), 1, 0, 0},
    {"ttft_ms", "ms", DIR_MIN, "time to first token (prefill)", F(ttft_s), 1e3, (1u << PH_PREFILL) | (1u << PH_GENERATE), 1},
    {"tpot_ms", "ms", DIR_MIN, "time per output token (mean decode step)", F(tpot_s), 1e3, (1u << PH_DECODE) | (1u << PH_GENERATE), 1},
    {"tokens_per_s", "token/s", DIR_MAX, "tokens per second over the phase (generate: batch x output tokens / latency)", F(tokens_per_s), 1, TOK, -1},
    {"tokens_per_s_per_device", "token/s", DIR_MAX, "tokens_per_s / devices of the layout", F(tokens_per_s_per_device), 1, TOK, -1},
    {"mfu_pct", "%", DIR_MAX, "training: model FLOPs utilisation, 6 N per token (N all parameters, no attention term; non-transformers 3 x the forward's FLOPs) / (step time x devices x GEMM peak)", F(mfu_pct), 1, TRAIN, -1},
    {"tflops_per_device", "TFLOP/s", DIR_MAX, "training: model FLOPs (as mfu_pct) per device per second", F(tflops_per_device), 1, TRAIN, -1},
    {"decode_tokens_per_s", "token/s", DIR_MAX, "batch / time per output token", F(decode_tokens_per_s), 1, (1u << PH_DECODE) | (1u << PH_GENERATE), -1},
    {"energy_per_token_mJ", "mJ", DIR_MIN, "energy / tokens of the phase", F(energy_per_token_J), 1e3, TOK, 0},
    {"energy_per_inference_mJ", "mJ", DIR_MIN, "energy / batch (per sequence or input)", F(energy_per_inference_J), 1e3, 0, 0},
    {"cost_per_Mtoken_USD", "USD", DIR_MIN, "purchase price over its amortisation, rent and hosting, at the stated utilisation, + electricity x PUE (dse eval prints the assumptions; sweep: the spec's cost), per million tokens", F(cost_per_Mtoken_USD), 1, TOK, 1},
    {"cost_per_Minference_USD", "USD", DIR_MIN, "as cost_per_Mtoken_USD, per million inferences (sequences)", F(cost_per_Minference_USD), 1, 0, 1},
    {"tokens_per_J", "1/J", DIR_MAX, "tokens per joule: tokens_per_s per watt of avg_power_W (performance per watt)",
     F(tokens_per_J), 1, TOK, 0},
    {"inferences_per_J", "1/J", DIR_MAX, "inferences (sequences) per joule: throughput_per_s per watt", F(inferences_per_J),
     1, 0, 0},
    {"tokens_per_USD", "1/USD", DIR_MAX, "tokens per dollar at the cost assumptions (performance per dollar): 1e6 / "
     "cost_per_Mtoken_USD", F(tokens_per_USD), 1, TOK, -1},
    {"inferences_per_USD", "1/USD", DIR_MAX, "inferences (sequences) per dollar at the cost assumptions",
     F(inferences_per_USD), 1, 0, -1},
    {"cost_USD", "USD", DIR_MIN, "as cost_per_Mtoken_USD, of the evaluated phase (a training step: cost per step)", F(cost_USD), 1, 0, 1},
    {"quality_loss_pct", "%", DIR_MIN, "expected quality loss of the precisions used: the published relative loss (perplexity up, accuracy down) in % of the model's 16-bit baseline (validate/quality); the measured GEMM error where none is published (docs/models.md); also accepted as accuracy_proxy", F(quality_loss_pct), 1, 0, 0},
    {"compute_ms", "ms", DIR_NONE, "sum of operator compute times", F(compute_s), 1e3, 0, 0},
    {"memory_ms", "ms", DIR_NONE, "sum of operator memory times", F(memory_s), 1e3, 0, 0},
    {"overhead_ms", "ms", DIR_NONE, "sum of fixed per-operator costs", F(overhead_s), 1e3, 0, 0},
    {"transfer_ms", "ms", DIR_NONE, "link transfers: inputs of operators placed on another device, collectives and pipeline sends", F(xfer_s), 1e3, 0, 0},
    {"comm_total_ms", "ms", DIR_NONE, "collectives and pipeline sends over the topology (tp, cp, ep, pp, dp's gradient and weight collectives), each whole, whether a stack's overlap hides it under compute or not", F(comm_total_s), 1e3, 0, 0},
    {"comm_exposed_ms", "ms", DIR_NONE, "of comm_total_ms and of transfer_ms: the collectives' and sends' time that adds to the latency (not hidden under compute)", F(comm_s), 1e3, 0, 0},
    {"runtime_ms", "ms", DIR_NONE, "host and runtime time the devices do not hide: kernel issue beyond device time, per-step and per-request work", F(runtime_s), 1e3, 0, 0},
    {"contexts", "1", DIR_MIN, "a dataflow NPU's contexts: how many configurations of the chip the network is cut into (1: it fits; hwdesc contexts)", F(contexts), 1, 0, 0},
    {"contexts_ms", "ms", DIR_NONE, "switching a dataflow NPU's contexts in, once per pass: their weights' reload from the host and the reconfigurations", F(contexts_s), 1e3, 0, 0},
    {"kernels", "1", DIR_MIN, "kernel launches of the phase, every step (the software stack's fusion)", F(kernels), 1, 0, 0},
    {"energy_compute_mJ", "mJ", DIR_NONE, "arithmetic energy", F(energy_compute_J), 1e3, 0, 0},
    {"energy_memory_mJ", "mJ", DIR_NONE, "memory access energy, all levels", F(energy_memory_J), 1e3, 0, 0},
    {"energy_static_mJ", "mJ", DIR_NONE, "idle power of every device of the system and the enclosure's static draw (hwdesc enclosure: a module's shared parts, a chassis; through its power conversion) x latency", F(energy_static_J), 1e3, 0, 0},
    {"energy_link_mJ", "mJ", DIR_NONE, "link transfer energy", F(energy_link_J), 1e3, 0, 0},
    {"energy_active_mJ", "mJ", DIR_NONE, "active power beyond idle of the devices while their kernels run",
     F(energy_active_J), 1e3, 0, 0},
    {"energy_enclosure_mJ", "mJ", DIR_NONE, "the enclosure's fans, regulators and power-conversion losses on the devices' dynamic energy (hwdesc enclosure; 0 without one)",
     F(energy_enclosure_J), 1e3, 0, 0},
    {"main_memory_MB", "MB", DIR_NONE, "bytes moved to or from main memory", F(main_bytes), 1e-6, 0, 0},
    {"price_USD", "USD", DIR_MIN, "purchase price of the system (every device)", F(price_USD), 1, 0, 0},
    {"devices", "1", DIR_MIN, "devices of the layout: tp x dp x pp (1 without a topology)", F(devices), 1, ALL | SRV, 0},
    {"die_area_mm2", "mm2", DIR_MIN, "die area of the devices used, every device of a layout (area model or datasheet)", F(die_area_mm2), 1, 0, 0},
    {"expected_error_low_pct", "%", DIR_NONE, "expected error of the predicted time, low end: 10th percentile of predicted / measured time - 1 over the published corpus's held-out cases of this device class and workload kind (validate/published/error-bars.json); negative: dse too fast", F(err_low_pct), 1, 0, 0},
    {"expected_error_high_pct", "%", DIR_NONE, "expected error of the predicted time, high end: the 90th percentile, as expected_error_low_pct", F(err_high_pct), 1, 0, 0},
    {"serve_throughput_rps", "1/s", DIR_MAX, "serving: requests completed per second over the run (dse serve)", F(srv_rps), 1, SRV, -1},
    {"serve_tokens_per_s", "token/s", DIR_MAX, "serving: generated tokens per second over the run", F(srv_tokens_per_s), 1, SRV, -1},
    {"serve_goodput_rps", "1/s", DIR_MAX, "serving: requests per second meeting every SLO of the workload's serving block", F(srv_goodput_rps), 1, SRV, -1},
    {"serve_slo_attainment", "1", DIR_MAX, "serving: share of the requests meeting every SLO", F(srv_attainment), 1, SRV, 0},
    {"serve_ttft_p50_ms", "ms", DIR_MIN, "serving: median time to first token, queueing included", F(srv_ttft_p50_s), 1e3, SRV, 1},
    {"serve_ttft_p99_ms", "ms", DIR_MIN, "serving: 99th percentile time to first token", F(srv_ttft_p99_s), 1e3, SRV, 1},
    {"serve_tpot_p50_ms", "ms", DIR_MIN, "serving: median of the requests' time per output token", F(srv_tpot_p50_s), 1e3, SRV, 1},
    {"serve_tpot_p99_ms", "ms", DIR_MIN, "serving: 99th percentile of the requests' time per output token", F(srv_tpot_p99_s), 1e3, SRV, 1},
    {"serve_e2e_p50_ms", "ms", DIR_MIN, "serving: median end-to-end latency of a request", F(srv_e2e_p50_s), 1e3, SRV, 1},
    {"serve_e2e_p99_ms", "ms", DIR_MIN, "serving: 99th percentile end-to-end latency", F(srv_e2e_p99_s), 1e3, SRV, 1},
    {"serve_cost_per_Mtoken_USD", "USD", DIR_MIN, "serving: rent, price over its amortisation and hosting over the run's makespan + electricity x PUE, per million generated tokens", F(srv_cost_per_Mtoken_USD), 1, SRV, 1},
    {"serve_energy_per_token_mJ", "mJ", DIR_MIN, "serving: system energy (idle included) per generated token", F(srv_energy_per_token_J), 1e3, SRV, 0},
    {"serve_goodput_per_USD", "1/USD", DIR_MAX, "serving: requests meeting every SLO per dollar of the system's rent or price", F(srv_goodput_per_USD), 1, SRV, -1},
    {"serve_kv_use", "1", DIR_NONE, "serving: share of the KV cache's blocks in use, time-weighted", F(srv_kv_use), 1, SRV, 0},
    {"sustained_throughput_per_s", "1/s", DIR_MAX, "thermal: inferences per second once the board has throttled to what its cooling holds at its throttle temperature (the burst rate when it never gets there) over a run of duration_s (hwdesc thermal; NULL without one)", F(sus_throughput_per_s), 1, 0, -1},
    {"sustained_tokens_per_s", "token/s", DIR_MAX, "thermal: tokens_per_s at the sustained point, as sustained_throughput_per_s", F(sus_tokens_per_s), 1, TOK, -1},
    {"mean_throughput_per_s", "1/s", DIR_MAX, "thermal: inferences per second over the whole run of duration_s from a cold start: the burst rate until the board throttles, the sustained rate after", F(mean_throughput_per_s), 1, 0, -1},
    {"time_to_throttle_s", "s", DIR_MAX, "thermal: seconds from a cold start at the burst power until the board reaches its throttle temperature (never: NULL in SQLite and JSON, never in text)", F(time_to_throttle_s), 1, 0, 0},
    {"steady_temp_C", "degC", DIR_MIN, "thermal: temperature the board settles at at its sustained point (ambient + power x thermal resistance)", F(steady_temp_C), 1, 0, 0},
    {"serve_preemptions", "1", DIR_MIN, "serving: sequences preempted for KV blocks (recomputed)", F(srv_preemptions), 1, SRV, 0},
};
const int metric_count = (int)(sizeof metric_table / sizeof metric_table[0]);

/* Earlier names of registry entries, still accepted where a metric is named (sweep specs, --objective,
 * plot axes): the spec that says accuracy_proxy gets quality_loss_pct, stored and printed as such. */
static const struct {
    const char *alias, *name;
} metric_aliases[] = {{"accuracy_proxy", "quality_loss_pct"},
                       {"comm_ms", "comm_exposed_ms"}}; /* comm_ms meant the exposed time (issue 23) */

const struct metric *metric_find(const char *name)
{
    for (int i = 0; i < metric_count; i++)
        if (strcmp(metric_table[i].name, name) == 0)
            return &metric_table[i];
    for (size_t k = 0; k < sizeof metric_aliases / sizeof metric_aliases[0]; k++)
        if (strcmp(metric_aliases[k].alias, name) == 0)
            return metric_find(metric_aliases[k].name);
    return NULL;
}

double metric_value(const struct metric *m, const struct eval_totals *t)
{
    return *(const double *)((const char *)t + m->offset) * m->scale;
}

int metric_applies(const struct metric *m, enum wl_phase ph) { return m->phases == 0 || (m->phases & (1u << ph)); }

int metric_applies_to(const struct metric *m, enum wl_phase ph, int serving)
{
    return serving ? (m->phases & METRIC_SERVE) != 0 : metric_applies(m, ph);
}

double metric_pessimistic(const struct metric *m, double v, double low_pct)
{
    return m->time_exp && isfinite(low_pct) ? eb_pessimistic(v, m->time_exp, low_pct) : v;
}
