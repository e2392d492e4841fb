#!/bin/sh
# tests/quality_test.sh -- script tests of quality_loss_pct (docs/models.md, "Quality loss"): the published
# quality table (validate/quality/published-quality.csv) behind it, as dse eval, dse sweep and dse validate
# --precision-errors read it.
#
# Checks that the formats rank as practice ranks them (fp8 W8A8 no worse than int8 SmoothQuant W8A8, W4A16
# group 128 a small loss, W4A4 a large one; the figures cited below are rows of the table), that each value
# names the rows it comes from, that a case no row covers falls back to the measured GEMM error with a
# flag, that a bad table is refused with its file and line (exit 2, one line, nothing on stdout), that
# sweeps naming accuracy_proxy still run (an alias of quality_loss_pct), and that a run records the table
# among its inputs. The rank cases also run against a dse built before the table: its accuracy_proxy
# (totals.accuracy_proxy) ranked fp8 4x worse than int8 and fails them.
#
# Environment: DSE_BIN (default ./dse), DSE_SRCDIR, as tests/cli_test.sh. Prints "ok NAME" / "FAIL NAME:
# why" per case and ends with "quality_test: N passed, N failed"; exits 1 when a case failed.

set -u

suite=quality_test
. "$(cd "$(dirname "$0")" && pwd)/test_env.sh"
cd "$SRC" || exit 1 # shipped names resolve against the current directory
D=tests/data



# expect_fail NAME 'stderr substring' DSE-ARGS...: exit 2, one line "dse: ...", nothing on stdout.
expect_fail() {
    name=$1 sub=$2
    shift 2
    dse "$@"
    if [ "$rc" -ne 2 ]; then
        fail "$name" "exit $rc, expected 2: $(head -n 1 "$ERR")"
    elif [ -s "$OUT" ]; then
        fail "$name" "wrote to stdout: $(head -n 1 "$OUT")"
    elif [ "$(wc -l <"$ERR")" -ne 1 ]; then
        fail "$name" "message is not one line: $(tr '\n' '|' <"$ERR" | cut -c 1-300)"
    elif ! grep -qF -e "$sub" "$ERR"; then
        fail "$name" "message lacks '$sub': $(head -n 1 "$ERR")"
    else
        ok "$name"
    fi
}

# expect_ok_has NAME 'stdout substring' DSE-ARGS...
expect_ok_has() {
    name=$1 sub=$2
    shift 2
    dse "$@"
    if [ "$rc" -ne 0 ]; then
        fail "$name" "exit $rc: $(head -n 1 "$ERR")"
    elif ! grep -qF -e "$sub" "$OUT"; then
        fail "$name" "stdout lacks '$sub'"
    else
        ok "$name"
    fi
}

# quality HW MODEL PRECISION: the point's quality figure from dse eval --json (quality_loss_pct; a dse
# from before the table: its accuracy_proxy), or "none".
quality() {
    timeout 120 "$BIN" eval --hw "$1" --workload "$2" --precision "$3" --json 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin)
t = d.get('totals', {})
q = d.get('quality', {}).get('loss_pct', t.get('quality_loss_pct', t.get('accuracy_proxy')))
print('none' if q is None else repr(q))" 2>/dev/null || echo none
}

if ! command -v python3 >/dev/null 2>&1; then
    echo "quality_test: python3 is missing" >&2
    echo "quality_test: 0 passed, 1 failed"
    exit 1
fi

# ---- the orders of practice ----
# fp8 W8A8 (weights, activations and KV cache E4M3) against int8 SmoothQuant W8A8 (KV cache int8):
#   Llama-3.1-8B: FP8 card 7.2169 -> 7.2752 (+0.81 %, quark-llama31-8b-instruct-fp8); SmoothQuant 6.24 ->
#   6.38 (+2.24 %), 6.14 -> 6.28 (+2.28 %, QServe's table), 6.138 -> 6.258 (+1.96 %, SmoothQuant's README);
#   Llama-2-7B has no fp8 perplexity: its int8 figure (1.28 + 0.75) / 2 = 1.015 % scaled by Llama-3's
#   fp8 / int8, 0.81 / 2.16; the other two take their families' figures the same way.
# The old accuracy_proxy gave fp8 0.0528 and int8 0.0129 on Llama-3.1-8B: this case fails on it.
bad=""
for m in llama-3.1-8b llama-3.2-1b llama-2-7b mistral-7b; do
    f8=$(quality nvidia-h100-sxm5-80gb "$m" fp8)
    i8=$(quality nvidia-h100-sxm5-80gb "$m" w8a8)
    python3 -c "import sys; a, b = sys.argv[1:3]; sys.exit(0 if a != 'none' and b != 'none' and float(a) <= float(b) else 1)" "$f8" "$i8" ||
        bad="$bad $m: fp8 $f8 > int8 $i8;"
