#!/bin/sh
# tests/serve_test.sh -- script tests of dse serve and the serving block of sweeps (docs/serving.md):
# the relative clock (rates down to 1e-13 and arrivals near 1e308 give the latencies of requests served
# alone, not 0), the capacity search that finds no rate (a field and a message, with its lower bound),
# the KV cache never past 100 % with prefix caching, requests longer than the context (--too-long and
# the sweep's "too_long"), the --slo and --prefix-tokens refusals, and trace files with byte-order marks.
#
# Environment: DSE_BIN (default ./dse), DSE_SRCDIR (default: the directory above this script), as
# tests/cli_test.sh. Prints "ok NAME" / "FAIL NAME: why" per case and ends with
# "serve_test: N passed, N failed"; exits 1 when a case failed.

set -u

suite=serve_test
. "$(cd "$(dirname "$0")" && pwd)/test_env.sh"
cd "$SRC" || exit 1 # shipped names resolve against the current directory
D=tests/data




# expect_fail NAME 'stderr substring' DSE-ARGS...: exit 2, one line "dse: ..." holding the substring,
# nothing on stdout.
expect_fail() {
    name=$1 sub=$2
    shift 2
    dse "$@"
    if [ "$rc" -ne 2 ]; then
        fail "$name" "exit $rc, expected 2: $(first_err)"
    elif [ -s "$OUT" ]; then
        fail "$name" "wrote to stdout: $(head -n 1 "$OUT" | cut -c 1-200)"
    elif [ "$(wc -l <"$ERR")" -ne 1 ]; then
        fail "$name" "message is not one line: $(tr '\n' '|' <"$ERR" | cut -c 1-300)"
    elif ! head -n 1 "$ERR" | grep -q '^dse: '; then
        fail "$name" "message does not start with 'dse: ': $(first_err)"
    elif ! grep -qF -e "$sub" "$ERR"; then
        fail "$name" "message lacks '$sub': $(first_err)"
    else
        ok "$name"
    fi
}

# check_ok: after a run, prints why it is not a clean success (exit 0, stdout, no stderr).
check_ok() {
    if [ "$rc" -ne 0 ]; then
        echo "exit $rc, expected 0; stderr: $(first_err)"
        return 1
    fi
    if [ ! -s "$OUT" ]; then
        echo "nothing on stdout"
        return 1
    fi
    if [ -s "$ERR" ]; then
        echo "unexpected stderr: $(first_err)"
        return 1
    fi
    return 0
}

# expect_ok_has NAME 'stdout substring' DSE-ARGS...
expect_ok_has() {
    name=$1 sub=$2
    shift 2
    dse "$@"
    if ! why=$(check_ok); then
        fail "$name" "$why"
    elif ! grep -qF -e "$sub" "$OUT"; then
        fail "$name" "stdout lacks '$sub': $(grep -m1 -i "$3" "$OUT" 2>/dev/null | cut -c 1-200)"
    else
        ok "$name"
    fi
}

# A Python prelude for JSON checks: d is the document on stdin (or the files named), need(cond, msg).
PYPRE='
import json, math, sys
def need(c, msg):
    if not c:
        print(msg); sys.exit(1)
def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
def close(a, b, rel=1e-9):
    return num(a) and num(b) and abs(a - b) <= rel * max(abs(a), abs(b))
'

