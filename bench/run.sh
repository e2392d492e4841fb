#!/bin/sh
# Sweep throughput benchmark: llm_edge grown to 1,000,000 points (bench/llm_edge_1m.json), whole
# process, timed from start to exit, with every point stored in SQLite and without storage.
# Usage: sh bench/run.sh [threads]   (default 2).  Prints one line per case and points/s.
set -eu
cd "$(dirname "$0")/.."
threads=${1:-2}
dse=./dse
[ -x "$dse" ] || { echo "bench: build first (./scripts/setup.sh)" >&2; exit 2; }
spec=bench/llm_edge_1m.json
db=$(mktemp -d)/bench.db
trap 'rm -rf "$(dirname "$db")"' EXIT
points=$(python3 -c "import json; d=json.load(open('$spec'))['axes']; import math; print(2*math.prod(len(v) for v in d.values()))")
now() { date +%s.%N; }
# The best of three whole processes: this VM's neighbours swing single runs by +-30 %.
run() { # label, extra options
    label=$1
    shift
    best=
    for i in 1 2 3; do
        [ -z "${db:-}" ] || rm -f "$db" "$db-wal" "$db-shm"
        t0=$(now)
        $dse sweep "$spec" --threads "$threads" --quiet --no-plot "$@" >/dev/null
        t1=$(now)
        best=$(awk -v a="$t0" -v b="$t1" -v m="$best" 'BEGIN { s = b - a; print (m == "" || s < m) ? s : m }')
    done
    awk -v l="$label" -v p="$points" -v s="$best" -v t="$threads" \
        'BEGIN { printf "%-34s %9d points  %7.2f s  %10.0f points/s  (%d threads, whole process, best of 3)\n", l, p, s, p / s, t }'
}
echo "dse $($dse --version | cut -d' ' -f2-) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
run "llm_edge_1m, every point stored" --db "$db"
# dse report (issue 14) of that 1,000,000-point run: the time to write the page, its size, and in
# headless Chromium the time from navigation to the drawn page (the page's own data-load-ms) and the
# whole browser process.
page=$(dirname "$db")/bench.html
t0=$(now)
$dse report "$db" -o "$page" >/dev/null
t1=$(now)
awk -v a="$t0" -v b="$t1" -v s="$(wc -c <"$page")" \
    'BEGIN { printf "%-34s %9.1f MB    %7.2f s to write (every front point, the cloud thinned, 200 breakdowns)\n", "dse report llm_edge_1m", s / 1e6, b - a }'
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$chrome" ]; then
    t0=$(now)
    ms=$(timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$(dirname "$db")/chrome" \
        --dump-dom "file://$page" 2>/dev/null </dev/null | grep -o 'data-load-ms="[0-9]*"' | tr -dc 0-9)
    t1=$(now)
    awk -v a="$t0" -v b="$t1" -v ms="${ms:-0}" \
        'BEGIN { printf "%-34s %9.2f s drawn after navigation, %.2f s whole headless Chromium process\n", "report page in Chromium", ms / 1000, b - a }'
else
    echo "report page in Chromium: skipped (no chromium)"
fi
run "llm_edge_1m, no storage" --no-db
# The same space with a software axis (compiled, none) in place of half the power caps: the stacks'
# passes run once per graph, so the rate should not change.
spec=bench/llm_edge_1m_sw.json
points=$(python3 -c "import json; d=json.load(open('$spec'))['axes']; import math; print(2*math.prod(len(v) for v in d.values()))")
run "llm_edge_1m_sw (software axis), no db" --no-db

# The cycle tier: ResNet-50 (53 convolutions and the FC layer folded SCALE-Sim style) on a 128x128
# weight-stationary array, whole dse eval processes, mean of 20.
t0=$(now)
i=0
while [ $i -lt 20 ]; do
    $dse eval --hw bench/scalesim-128x128-ws.cfg --workload resnet50 --fidelity cycle >/dev/null
    i=$((i + 1))
done
t1=$(now)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%-34s %9s          %7.2f ms per dse eval process (mean of 20)\n", "resnet50 cycle tier, 128x128 array", "", (b - a) * 1000 / 20 }' 

# Multi-device (issue 11): one evaluation of a layout on prebuilt graphs, the layout search for a
# 175B training run on 1024 GPUs, and a sweep's points/s on an 8-GPU system vs one GPU (the same
# points: Llama-2-7B generate over precision x batch x clock; dp fills the node).
if [ -x bench/bench_layout ]; then
    bench/bench_layout
fi
for spec in bench/llm_7b_1gpu.json bench/llm_7b_8gpu.json; do
    t0=$(now)
    $dse sweep "$spec" --threads "$threads" --no-db --no-plot --quiet >/dev/null
    t1=$(now)
    points=$(python3 -c "import json; d=json.load(open('$spec'))['axes']; import math; print(math.prod(len(v) for v in d.values()))")
    awk -v l="$(basename "$spec" .json)" -v p="$points" -v a="$t0" -v b="$t1" -v t="$threads" \
        'BEGIN { s = b - a; printf "%-34s %9d points  %7.2f s  %10.0f points/s  (%d threads, whole process)\n", l, p, s, p / s, t }'
done

# Serving (issue 12): 1,000,000 requests of Llama-3.1-8B on one H100 with continuous batching (the Azure
# conversation trace's lengths, Poisson at 15 requests/s), and one capacity search (2,000 requests).
t0=$(now)
$dse serve --hw nvidia-h100-sxm5-80gb --workload llama-3.1-8b --requests 1000000 --rate 15 \
    --lengths models/traces/azure-conv-2023.csv --slo ttft_ms=500,tpot_ms=50 >/dev/null
t1=$(now)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%-34s %9d requests %7.2f s  (one thread, whole process)\n", "serve llama-3.1-8b, 1 H100, continuous", 1000000, b - a }'
t0=$(now)
$dse serve --hw nvidia-h100-sxm5-80gb --workload llama-3.1-8b --requests 2000 --capacity \
    --lengths models/traces/azure-conv-2023.csv --slo ttft_ms=500,tpot_ms=50 >/dev/null
t1=$(now)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%-34s %9d requests %7.2f s  (whole process)\n", "serve capacity search", 2000, b - a }'

# ONNX import (issue 13): load and build times of a 102 MB ResNet-50 (fp32 weights), a 50,000-node
# graph and a 219 MB BERT-base, written by tests/onnx/make_models.py --big (python3-onnx).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [ -x bench/bench_onnx ] && "$py" tests/onnx/make_models.py "$(dirname "$db")/onnx" --big >/dev/null 2>&1; then
    bench/bench_onnx "$(dirname "$db")"/onnx/big_100mb.onnx "$(dirname "$db")"/onnx/chain_50k.onnx \
        "$(dirname "$db")"/onnx/bert_base.onnx
else
    echo "onnx: skipped (bench/bench_onnx not built, or no python3-onnx to write the models)"
fi

# Pareto (issue 14): the first front of 10^7 points, two and three objectives, and full ranking.
if [ -x bench/bench_pareto ]; then
    bench/bench_pareto 10000000
fi

# MPI scaling (docs/mpi.md), where dse is built with MPI and mpirun is installed.
if $dse --version | grep -q ' MPI' && command -v mpirun >/dev/null 2>&1; then
    echo
    sh bench/mpi.sh no-db
fi