done
[ -z "$bad" ] && ok quality-fp8-no-worse-than-int8 || fail quality-fp8-no-worse-than-int8 "$bad"
# W4A16 group 128 (AWQ, GPTQ) a small loss, W4A4 (QuaRot, Atom) a large one, on Llama-2-7B (QServe's table,
# FP16 5.47: AWQ 5.60, GPTQ-R 5.63, QuaRot 6.19, Atom 6.12) and Llama-3.1-8B (FP16 6.24: AWQ 6.60, GPTQ-R
# 6.64, QuaRot 8.32): W4A16 under a third of W4A4 and under 20 %, W4A4 above 5 %.
bad=""
for m in llama-2-7b llama-3.1-8b; do
    w4=$(quality nvidia-h100-sxm5-80gb "$m" w4a16)
    i4=$(quality nvidia-h100-sxm5-80gb "$m" int4)
    python3 -c "
import sys
a, b = sys.argv[1:3]
sys.exit(0 if a != 'none' and b != 'none' and 0 < float(a) < 20 and float(a) <= float(b) / 3 and float(b) > 5 else 1)" "$w4" "$i4" ||
        bad="$bad $m: w4a16 $w4, int4 $i4;"
done
[ -z "$bad" ] && ok quality-w4a16-small-w4a4-large || fail quality-w4a16-small-w4a4-large "$bad"

# ---- what a value says of itself ----
# Llama-2-7B W4A16: (2.93 + 2.38) / 2 = 2.655 % from the two QServe rows, published at its size
dse eval --hw nvidia-h100-sxm5-80gb --workload llama-2-7b --precision w4a16 --json
if [ "$rc" -eq 0 ] && python3 -c "
import json, sys
q = json.load(open(sys.argv[1]))['quality']
assert abs(q['loss_pct'] - 2.655) < 1e-9, q
assert q['basis'] == 'published' and q['fallback'] is False and q['family'] == 'llama-2', q
assert q['metric'] == 'wikitext2_ppl' and sorted(q['rows']) == ['qserve-llama2-7b-awq', 'qserve-llama2-7b-gptq'], q
assert q['table'].endswith('validate/quality/published-quality.csv'), q
" "$OUT" 2>"$tmp/py.err"; then ok quality-json-traced; else fail quality-json-traced "$(tail -n 1 "$tmp/py.err") $(head -c 200 "$ERR")"; fi
# the same as the table output's quality line, and the metric in the totals
dse eval --hw nvidia-h100-sxm5-80gb --workload llama-2-7b --precision w4a16
if [ "$rc" -eq 0 ] && grep -q '^quality: quality_loss_pct 2.66 expected (published; family llama-2; wikitext2_ppl; rows' "$OUT" &&
    grep -q '^  quality_loss_pct  *2.655 ' "$OUT"; then
    ok quality-table-line
else
    fail quality-table-line "$(grep quality "$OUT" | head -c 300)"
fi
# no published figure (no CNN has an fp8 row): the measured GEMM error, said to be one
dse eval --hw nvidia-h100-sxm5-80gb --workload resnet50 --precision fp8 --json
if [ "$rc" -eq 0 ] && python3 -c "
import json, sys
q = json.load(open(sys.argv[1]))['quality']
assert q['fallback'] is True and q['basis'].startswith('fallback') and q['rows'] == [] and q['metric'] is None, q
assert 1 < q['loss_pct'] < 10, q
" "$OUT" 2>"$tmp/py.err"; then ok quality-fallback-flagged-json; else fail quality-fallback-flagged-json "$(tail -n 1 "$tmp/py.err")"; fi
expect_ok_has quality-fallback-flagged-table "(FALLBACK: no published figure covers this model and format" eval --hw nvidia-h100-sxm5-80gb --workload resnet50 --precision fp8
# without a table every quantized format falls back, the 16-bit ones stay 0
dse eval --hw nvidia-h100-sxm5-80gb --workload llama-3.1-8b --precision fp8 --quality-table none --json
if [ "$rc" -eq 0 ] && python3 -c "
import json, sys
q = json.load(open(sys.argv[1]))['quality']
assert q['fallback'] is True and q['table'] is None, q
" "$OUT" 2>/dev/null; then ok quality-table-none; else fail quality-table-none "$(head -c 300 "$OUT")"; fi
[ "$(quality nvidia-h100-sxm5-80gb llama-3.1-8b bf16)" = 0 ] && ok quality-reference-zero || fail quality-reference-zero "bf16 not 0"

