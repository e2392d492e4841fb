#!/usr/bin/env python3
"""Rebuild validate/measured/deepgemm-h800/kernels.csv from a mirror of deepseek-ai/DeepGEMM.

Usage: python3 validate/measured/deepgemm-h800/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:deepseek-ai/DeepGEMM` brings (a bare git directory); README.md is
read at two commits with `git --git-dir MIRROR_GIT_DIR show COMMIT:README.md`.  Standard library only.
Output is deterministic: per commit (oldest first) the three tables of its Performance section in their
row order.  README.md in this folder says what every column means and where the numbers come from.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from md_table import read_table  # noqa: E402  (validate/measured/md_table.py)

REPO = "deepseek-ai/DeepGEMM"
# (commit, label used in case ids and groups, what the commit is)
COMMITS = [
    ("a6d97a1c1b48a7a9d7994d0e155ee6f11d0a3f07", "r2502", "Initial commit, 2025-02-25"),
    ("55ab91f72f76e8a6db0e86282c3169a88d93df1b", "r2503", "Update performance, 2025-03-25"),
]
PATH = "README.md"
LICENCE = "MIT (LICENSE: Copyright (c) 2025 DeepSeek)"
HW = "nvidia-h100-sxm5-80gb"  # H800 SXM: README.md of this folder says why
HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note"
HELDOUT_N = 7168  # ../README.md: every row whose N is 7168 is held out

# table heading -> (slug, columns)
TABLES = {
    "### Normal GEMMs for dense models": ("normal", ["M", "N", "K", "Computation", "Memory bandwidth", "Speedup"]),
    "### Grouped GEMMs for MoE models (contiguous layout)":
        ("contiguous", ["#Groups", "M per group", "N", "K", "Computation", "Memory bandwidth", "Speedup"]),
    "### Grouped GEMMs for MoE models (masked layout)":
        ("masked", ["#Groups", "M per group", "N", "K", "Computation", "Memory bandwidth", "Speedup"]),
}


def git_show(gitdir, commit):
    return subprocess.run(["git", "--git-dir", gitdir, "show", commit + ":" + PATH],
                          check=True, stdout=subprocess.PIPE).stdout.decode("utf-8")


def tables(text):
    """{heading: [(line number, row dict), ...]} for the three headings of TABLES."""
    lines = text.split("\n")
    out = {}
    for i, ln in enumerate(lines):
        if ln.strip() not in TABLES:
            continue
        slug, cols = TABLES[ln.strip()]
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("|"):
            j += 1
        rows, _ = read_table(lines, j, cols)
        if ln.strip() in out:
            raise ValueError("table %r twice" % ln.strip())
        out[ln.strip()] = rows
    if set(out) != set(TABLES):
        raise ValueError("missing tables: %s" % sorted(set(TABLES) - set(out)))
    return out


def tflops(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?) TFLOPS", s)
    if not m:
        raise ValueError("expected 'N TFLOPS', got %r" % s)
    return float(m.group(1))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: regenerate.py MIRROR_GIT_DIR > kernels.csv")
    print("# source: https://github.com/%s README.md, section Performance (normal GEMMs, m-grouped contiguous and "
          "masked GEMMs), at commits %s; licence: %s; measured on an H800 with NVCC 12.8 (FP8 e4m3 operands with "
          "fine-grained scaling, BF16 output), staged on %s (same SMs, clocks and HBM3: README.md); "
          "measured_ms = 2*G*M*N*K / (TFLOPS * 1e12) * 1e3 with G the groups (1 for a normal GEMM); see README.md"
          % (REPO, " and ".join("%s (%s)" % (c, what) for c, _, what in COMMITS), LICENCE, HW))
    print(HEADER)
    for commit, label, _ in COMMITS:
        t = tables(git_show(sys.argv[1], commit))
        for heading, (slug, cols) in TABLES.items():
            for line, r in t[heading]:
                g = int(r.get("#Groups", "1"))
                m = int(r["M per group"] if "M per group" in r else r["M"])
                n, k = int(r["N"]), int(r["K"])
                tf = tflops(r["Computation"])
                ms = 2.0 * g * m * n * k / (tf * 1e12) * 1e3
                shape = ("B=%d;" % g if slug != "normal" else "") + "M=%d;N=%d;K=%d" % (m, n, k)
                case = "deepgemm.%s.%s.%sm%d.n%d.k%d" % (label, slug, "g%d." % g if slug != "normal" else "", m, n, k)
                half = "heldout" if n == HELDOUT_N else "fit"
                note = ("README.md line %d: %s %s GB/s (speedup %s over DeepSeek's CUTLASS 3.6 implementation)"
                        % (line, r["Computation"], r["Memory bandwidth"].replace(" GB/s", ""), r["Speedup"]))
                print("%s,%s,gemm,fp8,%s,%.6g,%s,%s,%s" % (case, HW, shape, ms, half,
                                                            "deepgemm/%s/%s" % (label, slug), note))


if __name__ == "__main__":
    main()
