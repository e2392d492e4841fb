#!/usr/bin/env python3
"""Runs a separately checked-out SCALE-Sim v2 on the cases of cases.csv and records its reports.

Usage: run_scalesim.py --scalesim DIR [--python PY] [--out CSV] [--only CONFIG[,CONFIG...]]

DIR is a SCALE-Sim v2 checkout (github.com/scalesim-project/scale-sim-v2, commit 22f88b1 for the
recorded figures); PY a Python with numpy, pandas and tqdm (Debian: /usr/bin/python3 with
python3-numpy, python3-pandas, python3-tqdm). Each case (config, topology) runs once in a temporary
directory; its COMPUTE_REPORT, BANDWIDTH_REPORT and DETAILED_ACCESS_REPORT rows are appended to CSV
(default scalesim-22f88b1.csv beside this script). Cases already in CSV are skipped, so an
interrupted run resumes. Nothing of SCALE-Sim is copied here: this script only runs it."""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ["config", "topology", "layer_id", "layer", "total_cycles", "stall_cycles", "overall_util_pct",
          "mapping_efficiency_pct", "compute_util_pct", "ifmap_sram_reads", "filter_sram_reads",
          "ofmap_sram_writes", "ifmap_dram_reads", "filter_dram_reads", "ofmap_dram_writes"]


def report(path):
    """Rows of a SCALE-Sim report as lists of stripped fields (header dropped, trailing comma too)."""
    with open(path) as f:
        rows = [[x.strip() for x in line.rstrip("\n").split(",")] for line in f if line.strip()]
    return [r[:-1] if r and r[-1] == "" else r for r in rows[1:]]


def layer_names(topo):
    """Layer names as SCALE-Sim lists them: a conv layer named *DP* is one layer per channel."""
    with open(topo) as f:
        lines = [l.split(",") for l in f.read().splitlines()[1:] if l.strip()]
    names = []
    for l in lines:
        n = l[0].strip()
        names += ["%sChannel_%d" % (n, i) for i in range(int(l[5]))] if "DP" in n and len(l) > 5 else [n]
    return names


def num(s):
    v = float(s)
    return str(int(v)) if v == int(v) and abs(v) < 1e15 else repr(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scalesim", required=True, help="SCALE-Sim v2 checkout")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--out", default=os.path.join(HERE, "scalesim-22f88b1.csv"))
    ap.add_argument("--only", default="", help="comma-separated config names")
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    done = set()
    if os.path.exists(a.out):
        with open(a.out) as f:
            done = {(r["config"], r["topology"]) for r in csv.DictReader(f)}
    new = not os.path.exists(a.out)
    with open(os.path.join(HERE, "cases.csv")) as f:
        cases = [r for r in csv.DictReader(f)]
    out = open(a.out, "a", newline="")
    w = csv.writer(out, lineterminator="\n")
    if new:
        w.writerow(FIELDS)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(a.scalesim))
    for c in cases:
        cfg, topo, kind = c["config"], c["topology"], c["kind"]
        if (only and cfg not in only) or (cfg, topo) in done:
            continue
        cfg_path = os.path.join(HERE, "cfg", cfg + ".cfg")
        topo_path = os.path.join(HERE, "topo", topo + ".csv")
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.time()
            r = subprocess.run([a.python, "-m", "scalesim.scale", "-c", cfg_path, "-t", topo_path, "-p", tmp,
                                "-i", kind], cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if r.returncode:
                sys.exit("run_scalesim: %s on %s failed: %s" % (cfg, topo, r.stderr.decode()[-2000:]))
            run = [d for d in os.listdir(tmp) if os.path.isdir(os.path.join(tmp, d))][0]
            comp = report(os.path.join(tmp, run, "COMPUTE_REPORT.csv"))
            det = report(os.path.join(tmp, run, "DETAILED_ACCESS_REPORT.csv"))
        names = layer_names(topo_path)
        for lid, (cr, dr) in enumerate(zip(comp, det)):
            name = names[lid] if len(names) == len(comp) else cr[0]
            w.writerow([cfg, topo, cr[0], name] + [num(x) for x in cr[1:6]] +
                       [num(dr[3]), num(dr[6]), num(dr[9]), num(dr[12]), num(dr[15]), num(dr[18])])
        out.flush()
        print("run_scalesim: %-14s %-10s %3d layers %7.1f s" % (cfg, topo, len(comp), time.time() - t0),
              file=sys.stderr)
    out.close()


if __name__ == "__main__":
    main()
