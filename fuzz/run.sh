#!/bin/sh
# run.sh -- build the dse libFuzzer targets and run each for a fixed time.
#
# Usage: sh fuzz/run.sh [seconds] [target...]      or: FUZZ_RUNS=10000000 sh fuzz/run.sh 0 [target...]
#   seconds  run time per target (default: $FUZZ_SECONDS, else 60)
#   target   hwdesc workload topo prec suite sweep scalesim software errbars published multi trace serving onnx measured
#            quality power (default: all sixteen)
# Needs clang with libFuzzer (Debian/Ubuntu: apt-get install clang libclang-rt-14-dev), libcjson
# and a configured tree (config.h at the repository root: ./configure). Binaries go to fuzz/build/,
# corpora to fuzz/corpus-<target>/ (both git-ignored); a crashing input is saved as
# fuzz/build/<target>-crash-<sha1> (or -leak-, -timeout-, -oom-). Exits 1 if any target failed.
set -u

cd "$(dirname "$0")/.." || exit 2
root=$(pwd)

secs=${FUZZ_SECONDS:-60}
case ${1:-} in
'' | *[!0-9]*) ;;
*) secs=$1; shift ;;
esac
targets=${*:-hwdesc workload topo prec suite sweep scalesim software errbars published multi trace serving onnx quality power measured}
# FUZZ_RUNS=N: run each target for N executions instead of a time (the 10 M campaigns of fuzz/README.md).
limit="-max_total_time=$secs"
[ -n "${FUZZ_RUNS:-}" ] && limit="-runs=$FUZZ_RUNS"

CC=${CC:-clang}
if ! command -v "$CC" >/dev/null 2>&1; then
    echo "run.sh: $CC not found (apt-get install clang libclang-rt-14-dev)" >&2
    exit 2
fi
if [ ! -f config.h ]; then
    echo "run.sh: config.h missing: run ./configure at the repository root first" >&2
    exit 2
fi
cjson=$(pkg-config --cflags --libs libcjson 2>/dev/null) || cjson="-lcjson"
# every loader links the ONNX importer (wl_load.c reads *.onnx): protobuf-c and the decoder make generates
cjson="$cjson $(pkg-config --cflags --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)"
if [ ! -f src/onnx.pb-c.c ]; then
    echo "run.sh: src/onnx.pb-c.c missing: run make first (it generates it from src/onnx.proto)" >&2
    exit 2
fi

# The loaders and what they call: everything in libdse.a but the command line (main.c, cli_*.c)
# and the cost models, which no loader reaches.
srcs="src/err.c src/jsonu.c src/csvu.c src/sbuf.c src/prec.c src/hw.c src/hw_load.c src/hw_memtech.c src/wl_op.c src/wl_graph.c src/wl_load.c
      src/wl_onnx.c src/wl_onnx_ops.c src/onnx.pb-c.c src/wl_build.c src/wl_transformer.c src/wl_cnn.c src/wl_cnn_cls.c src/wl_yolo.c src/validate_suite.c"
# The sweep target also prepares small specs and evaluates a point: the cost models, eval, metrics.
sweep_srcs="src/err.c src/jsonu.c src/csvu.c src/quality.c src/sbuf.c src/prec.c src/hw.c src/hw_load.c src/hw_memtech.c src/hw_scalesim.c src/wl_op.c src/wl_graph.c
      src/wl_load.c src/wl_onnx.c src/wl_onnx_ops.c src/onnx.pb-c.c src/wl_build.c src/wl_transformer.c src/wl_cnn.c src/wl_cnn_cls.c src/wl_yolo.c src/model.c src/model_roofline.c
      src/model_systolic.c src/model_gpu.c src/model_cpu.c src/model_npu.c src/eval.c src/metric.c
      src/pass.c src/pass_load.c src/errbar.c src/sweep.c src/sweep_spec.c src/kern_prec.c src/par_coll.c src/par_layout.c
      src/eval_par.c src/eval_train.c src/serve_trace.c src/serve_cost.c src/serve_sim.c src/cost.c src/thermal.c"
