#!/usr/bin/env python3
"""Rebuild validate/measured/vidur-nccl/kernels.csv from a mirror of microsoft/vidur.

Usage: python3 validate/measured/vidur-nccl/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:microsoft/vidur` brings (a bare git directory).
Standard library only; the output is deterministic (rows sorted by hw folder, collective,
ranks, nodes, bytes, repeat).  See README.md in this folder for what every column means.
"""
import csv
import io
import subprocess
import sys

REPO = "microsoft/vidur"
COMMIT = "7d47513363ec447a741ac5e47241580b47724fbf"
LICENCE = "MIT License (LICENSE: Copyright (c) Microsoft Corporation)"

# Vidur network folder -> (short slug, hwdesc inside one node, hwdesc across nodes)
FOLDERS = [
    ("a100_dgx", "a100", "nvidia-dgx-a100", "nvidia-a100-cluster-32node"),
    ("h100_dgx", "h100", "nvidia-dgx-h100", "nvidia-h100-cluster-32node"),
]
COLLECTIVES = ["all_reduce", "send_recv"]

LO, HI = 1 << 24, 1 << 25  # held-out message sizes, bytes, inclusive


def git_show(gitdir, path):
    return subprocess.run(
        ["git", "--git-dir", gitdir, "show", "%s:%s" % (COMMIT, path)],
        check=True, stdout=subprocess.PIPE).stdout.decode("utf-8")


def fmt_ms(text):
    """The source's ms value rounded to 1e-6 ms (drops binary noise such as
    0.043000000000000003; the source's resolution is 1e-3 ms)."""
    s = "%.6f" % round(float(text), 6)
    s = s.rstrip("0").rstrip(".")
    return s if s else "0"


def rows_of(gitdir, folder, slug, hw1, hwn, coll):
    path = "data/profiling/network/%s/%s.csv" % (folder, coll)
    out = []
    for r in csv.DictReader(io.StringIO(git_show(gitdir, path))):
        if r["collective"] != coll:
            raise SystemExit("%s: unexpected collective %r" % (path, r["collective"]))
        ranks = int(r["num_workers"])
        per_node = int(r["devices_per_node"])
        size = int(r["size"])  # bytes (collectives_wrapper.py: "size": self._size * 2 for fp16)
        if int(r["max_devices_per_node"]) != 8:
            raise SystemExit("%s: max_devices_per_node %s" % (path, r["max_devices_per_node"]))
        # benchmark_runner._get_rank: num_workers // devices_per_node nodes, devices packed
        nodes = ranks // per_node if ranks > per_node else 1
        if ranks % nodes:
            raise SystemExit("%s: %d ranks over %d nodes" % (path, ranks, nodes))
        med = r["time_stats.%s.median" % coll]
        if med == "":
            raise SystemExit("%s: row %s has no median" % (path, r[""]))
        out.append((slug, hw1 if nodes == 1 else hwn, coll, ranks, nodes, per_node, size,
                    int(r[""]), med, folder))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: regenerate.py MIRROR_GIT_DIR")
    gitdir = sys.argv[1]
    rows = []
    for folder, slug, hw1, hwn in FOLDERS:
        for coll in COLLECTIVES:
            rows.extend(rows_of(gitdir, folder, slug, hw1, hwn, coll))
    # repeats: the size grid measures 16 MiB twice per layout; keep both, numbered
    # in the source's row order
    rows.sort(key=lambda t: (t[0], t[2], t[3], t[4], t[6], t[7]))
    w = io.StringIO()
    w.write("# source: https://github.com/%s commit %s; files data/profiling/network/"
            "(a100_dgx or h100_dgx)/(all_reduce or send_recv).csv; licence: %s; "
            "measured_ms = time_stats.<collective>.median (ms); fp16 buffers; see README.md\n"
            % (REPO, COMMIT, LICENCE))
    w.write("case,hw,kernel,precision,shape,measured_ms,half,group,note\n")
    seen = {}
    for slug, hw, coll, ranks, nodes, per_node, size, idx, med, folder in rows:
        key = (slug, coll, ranks, nodes, size)
        seen[key] = seen.get(key, 0) + 1
        rep = "" if seen[key] == 1 else ".rep%d" % seen[key]
        case = "%s.%s.r%d.n%d.b%d%s" % (slug, coll, ranks, nodes, size, rep)
        band = LO <= size <= HI
        half = "heldout" if (ranks == 4 or band) else "fit"
        group = "%s/%dgpu" % (coll, ranks)
        if nodes > 1:
            group += "-%dnode" % nodes
        if band:
            group += "/16-32MiB"
        note = "%s/%s.csv row %d devices_per_node=%d" % (folder, coll, idx, per_node)
        w.write("%s,%s,%s,fp16,bytes=%d;ranks=%d;nodes=%d,%s,%s,%s,%s\n"
                % (case, hw, coll, size, ranks, nodes, fmt_ms(med), half, group, note))
    sys.stdout.write(w.getvalue())


if __name__ == "__main__":
    main()