# ---- a bad table ----
expect_fail quality-bad-dup-id "quality-bad-dup-id.csv: line 4: id 'a' given twice (first on line 3)" eval --hw nvidia-h100-sxm5-80gb --workload llama-2-7b --quality-table $D/quality-bad-dup-id.csv
expect_fail quality-bad-loss "quality-bad-loss.csv: line 4: loss_pct 2.83 disagrees with baseline 5.47 and quantized 5.6: (quantized / baseline - 1) x 100 = 2.3766" eval --hw nvidia-h100-sxm5-80gb --workload llama-2-7b --quality-table $D/quality-bad-loss.csv
expect_fail quality-bad-header "quality-bad-header.csv: line 1: expected the header id,kind,family,... of validate/quality/README.md" eval --hw nvidia-h100-sxm5-80gb --workload llama-2-7b --quality-table $D/quality-bad-header.csv
expect_fail quality-bad-fields "quality-bad-fields.csv: line 3: expected 15 fields, got 16" eval --hw nvidia-h100-sxm5-80gb --workload llama-2-7b --quality-table $D/quality-bad-fields.csv
expect_fail quality-bad-reference "quality-bad-reference.csv: line 2: precision 'fp16' quantizes nothing" validate --precision-errors --quality-table $D/quality-bad-reference.csv
expect_fail quality-missing-table "no-such.csv" eval --hw nvidia-h100-sxm5-80gb --workload llama-2-7b --quality-table $tmp/no-such.csv
expect_fail quality-table-needs-precision-errors "--quality-table goes with --precision-errors" validate --quality-table $D/quality-small.csv
sed 's/"search"/"quality_table": "tests\/data\/quality-bad-loss.csv", "search"/' $D/report-tiny.json >"$tmp/badq.json"
expect_fail quality-sweep-bad-table "quality-bad-loss.csv: line 4: loss_pct 2.83 disagrees" sweep "$tmp/badq.json" --db "$tmp/badq.db" --no-plot
[ -e "$tmp/badq.db" ] && fail quality-sweep-bad-table-no-db "a database was written" || ok quality-sweep-bad-table-no-db

# ---- dse validate --precision-errors: the measured errors, then the published table ----
dse validate --precision-errors
if [ "$rc" -eq 0 ] && grep -q '^relative output error (Frobenius)' "$OUT" && grep -q '^published quality deltas (' "$OUT" &&
    grep -q '^quark-llama31-8b-instruct-fp8 .* fp8 .* wikitext2_ppl *0.81 ' "$OUT" && [ "$(grep -c '^qserve-' "$OUT")" -eq 46 ]; then
    ok quality-precision-errors-beside
else
    fail quality-precision-errors-beside "$(head -c 300 "$ERR")"
fi

# ---- sweeps: accuracy_proxy is quality_loss_pct's earlier name ----
dse sweep $D/report-tiny.json --db "$tmp/tiny.db" --no-plot --json
if [ "$rc" -eq 0 ] && python3 -c "
import json, sqlite3, sys
f = json.load(open(sys.argv[1]))['front']
assert f and all('quality_loss_pct' in p and 'accuracy_proxy' not in p for p in f), f[0]
q = {p['precision']: p['quality_loss_pct'] for p in f}
assert q.get('fp16') == 0 and abs(q.get('w4a16', 0) - 6.3825) < 1e-9, q  # llama-3 at 8B: (6.41 + 6.84 + 5.77 + 6.51) / 4
d = sqlite3.connect(sys.argv[2])
cols = {r[1] for r in d.execute('pragma table_info(points)')}
assert 'quality_loss_pct' in cols and 'accuracy_proxy' not in cols, cols
obj = json.loads(d.execute('select objectives from runs').fetchone()[0])
assert [o['metric'] for o in obj][-1] == 'quality_loss_pct', obj
inputs = json.loads(d.execute('select inputs from runs').fetchone()[0])
assert any(k.endswith('validate/quality/published-quality.csv') for k in inputs), inputs
" "$OUT" "$tmp/tiny.db" 2>"$tmp/py.err"; then ok quality-sweep-alias; else fail quality-sweep-alias "$(tail -n 1 "$tmp/py.err") $(head -c 200 "$ERR")"; fi
# a plot naming the earlier name draws the new column
if command -v gnuplot >/dev/null 2>&1; then
    dse plot "$tmp/tiny.db" --x tokens_per_s --y accuracy_proxy -o "$tmp/alias.svg"
    if [ "$rc" -eq 0 ] && grep -q 'quality_loss_pct (%, lower is better)' "$tmp/alias.svg"; then ok quality-plot-alias; else fail quality-plot-alias "exit $rc: $(head -c 200 "$ERR")"; fi