# The published corpus's loader links the prediction code beside it (and GSL's fit).
published_srcs="$sweep_srcs src/validate_published.c src/validate_suite.c src/validate.c src/kern_gemm.c src/kern_nn.c"
# The multi-device corpus's loader and predictions (validate_multi.c) sit beside the published one.
multi_srcs="$published_srcs src/validate_multi.c"
# The serving corpus's loader and its simulation (validate_serving.c) sit beside the multi-device one.
serving_srcs="$multi_srcs src/validate_serving.c"
# The power corpus's loader and its predictions (validate_power.c) sit beside the published one, and
# resize a system for a tensor-parallel case as the multi-device corpus does (validate_multi.c).
power_srcs="$multi_srcs src/validate_power.c"
# The measured-kernel corpus's loader (validate_measured.c) reads kernel shapes through the published one's.
measured_srcs="$published_srcs src/validate_measured.c"
cflags="-g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
        -fno-omit-frame-pointer -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I src -I ."

build=fuzz/build
mkdir -p "$build"

seed() { # seed CORPUS_DIR FILE... : copies the files that exist
    dir=$1
    shift
    for f in "$@"; do
        [ -f "$f" ] && cp "$f" "$dir/seed-$(basename "$f")"
    done
    return 0
}

for t in $targets; do
    case $t in
    hwdesc | workload | topo | prec | suite | sweep | scalesim | software | errbars | published | multi | trace | serving | onnx | quality | power | measured) ;;
    *)
        echo "run.sh: unknown target '$t' (hwdesc workload topo prec suite sweep scalesim software errbars published multi trace serving onnx quality power measured)" >&2
        exit 2
        ;;
    esac
done

status=0
summary=""
for t in $targets; do
    bin=$build/fuzz_$t
    echo "== $t: building $bin"
    t_srcs=$srcs
    [ "$t" = sweep ] && t_srcs="$sweep_srcs $(pkg-config --cflags --libs gsl 2>/dev/null || echo -lgsl -lgslcblas)"
    [ "$t" = software ] && t_srcs="$srcs src/pass_load.c"
    [ "$t" = errbars ] && t_srcs="$srcs src/errbar.c"
    [ "$t" = published ] && t_srcs="$published_srcs $(pkg-config --cflags --libs gsl 2>/dev/null || echo -lgsl -lgslcblas)"
    [ "$t" = multi ] && t_srcs="$multi_srcs $(pkg-config --cflags --libs gsl 2>/dev/null || echo -lgsl -lgslcblas)"
    [ "$t" = measured ] && t_srcs="$measured_srcs $(pkg-config --cflags --libs gsl 2>/dev/null || echo -lgsl -lgslcblas)"
    [ "$t" = power ] && t_srcs="$power_srcs $(pkg-config --cflags --libs gsl 2>/dev/null || echo -lgsl -lgslcblas)"
    [ "$t" = serving ] && t_srcs="$serving_srcs $(pkg-config --cflags --libs gsl 2>/dev/null || echo -lgsl -lgslcblas)"
    [ "$t" = quality ] && t_srcs="src/err.c src/jsonu.c src/sbuf.c src/csvu.c src/prec.c src/quality.c"
    [ "$t" = trace ] && t_srcs="src/err.c src/jsonu.c src/sbuf.c src/serve_trace.c $(pkg-config --cflags --libs gsl 2>/dev/null || echo -lgsl -lgslcblas)"
    # shellcheck disable=SC2086
    extra="" # scalesim: the .cfg loader and the systolic tier (with the class table it links)
    [ "$t" = scalesim ] && extra="-DMODEL_SA_MAX_STEPS=2e4 src/hw_scalesim.c src/model.c src/model_roofline.c
        src/model_systolic.c src/model_cpu.c src/model_gpu.c src/model_npu.c" # replays of <= 2e4 steps
    if ! $CC $cflags -o "$bin" "fuzz/fuzz_$t.c" $t_srcs $extra $cjson -lm; then
        echo "run.sh: build of $t failed" >&2
        status=1
        summary="$summary