# expect_json NAME 'python checks' DSE-ARGS...: success, and JSON on stdout (d) passing the checks.
expect_json() {
    name=$1 py=$2
    shift 2
    dse "$@"
    if ! why=$(check_ok); then
        fail "$name" "$why"
    elif ! why=$(python3 -c "$PYPRE
try:
    d = json.load(sys.stdin)
except ValueError as ex:
    print('stdout is not JSON: %s' % ex); sys.exit(1)
$py" <"$OUT" 2>&1); then
        fail "$name" "$(echo "$why" | tail -n 3 | tr '\n' ' ' | cut -c 1-400)"
    else
        ok "$name"
    fi
}

# json_to FILE DSE-ARGS...: runs dse --json into FILE; rc as dse
json_to() {
    f=$1
    shift
    dse "$@"
    cp "$OUT" "$f"
}

H100=nvidia-h100-sxm5-80gb

# --- item 4: the clock ---------------------------------------------------------------------------
# At 1e-13 requests/s (arrivals some 1e13 s apart, where a double's step is 2 ms, and 2 s by the 20th)
# every request is served alone: each TTFT, TPOT and end-to-end latency is a single request's, the same
# (to 1e-9) as one request's run; an absolute clock reported 0 ms.
json_to "$tmp/one.json" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 1 --json
expect_json serve-rate-1e-13 "
one = json.load(open('$tmp/one.json'))['metrics']
m = d['metrics']
for k in ('ttft_ms', 'tpot_ms', 'e2e_ms'):
    for p in ('p50', 'p99', 'max'):
        need(close(m[k][p], one[k]['p50']), '%s %s %r, alone %r' % (k, p, m[k][p], one[k]['p50']))
need(m['ttft_ms']['p50'] > 0, 'TTFT 0')
" serve --hw $H100 --workload llama-3.1-8b --rate 1e-13 --requests 20 --json
# arrivals at 1e308, 1e308 and 1.7e308 s against the same requests at 0, 0 and 1e6 s: the same figures
json_to "$tmp/near.json" serve --hw $H100 --workload llama-3.1-8b --trace $D/serve-trace-near.csv --json
expect_json serve-arrivals-1e308 "
near = json.load(open('$tmp/near.json'))['metrics']
m = d['metrics']
for k in ('ttft_ms', 'tpot_ms', 'e2e_ms'):
    for p in ('mean', 'p50', 'max'):
        need(close(m[k][p], near[k][p]), '%s %s %r, near 0: %r' % (k, p, m[k][p], near[k][p]))
need(m['e2e_ms']['p50'] > 0, 'end-to-end 0')
" serve --hw $H100 --workload llama-3.1-8b --trace $D/serve-trace-far.csv --json
# a sweep's rate axis [1e-13, 2]: at 1e-13 every request is alone, its TTFT p50 and p99 one request's
# (at rate 2 the median request is alone too, so its p50 is the same figure); they were stored as 0
if "$BIN" sweep $D/sweep-serving-lowrate.json --db "$tmp/lr.db" --no-plot --quiet >/dev/null 2>"$tmp/lr.err" &&
    why=$(python3 -c "$PYPRE
import sqlite3
r = sqlite3.connect('$tmp/lr.db').execute('select rate, feasible, serve_ttft_p50_ms, serve_ttft_p99_ms, serve_e2e_p50_ms from points order by rate').fetchall()
need(len(r) == 2 and r[0][1] == 1 and r[1][1] == 1, 'rows %r' % r)
lo, hi = r
need(lo[2] > 0 and lo[4] > lo[2], 'rate 1e-13: TTFT p50 %r, end-to-end p50 %r' % (lo[2], lo[4]))
need(close(lo[2], lo[3]) and close(lo[2], hi[2], 1e-6), 'rate 1e-13: TTFT p50 %r p99 %r; rate 2: p50 %r' % (lo[2], lo[3], hi[2]))
need(hi[3] >= lo[3], 'rate 2 p99 %r below the lone request %r' % (hi[3], lo[3]))
" 2>&1); then ok sweep-serving-rate-1e-13; else fail sweep-serving-rate-1e-13 "${why:-$(head -c 300 "$tmp/lr.err")}"; fi

# --- item 4: capacity with no feasible rate --------------------------------------------------------
# a TTFT limit of 1 us, below one request's prefill alone: no rate meets it. Exit 0 with the answer
# (feasible false, rate null, the search's bounds: the floor is 1e-6 x the top), the metrics those of
# the run at the floor (nobody meets the SLO); a capacity of 1.3e-13 req/s was reported.
expect_json serve-capacity-none "
k = d['capacity']
need(k['feasible'] is False and k['rate_rps'] is None, 'capacity %r' % k)
need(num(k['lower_bound_rps']) and num(k['upper_bound_rps']) and close(k['lower_bound_rps'], 1e-6 * k['upper_bound_rps']), 'bounds %r' % k)
need('no rate' in k['reason'], 'reason %r' % k.get('reason'))
need(d['metrics']['slo_attainment'] == 0 and d['metrics']['ttft_ms']['p50'] > 0.001, 'metrics %r' % d['metrics'])
" serve --hw $H100 --workload llama-3.1-8b --requests 200 --capacity --slo ttft_ms=0.001 --json
expect_ok_has serve-capacity-none-message "capacity: none: no rate from" serve --hw $H100 --workload llama-3.1-8b --requests 200 --capacity --slo ttft_ms=0.001
# a feasible search states its bounds too, and its rate lies between them
expect_json serve-capacity-bounds "
k = d['capacity']
need(k['feasible'] is True and num(k['rate_rps']), 'capacity %r' % k)
need(k['lower_bound_rps'] <= k['rate_rps'] <= k['upper_bound_rps'], 'bounds %r' % k)
need(d['metrics']['slo_attainment'] >= 0.9, 'attainment %r' % d['metrics']['slo_attainment'])
" serve --hw $H100 --workload llama-3.1-8b --requests 500 --lengths models/traces/azure-conv-2023.csv --slo ttft_ms=500,tpot_ms=50 --capacity --json

# --- item 5: the KV cache never past 100 % with prefix caching -------------------------------------
# the issue's run: 1,189 KV tokens (74 blocks of 16), prompts of 600 with a 512-token prefix on half of
# them, outputs of 400: the peak was 1.284; now at most 1, the prefix's blocks evicted when a request
# without it needs them (prefix_evictions > 0). --mem-util 0.214 gave those 1,189 tokens; 0.21734 gives
# 1,190 now that the H100's 0.287 GB CUDA context (hwdesc reserved_GiB) comes out of the share:
# 0.21734 x 85.899 = 18.669 GB - 0.287 = 18.383 GB, as 0.214 x 85.899 = 18.382 GB did.
expect_json serve-kv-prefix "
m = d['metrics']
need(num(m['kv_use_peak']) and 0 < m['kv_use_peak'] <= 1, 'kv_use_peak %r' % m['kv_use_peak'])
need(0 <= m['kv_use_mean'] <= m['kv_use_peak'], 'kv_use_mean %r' % m['kv_use_mean'])
need(m['prefix_evictions'] > 0, 'prefix_evictions %r' % m.get('prefix_evictions'))
" serve --hw $H100 --workload llama-3.1-8b --rate 5 --requests 20 --mem-util 0.21734 --prefix-tokens 512 --prefix-share 0.5 --prompt-dist fixed:600 --output-dist fixed:400 --json
# in-flight batching, lengths uniform (1.12 before); the chunked scheduler's breach is in the property
# test (tests/check_serve.c: kv_never_overcommitted)
expect_json serve-kv-prefix-inflight "
m = d['metrics']
need(0 < m['kv_use_peak'] <= 1, 'kv_use_peak %r' % m['kv_use_peak'])
" serve --hw $H100 --workload llama-3.1-8b --rate 5 --requests 40 --mem-util 0.21734 --prefix-tokens 256 --prefix-share 0.5 --prompt-dist uniform:300-700 --output-dist uniform:100-450 --scheduler inflight --admission on-demand --json

# --- item 10: requests longer than the context -----------------------------------------------------
# the issue's run: the default (error) counts them and names the option
expect_fail serve-too-long-error "84 of 1000 requests exceed max_position_embeddings 4096 of llama-2-70b, the first request 13 (prompt 4075 + output 41 tokens): --too-long skip rejects them, --too-long truncate cuts their prompts" \
    serve --hw nvidia-dgx-h100 --workload llama-2-70b --tp 4 --rate 6 --lengths models/traces/azure-conv-2023.csv
# the first 2,000 rows of the trace on Llama 2 7B (4,096 positions): the test counts the rows whose
# prompt + output exceed 4,096 itself; skip serves the others, truncate serves all, cut
k=$(awk -F, '!/^#/ && $1 != "arrival_s" { if (++n > 2000) exit; if ($2 + $3 > 4096) k++ } END { print k + 0 }' models/traces/azure-conv-2023.csv)
expect_json serve-too-long-skip "
m = d['metrics']
need($k > 0 and m['too_long_skipped'] == $k and m['too_long_truncated'] == 0, 'skipped %r, expected $k' % m['too_long_skipped'])
need(m['requests'] == 2000 - $k, 'requests %r, expected 2000 - $k' % m['requests'])
" serve --hw $H100 --workload llama-2-7b --trace models/traces/azure-conv-2023.csv --requests 2000 --too-long skip --json
expect_json serve-too-long-truncate "
m = d['metrics']
need(m['too_long_truncated'] == $k and m['too_long_skipped'] == 0 and m['requests'] == 2000, 'metrics %r' % m)
" serve --hw $H100 --workload llama-2-7b --trace models/traces/azure-conv-2023.csv --requests 2000 --too-long truncate --json
expect_ok_has serve-too-long-table "too long: $k of 2000 requests exceed the context of 4096 tokens: their prompts truncated to fit (--too-long truncate)" \
    serve --hw $H100 --workload llama-2-7b --trace models/traces/azure-conv-2023.csv --requests 2000 --too-long truncate
expect_fail serve-too-long-bad "--too-long: expected error, skip or truncate, got 'drop'" serve --hw $H100 --workload llama-2-7b --rate 1 --too-long drop
# the sweep's serving block: "too_long" as --too-long (Pythia 410M: 2,048 positions)
printf '{"name":"tl1","workload":{"model":"models/pythia-410m.json","serving":{"rate":2,"requests":300,"lengths":"azure-conv-2023"}},"system":"hwdesc/%s.json","objectives":[{"metric":"serve_goodput_rps","goal":"max"}]}' $H100 >"$tmp/tl1.json"
expect_fail sweep-serving-too-long-error '"too_long": "skip" rejects them, "truncate" cuts their prompts' sweep "$tmp/tl1.json" --no-db
if grep -qE 'workload\.serving: [1-9][0-9]* of 300 requests exceed max_position_embeddings 2048 of pythia-410m, the first request [0-9]+ \(prompt [0-9]+ \+ output [0-9]+ tokens\): "too_long": "skip" rejects them, "truncate" cuts their prompts' "$ERR"; then
    ok sweep-serving-too-long-message
else
    fail sweep-serving-too-long-message "$(first_err)"
fi
sed 's/"lengths"/"too_long":"skip","lengths"/' "$tmp/tl1.json" >"$tmp/tl2.json"
expect_ok_has sweep-serving-too-long-skip "workload pythia-410m: " sweep "$tmp/tl2.json" --no-db --no-plot
grep -qE 'workload pythia-410m: [1-9][0-9]* of its 300 requests exceed the model.s context: rejected, not served \("too_long": "skip"\)' "$OUT" &&
    ok sweep-serving-too-long-count || fail sweep-serving-too-long-count "$(grep -m1 'workload pythia' "$OUT")"
printf '{"name":"tl3","workload":{"model":"models/pythia-410m.json","serving":{"rate":2,"requests":300,"too_long":"cut"}},"system":"hwdesc/%s.json","objectives":[{"metric":"serve_goodput_rps","goal":"max"}]}' $H100 >"$tmp/tl3.json"
expect_fail sweep-serving-too-long-bad "workload.serving.too_long: unknown value 'cut' (expected one of: error, skip, truncate)" sweep "$tmp/tl3.json" --no-db

# --- item 15: --slo and --prefix-tokens refusals ---------------------------------------------------
expect_fail serve-slo-twice "--slo: ttft_ms given twice in 'ttft_ms=5,ttft_ms=6': give each metric once" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 10 --slo ttft_ms=5,ttft_ms=6
expect_fail serve-slo-comma "--slo: entry 1 of ',' is empty" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 10 --slo ,
expect_fail serve-slo-trailing "--slo: entry 2 of 'ttft_ms=500,,' is empty" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 10 --slo 'ttft_ms=500,,'
expect_fail serve-slo-empty "--slo: entry 1 of '' is empty" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 10 --slo ''
# a prefix no shorter than the prompts it is part of (it was cut to 511 silently)
expect_fail serve-prefix-too-long "--prefix-tokens: a shared prefix of 100000 tokens is not shorter than request 1's prompt of 512 tokens" \
    serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 10 --prefix-tokens 100000
grep -qF "(at most 511 here, the shortest such prompt less one)" "$ERR" && ok serve-prefix-too-long-limit || fail serve-prefix-too-long-limit "$(first_err)"
expect_fail serve-prefix-equal "request 1's prompt of 512 tokens" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 10 --prefix-tokens 512
expect_ok_has serve-prefix-511 "prefix_evictions" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 10 --prefix-tokens 511
printf '{"name":"pf","workload":{"model":"models/llama-3.2-1b.json","serving":{"rate":2,"requests":50,"prompt_dist":"fixed:512","prefix_tokens":512}},"system":"hwdesc/%s.json","objectives":[{"metric":"serve_goodput_rps","goal":"max"}]}' $H100 >"$tmp/pf.json"
expect_fail sweep-serving-prefix-too-long "workload.serving.prefix_tokens: a shared prefix of 512 tokens is not shorter than request 1's prompt of 512 tokens" sweep "$tmp/pf.json" --no-db

# --- item 17: byte-order marks in a trace -----------------------------------------------------------
# Excel's "CSV UTF-8" opens with EF BB BF (and ends lines with CR LF): read as the same trace without
json_to "$tmp/plain.json" serve --hw $H100 --workload llama-3.1-8b --trace $D/serve-trace-ok.csv --json
expect_json serve-trace-bom "
p = json.load(open('$tmp/plain.json'))['metrics']
m = d['metrics']
need(m['requests'] == 3 and all(close(m[k]['mean'], p[k]['mean']) for k in ('ttft_ms', 'tpot_ms', 'e2e_ms')), 'metrics %r against %r' % (m, p))
" serve --hw $H100 --workload llama-3.1-8b --trace $D/serve-trace-bom.csv --json
expect_fail serve-trace-utf16 "bad-serve-trace-utf16.csv: line 1: UTF-16 text (it opens with the byte-order mark FF FE): save it as UTF-8 or ASCII" \
    serve --hw $H100 --workload llama-3.1-8b --trace $D/bad-serve-trace-utf16.csv
expect_fail serve-trace-bom-inside "bad-serve-trace-bom-inside.csv: line 4: a UTF-8 byte-order mark (EF BB BF) inside the file" \
    serve --hw $H100 --workload llama-3.1-8b --trace $D/bad-serve-trace-bom-inside.csv

# --- item 12: a what-if can be served (--set was refused by dse serve) ----------------------------
# Decode of Llama-3.1-8B on the H100 is memory-bound: the HBM at 6700 GB/s (twice its 3350) makes TPOT
# shorter; the header and --json say what was set.
json_to "$tmp/base.json" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 20 --json
expect_json serve-set "
b = json.load(open('$tmp/base.json'))['metrics']
need(d.get('what_if') == 'hw:devices.gpu.memory.hbm3.bandwidth_GBps=6700', 'what_if %r' % d.get('what_if'))
need(d['metrics']['tpot_ms']['mean'] < 0.8 * b['tpot_ms']['mean'], 'tpot %r against %r' % (d['metrics']['tpot_ms']['mean'], b['tpot_ms']['mean']))
" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 20 --json --set hw:devices.gpu.memory.hbm3.bandwidth_GBps=6700
expect_ok_has serve-set-header "what-if: --set hw:devices.gpu.memory.hbm3.bandwidth_GBps=6700" serve --hw $H100 --workload llama-3.1-8b --rate 1 --requests 20 --set hw:devices.gpu.memory.hbm3.bandwidth_GBps=6700

echo "$suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
