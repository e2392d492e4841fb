#!/usr/bin/env python3
"""Rebuild validate/measured/xla-matmul/kernels.csv from a mirror of ROCm/xla (or openxla/xla).

Usage: python3 validate/measured/xla-matmul/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:ROCm/xla` brings (a bare git directory); the file is read with
`git --git-dir MIRROR_GIT_DIR show COMMIT:PATH`.  Standard library only.  Output is deterministic:
rows in the order of DTYPES below, then B, M, N, K ascending.  README.md in this folder says what
every column means and where the numbers come from.
"""
import os
import re
import subprocess
import sys

REPO = "ROCm/xla"
COMMIT = "183fa00cb5d82384463a1a7aed1ab06bc9026974"
PATH = "xla/service/gpu/model/default_matmul_perf_table.txtpb"
KEY = "sm_90"
LICENCE = "Apache License 2.0 (LICENSE; file header: Copyright 2026 The OpenXLA Authors)"
HW = "nvidia-h100-sxm5-80gb"
HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note"

# XLA dtype key ({lhs}x{rhs}->{out}) -> (dse precision, case slug, note).  Every key that the
# sm_90 block holds must be listed here (the script fails on an unknown one).
DTYPES = [
    ("bf16xbf16->bf16", "bf16", "bf16", "bf16xbf16->bf16"),
    ("f32xf32->f32", "tf32", "f32", "f32xf32->f32; tf32 tensor cores (xla default precision)"),
    ("f8e4m3fnxf8e4m3fn->bf16", "fp8", "e4m3-e4m3", "f8e4m3fnxf8e4m3fn->bf16; out bf16"),
    ("f8e4m3fnxf8e5m2->bf16", "fp8", "e4m3-e5m2", "f8e4m3fnxf8e5m2->bf16; lhs/rhs differ; out bf16"),
    ("f8e5m2xf8e4m3fn->bf16", "fp8", "e5m2-e4m3", "f8e5m2xf8e4m3fn->bf16; lhs/rhs differ; out bf16"),
]
DTYPE = {d[0]: d for d in DTYPES}

# H100 SXM5 dense peaks (FLOP/s) the brief names; a row above its precision's peak is flagged.
PEAK = {"fp8": 1979e12, "bf16": 989e12, "fp16": 989e12, "tf32": 494.7e12}
FLAG = {"fp8": "suspect: above dense fp8 peak"}
FLAG_OTHER = "suspect: above dense peak"

HELDOUT_DIM = 2048  # README: every shape with any of B, M, N, K equal to 2048 is held out


def git_show(gitdir, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show", COMMIT + ":" + path],
                          check=True, stdout=subprocess.PIPE).stdout.decode("utf-8")


sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from xla_textproto import parse_textproto, unquote  # noqa: E402  (validate/measured/xla_textproto.py)


def one(msg, field):
    v = msg.get(field, [])
    if len(v) != 1:
        raise ValueError("expected one %s, got %d" % (field, len(v)))
    return v[0]


def kernel_ns(flop, flops):
    """The generator stored flops = int64(flop * 1e9 / t_ns) with t_ns the integer median kernel
    time (xla/tools/matmul_perf_table_gen.cc).  Recover t_ns and check that it reproduces flops."""
    ns = round(flop * 1e9 / flops)
    if ns <= 0 or int(flop * 1e9 / ns) != flops:
        raise ValueError("flops %d of %d FLOP does not come from a whole number of ns" % (flops, flop))
    return ns


def ms(ns):
    return "%d.%06d" % divmod(ns, 1000000)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    table = parse_textproto(git_show(argv[1], PATH))
    blocks = [e for e in table["entries"] if unquote(one(e, "key")) == KEY]
    if len(blocks) != 1:
        raise ValueError("expected one %s block, got %d" % (KEY, len(blocks)))
    entries = one(blocks[0], "value")["entries"]
    rows = []
    for ent in entries:
        b, m, n, k = (int(one(ent, f)) for f in "bmnk")
        for fl in ent["flops"]:
            key = unquote(one(fl, "key"))
            if key not in DTYPE:
                raise ValueError("dtype key %r has no entry in DTYPES" % key)
            flops = int(one(fl, "value"))
            rows.append((DTYPES.index(DTYPE[key]), b, m, n, k, key, flops))
    rows.sort()
    seen = set()
    out = ["# source: https://github.com/%s commit %s; file %s key %s; licence: %s; "
           "measured_ms = 2*B*M*N*K / flops * 1e3 (the median CUPTI kernel time); see README.md"
           % (REPO, COMMIT, PATH, KEY, LICENCE), HEADER]
    for _, b, m, n, k, key, flops in rows:
        _, prec, slug, note = DTYPE[key]
        flop = 2 * b * m * n * k
        ns = kernel_ns(flop, flops)
        case = "sm90.%s.b%d.m%d.n%d.k%d" % (slug, b, m, n, k)
        if case in seen:
            raise ValueError("duplicate case " + case)
        seen.add(case)
        heldout = HELDOUT_DIM in (b, m, n, k)
        group = "%s/k%d%s" % (prec, k, "/d2048" if heldout else "")
        if flops > PEAK[prec]:
            note += "; " + FLAG.get(prec, FLAG_OTHER)
        elif prec == "fp8":  # README: every fp8 row's median likely counts the operand transpose as a kernel
            note += "; suspect: median may be half a call (transpose kernel)"
        out.append(",".join([case, HW, "gemm", prec, "M=%d;N=%d;K=%d;B=%d" % (m, n, k, b), ms(ns),
                             "heldout" if heldout else "fit", group, note]))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