else
    echo "skip quality-plot-alias: no gnuplot"
fi
# the main job: sweeps/llm_edge.json runs, says where each precision's figure comes from, and its front
# holds 9 points of w8a8, w4a16 and w4a8 and 6 of fp16 (60 before issue 23's quality model: w8a16 too,
# whose published bound is w8a8's). fp16 lost its 4 GB points to the Orin Nano's 2 GiB reserve (issue 23):
# 4 GB - 2.147 GB leaves 1.85 GB, under the 2.47 GB of Llama-3.2-1B's weights; the caps pick the Orin
# Nano's modes by module power (issue 24; the module's base_W 1.81 W and the idle cores 0.37 W count): at
# batch 8 the 7W mode draws 5.09-5.21 W, the 15W mode 7.75-8.24 W, MAXN_SUPER 10.94-11.66 W (since
# 2026-12-08, when ncnn Vulkan's 5.9 ms a pass left the board, a decode step no longer idles through it and
# draws more), so 5 W (no mode fits: the least drawing, 7W) and 7 W run the 7W mode (a tie), 10 W the 15W
# mode (dominated by MAXN_SUPER at 15 W) and 15 W MAXN_SUPER: 3 caps x 2 memory sizes for fp16, x 3 for the
# others (41 points before, when MAXN_SUPER fitted 10 W).
dse sweep sweeps/llm_edge.json --db "$tmp/edge.db" --no-plot
if [ "$rc" -eq 0 ] && grep -q '^quality_loss_pct (.*validate/quality/published-quality.csv; docs/models.md): llama-3.2-1b: fp16 0 (reference), w8a16 2.16 (upper bound), w4a16 6.38 (nearest size), w8a8 2.16 (nearest size), w4a8 9.29 (upper bound)$' "$OUT"; then
    ok quality-sweep-says-basis
else
    fail quality-sweep-says-basis "$(grep '^quality' "$OUT" | head -c 300)"
fi
dse sweep sweeps/llm_edge.json --db "$tmp/edge2.db" --no-plot --json
if [ "$rc" -eq 0 ] && python3 -c "
import collections, json, sys
f = json.load(open(sys.argv[1]))['front']
c = collections.Counter(p['precision'] for p in f)
assert dict(c) == {'fp16': 6, 'w8a8': 9, 'w4a16': 9, 'w4a8': 9}, c
" "$OUT" 2>"$tmp/py.err"; then ok quality-llm-edge-front; else fail quality-llm-edge-front "$(tail -n 1 "$tmp/py.err")"; fi
# a spec without a table ("none"): the fallback, said in the sweep's quality line
sed 's/"search"/"quality_table": "none", "search"/' $D/report-tiny.json >"$tmp/noq.json"
expect_ok_has quality-sweep-none "w4a16 11.9 (FALLBACK: measured GEMM error, no published figure)" sweep "$tmp/noq.json" --db "$tmp/noq.db" --no-plot
# the table is an input of the run: changed, an interrupted run is not resumed
cp validate/quality/published-quality.csv "$tmp/q.csv"
sed "s#\"search\"#\"quality_table\": \"$tmp/q.csv\", \"search\"#" $D/report-tiny.json >"$tmp/ownq.json"
dse sweep "$tmp/ownq.json" --db "$tmp/ownq.db" --no-plot
python3 -c "import sqlite3, sys; d = sqlite3.connect(sys.argv[1]); d.execute(\"update runs set status = 'interrupted'\"); d.commit()" "$tmp/ownq.db"
echo '# changed' >>"$tmp/q.csv"
expect_fail quality-table-change-blocks-resume "changed since it started: $tmp/q.csv" sweep "$tmp/ownq.json" --db "$tmp/ownq.db" --no-plot --resume
# the registry lists it once, with its unit
dse sweep --help
if grep -q '^  quality_loss_pct  *% *min ' "$OUT" && ! grep -q '^  accuracy_proxy ' "$OUT"; then ok quality-registry-entry; else fail quality-registry-entry "$(grep -i 'quality\|accuracy' "$OUT" | head -c 300)"; fi

echo "quality_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