$t: BUILD FAILED"
        continue
    fi

    corpus=fuzz/corpus-$t
    mkdir -p "$corpus"
    case $t in
    hwdesc) seed "$corpus" hwdesc/*.json ;;
    workload) seed "$corpus" models/*.json models/zoo/*.json tests/data/*.json ;;
    topo) seed "$corpus" models/*.csv tests/data/*.csv ;;
    sweep) seed "$corpus" sweeps/*.json tests/data/sweep-*.json ;;
    software) seed "$corpus" software/*.json tests/data/*software*.json ;;
    errbars) seed "$corpus" validate/published/error-bars.json tests/data/*error-bars*.json ;;
    published) seed "$corpus" validate/published/*.csv tests/data/published/*.csv ;;
    multi) seed "$corpus" validate/published/multi-device/*.csv tests/data/*multi-device*.csv ;;
    serving) seed "$corpus" validate/published/serving/*.csv ;;
    power) seed "$corpus" validate/published/power/*.csv tests/data/power-*.csv ;;
    measured) seed "$corpus" validate/measured/xla-collective/kernels.csv validate/measured/coral-edgetpu/kernels.csv validate/measured/neuron-inf2/kernels.csv ;;
    trace) seed "$corpus" tests/data/*serve-trace*.csv ;;
    quality) seed "$corpus" validate/quality/*.csv tests/data/quality-*.csv ;;
    onnx) # the test models (python3-onnx writes them); the big ones are beyond -max_len
        py=/usr/bin/python3
        [ -x "$py" ] || py=python3
        if "$py" tests/onnx/make_models.py "$build/onnx-seeds" >/dev/null 2>&1; then
            for f in "$build"/onnx-seeds/*.onnx; do
                [ "$(wc -c <"$f")" -le 65536 ] && cp "$f" "$corpus/seed-$(basename "$f")"
            done
        else
            echo "run.sh: no seeds for onnx (python3-onnx missing): starting from an empty corpus" >&2
        fi
        ;;
    scalesim) # a GEMM of 128 x 512 x 256 first (two bytes per dimension, less one)
        for f in validate/scalesim/cfg/*.cfg bench/*.cfg; do
            [ -f "$f" ] && { printf '\177\000\377\001\377\000'; cat "$f"; } >"$corpus/seed-$(basename "$f")"
        done
        ;;
    suite) # the format byte first: 0 for JSON, 1 for CSV
        for f in validate/*.json tests/data/import*.json tests/data/validate*.json; do
            [ -f "$f" ] && { printf '\000'; cat "$f"; } >"$corpus/seed-$(basename "$f")"
        done
        for f in tests/data/import*.csv; do
            [ -f "$f" ] && { printf '\001'; cat "$f"; } >"$corpus/seed-$(basename "$f")"
        done
        ;;
    prec)
        i=0
        for s in fp16 fp32 bf16 tf32 fp8 int8 int4 fp64 w4a16 w8a8 w4a16kv8 w8a16kv8 \
            w=int4,a=fp16,kv=fp8 a=bf16 kv=fp8,a=fp16 w=int8,a=int8; do
            i=$((i + 1))
            printf '%s' "$s" >"$corpus/seed-$i"
        done
        ;;
    esac

    log=$build/fuzz_$t.log
    echo "== $t: fuzzing ($limit; log: $log)"
    start=$(date +%s)
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
        "./$bin" $limit -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$build/$t-" "$corpus" >"$log" 2>&1
    rc=$?
    end=$(date +%s)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    [ -n "$execs" ] || execs="?"
    # libFuzzer names the input that failed <prefix>crash-<sha1> (leak-, timeout-, oom-).
    art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    if [ "$rc" -eq 0 ]; then
        result="no crash"
    else
        status=1
        kind=$(grep -m1 -o 'ERROR: [A-Za-z]*Sanitizer: [a-z-]*\|ERROR: libFuzzer: [a-z-]*\|runtime error: .*' "$log")
        result="CRASH (exit $rc${kind:+: $kind})${art:+, input: $art}"
    fi
    line="$t: $execs executions in $((end - start))s, $result"
    echo "== $line"
    summary="$summary
$line"
done

echo
echo "== summary (${secs}s per target, root $root)$summary"
exit $status
