#!/usr/bin/env python3
"""Compares dse's SCALE-Sim compute report with SCALE-Sim v2's own, recorded in scalesim-22f88b1.csv.

Usage: compare.py [--dse PATH] [--csv FILE] [--markdown] [--min-within PCT]

For every case of cases.csv, runs `dse eval --hw cfg/CONFIG.cfg --workload topo/TOPOLOGY.csv
--fidelity cycle --scalesim-csv` and checks, layer by layer: compute cycles (Total less Stall Cycles)
equal; Mapping Efficiency % equal (to 1e-9); with USER bandwidth, Total and Stall Cycles within
+-10 % (a stall of 0 must be 0); with CALC, no stalls. Prints one line per layer (--markdown: a table
for docs/models.md) and a summary; exits 1 when a compute cycle count or mapping differs, a CALC
layer stalls, or fewer than --min-within percent (default 90) of the USER layers have both Total and
Stall Cycles within +-10 %. Also counts the USER layers whose access report (SRAM and DRAM words per
operand) equals SCALE-Sim's. Needs only dse: SCALE-Sim's figures are the recorded ones."""
import argparse
import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ACCESS = ["ifmap_sram_reads", "filter_sram_reads", "ofmap_sram_writes", "ifmap_dram_reads", "filter_dram_reads",
          "ofmap_dram_writes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dse", default=os.path.join(HERE, "..", "..", "dse"))
    ap.add_argument("--csv", default=os.path.join(HERE, "scalesim-22f88b1.csv"))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--min-within", type=float, default=90)
    a = ap.parse_args()
    ref = {}
    with open(a.csv) as f:
        for r in csv.DictReader(f):
            ref.setdefault((r["config"], r["topology"]), []).append(r)
    with open(os.path.join(HERE, "cases.csv")) as f:
        cases = [r for r in csv.DictReader(f) if (r["config"], r["topology"]) in ref]
    bad, user, within, exact, calc, words = [], 0, 0, 0, 0, [0] * 6
    if a.markdown:
        print("| config | layer | SCALE-Sim total | dse total | error | SCALE-Sim stall | dse stall | error |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
    for c in cases:
        cfg = os.path.join(HERE, "cfg", c["config"] + ".cfg")
        topo = os.path.join(HERE, "topo", c["topology"] + ".csv")
        p = subprocess.run([a.dse, "eval", "--hw", cfg, "--workload", topo, "--fidelity", "cycle", "--scalesim-csv"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode:
            sys.exit("compare: dse failed on %s %s: %s" % (c["config"], c["topology"], p.stderr))
        rows = [[x.strip() for x in l.split(",")] for l in p.stdout.splitlines()[1:]]
        mode_user = "calc" not in c["config"]
        if len(rows) != len(ref[(c["config"], c["topology"])]):
            sys.exit("compare: %s %s: %d layers, SCALE-Sim %d" % (c["config"], c["topology"], len(rows),
                                                                  len(ref[(c["config"], c["topology"])])))
        acc = []
        if mode_user:
            p = subprocess.run([a.dse, "eval", "--hw", cfg, "--workload", topo, "--fidelity", "cycle",
                                "--scalesim-report", "access"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
            if p.returncode:
                sys.exit("compare: dse failed on %s %s: %s" % (c["config"], c["topology"], p.stderr))
            acc = [[x.strip() for x in l.split(",")] for l in p.stdout.splitlines()[1:]]
        for li, (d, s) in enumerate(zip(rows, ref[(c["config"], c["topology"])])):
            if mode_user:  # the access report's six word counts
                for j, k in enumerate(ACCESS):
                    words[j] += float(acc[li][3 + 3 * j]) == float(s[k])
            dt, dst, dmap = float(d[1]), float(d[2]), float(d[4])
            st, sst, smap = float(s["total_cycles"]), float(s["stall_cycles"]), float(s["mapping_efficiency_pct"])
            et = 100 * (dt - st) / st
            es = 0 if sst == dst else (100 * (dst - sst) / sst if sst else float("inf"))
            name = "%s %s/%s" % (c["config"], c["topology"], s["layer"])
            if dt - dst != st - sst or abs(dmap - smap) > 1e-9:
                bad.append("%s: compute %g vs %g, mapping %g vs %g" % (name, dt - dst, st - sst, dmap, smap))
            if mode_user:
                user += 1
                within += abs(et) <= 10 and abs(es) <= 10
                exact += dt == st and dst == sst
            else:
                calc += 1
                if dst or sst:
                    bad.append("%s: CALC stalls %g (SCALE-Sim %g)" % (name, dst, sst))
            if a.markdown:
                print("| %s | %s/%s | %d | %d | %+.1f %% | %d | %d | %s |" % (
                    c["config"], c["topology"], s["layer"], st, dt, et, sst, dst,
                    "%+.1f %%" % es if es != float("inf") else "n/a"))
            else:
                print("%-16s %-24s total %10d %10d %+7.2f %%  stall %10d %10d %s" % (
                    c["config"], c["topology"] + "/" + s["layer"], st, dt, et, sst, dst,
                    "%+7.2f %%" % es if es != float("inf") else "  (SCALE-Sim 0)"))
    pct = 100.0 * within / user if user else 100.0
    print("compare: %d USER layers, %d (%.1f %%) with Total and Stall Cycles within +-10 %%, %d equal; %d CALC "
          "layers; %d with a compute cycle count, mapping or CALC stall that differs" % (user, within, pct, exact, calc,
                                                                                       len(bad)))
    print("compare: USER layers with equal access-report words: " +
          ", ".join("%s %d" % (k, n) for k, n in zip(ACCESS, words)))
    for b in bad:
        print("compare: " + b)
    sys.exit(1 if bad or pct < a.min_within else 0)


if __name__ == "__main__":
    main()
