#!/bin/sh
# reproduce.sh -- the TPU v1 paper's per-die comparison (Jouppi et al., ISCA 2017, Table 6 and Fig. 9)
# with shipped files: the six applications of models/tpuv1/ on hwdesc/google-tpu-v1.json (int8),
# hwdesc/nvidia-k80.json and hwdesc/intel-haswell-e5-2699v3.json (fp32), each on its own default
# software stack, analytical tier, at the paper's batch sizes (Table 1 for the TPU; Table 4's 16 for
# MLP0 on the CPU and GPU, else the TPU's, which the paper does not publish otherwise).
# Prints dse's inferences/s per die, the performance relative to the Haswell die next to Table 6, the
# geometric and weighted means (weights 61/0/18/11/5/0 of 95: models/tpuv1/README.md), and Fig. 9's
# performance/Watt of whole servers from those means and the servers' TDPs (Table 2).
# Usage: sh validate/tpuv1/reproduce.sh [path/to/dse]     (from the repository root)
set -eu
DSE=${1:-./dse}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for row in mlp0:200:16 mlp1:168:168 lstm0:64:64 lstm1:96:96 cnn0:8:8 cnn1:32:32; do
    app=${row%%:*}
    rest=${row#*:}
    bt=${rest%%:*}
    bc=${rest#*:}
    for p in "tpu google-tpu-v1 int8 $bt" "k80 hwdesc/nvidia-k80.json fp32 $bc" \
        "hsw hwdesc/intel-haswell-e5-2699v3.json fp32 $bc"; do
        set -- $p
        json=$("$DSE" eval --hw "$2" --workload "models/tpuv1/$app.json" --precision "$3" --batch "$4" --json) || {
            echo "reproduce.sh: dse eval of $app on $2 failed" >&2
            exit 1
        }
        printf '%s %s %s ' "$app" "$1" "$4" >>"$out"
        printf '%s' "$json" |
            python3 -c "import json,sys; t=json.load(sys.stdin)['totals']; print(t['throughput_per_s'], t['latency_ms'], t['macs'])" >>"$out"
    done
done
python3 - "$out" <<'PY'
import math, sys
apps = ["mlp0", "mlp1", "lstm0", "lstm1", "cnn0", "cnn1"]
r, tops = {}, {}
for line in open(sys.argv[1]):
    app, plat, batch, ips, ms, macs = line.split()
    r[app, plat] = (int(batch), float(ips), float(ms))
    if plat == "tpu":
        tops[app] = 2 * float(macs) / float(ms) / 1e9  # 2 ops per MAC, the batch's MACs over its latency
# Table 6 of the paper: per-die performance relative to the Haswell die, host overhead included
paper = {"k80": [2.5, 0.3, 0.4, 1.2, 1.6, 2.7, 1.1, 1.9], "tpu": [41.0, 18.5, 3.5, 1.2, 40.3, 71.0, 14.5, 29.2]}
w = [61, 0, 18, 11, 5, 0]
print("dse eval, analytical tier, each platform's default stack (TPU int8, K80 and Haswell fp32)\n")
print("%-6s %-28s %-28s %-28s" % ("app", "TPU: batch, IPS, ms", "K80: batch, IPS, ms", "Haswell: batch, IPS, ms"))
for a in apps:
    print("%-6s" % a, *("%5d %12.0f %9.3f" % r[a, p] for p in ("tpu", "k80", "hsw")))
# Table 3, row 9: the TPU die's measured TeraOps/s per application (host time excluded), the one
# per-application figure of the paper that needs no CPU batch size or host model
t3 = [12.3, 9.7, 3.7, 2.8, 86.0, 14.1]
print("\nTPU die TeraOps/s (dse / Table 3 row 9, host excluded; error)")
print("%-8s" % "", *("%-20s" % a for a in apps))
print("%-8s" % "TPU", *("%5.1f / %-5.1f %+5.0f%%" % (tops[a], m, 100 * (tops[a] / m - 1)) for a, m in zip(apps, t3)))
print("\nperformance per die relative to Haswell (dse / the paper's Table 6)")
print("%-8s" % "", *("%-14s" % a for a in apps + ["GM", "WM"]))
rel = {}
for p in ("k80", "tpu"):
    v = [r[a, p][1] / r[a, "hsw"][1] for a in apps]
    gm = math.exp(sum(map(math.log, v)) / len(v))
    wm = sum(x * y for x, y in zip(v, w)) / sum(w)
    rel[p] = (gm, wm)
    print("%-8s" % p.upper(), *("%5.1f / %-6.1f" % (x, y) for x, y in zip(v + [gm, wm], paper[p])))
print("\nFig. 9, performance/Watt of whole servers relative to the Haswell server (dse / paper):")
print("  total = dies x relative perf / server TDP / (2 / 504 W); incremental uses server TDP - 504 W")
servers = {"k80": (8, 1838, [1.2, 2.1, 1.7, 2.9]), "tpu": (4, 861, [17, 34, 41, 83])}
for p, (dies, tdp, pub) in servers.items():
    gm, wm = rel[p]
    f = lambda x, t: dies * x / t / (2 / 504)
    mine = [f(gm, tdp), f(wm, tdp), f(gm, tdp - 504), f(wm, tdp - 504)]
    print("  %-4s total GM %5.1f / %-5g WM %5.1f / %-5g incremental GM %5.1f / %-5g WM %5.1f / %g" %
          ((p.upper(),) + tuple(x for pair in zip(mine, pub) for x in pair)))
print("\nsummary: tpu_gm=%.2f tpu_wm=%.2f k80_gm=%.2f k80_wm=%.2f (paper: 14.5 29.2 1.1 1.9)" %
      (rel["tpu"] + rel["k80"]))
PY
