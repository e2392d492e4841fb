#!/bin/sh
# run.sh -- the GPU validation run, on a machine with an NVIDIA GPU, from the repository (any directory):
#   validate/gpu/run.sh OUT.csv
# builds dse with CUDA in build-cuda/ (autoreconf if needed, configure --enable-cuda, make kcu_run; where
# dse's dependencies are missing, kcu_run alone with nvcc, which needs only CUDA and cJSON),
# compares every kernel with its host reference (kcu_run --check), then times validate/gpu.json. OUT.csv
# gets the GPU's state from nvidia-smi before and after, the checks, and one CSV line per case (dse
# validate --hw nvidia-h200-sxm-141gb --import OUT.csv); progress goes to the terminal and OUT.log.
# About 1 minute of building and 2 of measuring on an H200. Exit status: kcu_run's (0; 1 when a check
# or a case failed: the CSV is still written), 2 when the build fails, 3 when there is no GPU.
# Environment: CUDA_HOME (the toolkit, default /usr/local/cuda or nvcc on PATH), KCU_RUN_FLAGS (extra
# kcu_run options, e.g. "--min-ms 50"), GPU_SUITE (default validate/gpu.json).
set -u
if [ $# -ne 1 ]; then
    echo "usage: validate/gpu/run.sh OUT.csv" >&2
    exit 2
fi
case $1 in
/*) out=$1 ;;
*) out=$(pwd)/$1 ;;
esac
log=${out%.csv}.log
cd "$(dirname "$0")/../.." || exit 2
suite=${GPU_SUITE:-validate/gpu.json}

if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "run.sh: no NVIDIA GPU here: nvidia-smi is not installed (this needs a machine with an NVIDIA GPU and its driver)" >&2
    exit 3
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "run.sh: no NVIDIA GPU here: nvidia-smi -L finds none ($(nvidia-smi -L 2>&1 | head -n 1))" >&2
    exit 3
fi

# ---- build ----
# The autotools build (all of dse: needs autoconf, automake, pkg-config, GSL, cJSON, SQLite); where that
# is not possible (a bare GPU machine), kcu_run alone with nvcc and cc (needs only CUDA and cJSON).
mkdir -p build-cuda
jobs=$(nproc 2>/dev/null || echo 4)
build_autotools() {
    if [ -f config.status ]; then
        echo "run.sh: the source tree is configured in place (build-cuda/ needs 'make distclean' there)" >&2
        return 1
    fi
    if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
        autoreconf -fi >build-cuda/autoreconf.log 2>&1 || { echo "run.sh: autoreconf failed (build-cuda/autoreconf.log)" >&2; return 1; }
    fi
    if [ ! -f build-cuda/Makefile ] || [ configure -nt build-cuda/config.status ]; then
        (cd build-cuda && ../configure -q --enable-cuda${CUDA_HOME:+="$CUDA_HOME"}) >build-cuda/configure.log 2>&1 || {
            echo "run.sh: configure --enable-cuda failed: $(grep 'error:' build-cuda/configure.log | tail -n 1)" >&2
            return 1
        }
    fi
    make -C build-cuda -j"$jobs" all >build-cuda/make.log 2>&1 || { # all: dse and, under CUDA, kcu_run
        tail -n 20 build-cuda/make.log >&2
        echo "run.sh: make failed (build-cuda/make.log)" >&2
        return 1
    }
    kcu=build-cuda/validate/gpu/kcu_run
}
build_direct() {
    nvcc=${CUDA_HOME:+$CUDA_HOME/bin/}nvcc
    command -v "$nvcc" >/dev/null 2>&1 || nvcc=/usr/local/cuda/bin/nvcc
    [ -x "$nvcc" ] || command -v "$nvcc" >/dev/null 2>&1 || { echo "run.sh: no nvcc (set CUDA_HOME)" >&2; return 1; }
    d=build-cuda/direct
    mkdir -p "$d"
    arch="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"
    pids=
    for f in kern_cuda kern_cuda_nn kern_cuda_attn; do
        # shellcheck disable=SC2086 # arch is a list of options
        "$nvcc" -O3 -std=c++17 $arch -Isrc -c -o "$d/$f.o" "src/$f.cu" >"$d/$f.log" 2>&1 &
        pids="$pids $!"
    done
    ok=0
    for p in $pids; do wait "$p" || ok=1; done
    cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Isrc -c -o "$d/kern_cuda_case.o" src/kern_cuda_case.c >"$d/case.log" 2>&1 || ok=1
    cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Isrc -c -o "$d/kcu_run.o" validate/gpu/kcu_run.c >"$d/kcu_run.log" 2>&1 || ok=1
    if [ "$ok" -ne 0 ] || ! "$nvcc" -o "$d/kcu_run" "$d"/*.o -Xlinker -rpath -Xlinker "$(dirname "$(command -v "$nvcc")")/../lib64" -lcublasLt -lcublas -lcjson -lm >"$d/link.log" 2>&1; then
        cat "$d"/*.log | tail -n 20 >&2
        echo "run.sh: the direct build failed ($d/*.log)" >&2
        return 1
    fi
    kcu=$d/kcu_run
}
kcu=
if ! build_autotools; then
    echo "run.sh: building kcu_run alone with nvcc" >&2
    build_direct || exit 2
fi

# ---- the GPU's state, as comments ----
query=name,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,power.max_limit,temperature.gpu,memory.total
gpu_state() { # $1: when
    if q=$(nvidia-smi --query-gpu=$query --format=csv,noheader 2>/dev/null); then
        echo "$q" | sed "s/^/# nvidia-smi $1: /"
    else # an older nvidia-smi without some field: the summary lines of -q
        nvidia-smi -q | grep -E 'Product Name|Driver Version|CUDA Version|Performance State|Graphics|Memory +:|Current Power Limit|Max Power Limit|GPU Current Temp' |
            sed "s/^ */# nvidia-smi $1: /; s/  */ /g"
    fi
}
{
    echo "# validate/gpu/run.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), dse $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "# nvidia-smi fields: $query"
    gpu_state before
} >"$out"

# ---- check, then time ----
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout 240"
rcfile=build-cuda/kcu_run.rc
# shellcheck disable=SC2086 # KCU_RUN_FLAGS is a list of options
{ $tmo "$kcu" --check ${KCU_RUN_FLAGS:-} "$suite" >>"$out"; echo $? >"$rcfile"; } 2>&1 | tee "$log"
rc=$(cat "$rcfile")
gpu_state after >>"$out"
case $rc in
0) echo "run.sh: $(($(grep -c '^[a-z]' "$out") - 1)) measurements in $out" ;;
3) echo "run.sh: kcu_run finds no usable GPU (its message above)" >&2 ;;
124) echo "run.sh: kcu_run ran past 240 s and was stopped; what it measured is in $out" >&2 ;;
*) echo "run.sh: kcu_run exited $rc (a check or a case failed: '# check ... FAILED' and '# failed' lines in $out)" >&2 ;;
esac
exit "$rc"
