#!/usr/bin/env python3
"""Rebuild validate/measured/mlengineering-matmul/kernels.csv from a mirror of stas00/ml-engineering.

Usage: python3 validate/measured/mlengineering-matmul/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:stas00/ml-engineering` brings (a bare git directory); the file is
read with `git --git-dir MIRROR_GIT_DIR show COMMIT:PATH`.  Standard library only.  Output is
deterministic: the BF16 table, then the FP8 table, each in its own row order.  README.md in this folder
says what every column means and where the numbers come from.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from md_table import read_table  # noqa: E402  (validate/measured/md_table.py)

REPO = "stas00/ml-engineering"
COMMIT = "744d01e18b79512572f64a6bbd8b5f4a725203a7"
PATH = "compute/accelerator/README.md"
LICENCE = "CC BY-SA 4.0 (LICENSE-CC-BY-SA; README.md: Attribution-ShareAlike 4.0 International)"
HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note"
SECTION = "#### Maximum Achievable Matmul FLOPS comparison table"
COLUMNS = ["Accelerator", "MAMF", "Theory", "Efficiency", "Best Shape MxNxK", "torch version", "Notes"]

# table label (bold line above the table) -> (dse precision, case slug)
TABLES = {
    "**BF16**:": ("bf16", "bf16"),
    "**FP8 (`float8_e4m3fn`)**:": ("fp8", "fp8-e4m3"),
}

# Accelerator -> (shipped hwdesc, case slug); README.md says why each board maps where it does.
SHIPPED = {
    "NVIDIA A100 SXM": ("nvidia-a100-sxm4-80gb", "a100-sxm"),
    "NVIDIA A100 PCIe": ("nvidia-a100-pcie-8x", "a100-pcie"),
    "NVIDIA H100 SXM": ("nvidia-h100-sxm5-80gb", "h100-sxm"),
    "NVIDIA H200 SXM": ("nvidia-h200-sxm-141gb", "h200-sxm"),
}
# Accelerators of the tables that no shipped hwdesc describes: not staged at all (../README.md rule).
NOT_SHIPPED = {
    "Intel Gaudi 2", "Intel Gaudi 3", "NVIDIA GH200 SXM", "NVIDIA B200 SXM", "NVIDIA B300 SXM",
    "NVIDIA GB200 SXM", "AMD MI355X", "AMD MI325X", "AMD MI300X",
}
HELDOUT_HW = "nvidia-h200-sxm-141gb"  # ../README.md: every row measured on an H200 is held out


def git_show(gitdir, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show", COMMIT + ":" + path],
                          check=True, stdout=subprocess.PIPE).stdout.decode("utf-8")


def tables(text):
    """The tables of SECTION: {label: [(line number, row dict), ...]}."""
    lines = text.split("\n")
    start = [i for i, ln in enumerate(lines) if ln.strip() == SECTION]
    if len(start) != 1:
        raise ValueError("expected one %r heading, got %d" % (SECTION, len(start)))
    out, label, i = {}, None, start[0] + 1
    while i < len(lines) and not lines[i].startswith("#"):
        ln = lines[i].strip()
        if ln in TABLES:
            label = ln
        elif ln.startswith("|") and label:
            rows, i = read_table(lines, i, COLUMNS)
            if label in out:
                raise ValueError("table %s twice" % label)
            out[label] = rows
            label = None
            continue
        i += 1
    if set(out) != set(TABLES):
        raise ValueError("expected the tables %s, got %s" % (sorted(TABLES), sorted(out)))
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    found = tables(git_show(argv[1], PATH))
    out = ["# source: https://github.com/%s commit %s; file %s section '%s' (BF16 and FP8 tables); licence: %s; "
           "measured_ms = 2*M*N*K / (MAMF TFLOPS * 1e12) * 1e3 (MAMF: the best over the shapes searched of the "
           "mean of 100 timed matmuls after 50 warmup; CUDA events); see README.md"
           % (REPO, COMMIT, PATH, SECTION.lstrip("# "), LICENCE), HEADER]
    seen = set()
    for label in TABLES:
        prec, pslug = TABLES[label]
        for lineno, r in found[label]:
            acc = r["Accelerator"]
            if not acc:  # the empty closing row of each table
                if any(r.values()):
                    raise ValueError("line %d: a row without an accelerator" % lineno)
                continue
            if acc in NOT_SHIPPED:
                continue
            if acc not in SHIPPED:
                raise ValueError("line %d: accelerator %r is in neither SHIPPED nor NOT_SHIPPED" % (lineno, acc))
            hw, hslug = SHIPPED[acc]
            if not r["MAMF"] or not r["Best Shape MxNxK"]:
                raise ValueError("line %d: %s has no MAMF or no shape" % (lineno, acc))
            m, n, k = (int(x) for x in r["Best Shape MxNxK"].split("x"))
            tflops = float(r["MAMF"])
            ms = 2 * m * n * k / (tflops * 1e12) * 1e3
            case = "mamf.%s.%s.m%d.n%d.k%d" % (pslug, hslug, m, n, k)
            if case in seen:
                raise ValueError("duplicate case " + case)
            seen.add(case)
            heldout = hw == HELDOUT_HW
            note = "%s line %d: %s MAMF %s TFLOPS (theory %s; efficiency %s) torch %s" % (
                PATH.rsplit("/", 1)[1], lineno, acc, r["MAMF"], r["Theory"], r["Efficiency"], r["torch version"])
            if r["Notes"]:
                note += " notes: " + r["Notes"].replace(",", ";")
            if "fp8" in pslug:
                note += "; scaled_mm e4m3 in and out"
            if "," in note:
                raise ValueError("comma in note " + note)
            out.append(",".join([case, hw, "gemm", prec, "M=%d;N=%d;K=%d" % (m, n, k), "%.6f" % ms,
                                 "heldout" if heldout else "fit", "mamf/%s/%s" % (prec, hw), note]))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
