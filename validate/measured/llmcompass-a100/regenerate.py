#!/usr/bin/env python3
"""Rebuild validate/measured/llmcompass-a100/kernels.csv from a mirror of PrincetonUniversity/LLMCompass.

Usage: python3 validate/measured/llmcompass-a100/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:PrincetonUniversity/LLMCompass` brings (a bare git directory); each
file is read with `git --git-dir MIRROR_GIT_DIR show COMMIT:PATH`.  Standard library only.  Output is
deterministic: the four files in the order of SOURCES below, each in its own row order.  README.md in
this folder says what every column means and where the numbers come from.
"""
import subprocess
import sys

REPO = "PrincetonUniversity/LLMCompass"
COMMIT = "b95c6c95a80071414d31da8ba8d2e62334753f3d"
LICENCE = "BSD 3-Clause License (LICENSE: Copyright (c) 2024 Princeton University)"
HW = "nvidia-a100-sxm4-80gb"
HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note"
HELDOUT_DIM = 2048  # ../README.md: every row with any dimension equal to 2048 is held out

# The source's timer: time.time() differences of epoch seconds in [2^30, 2^31) are whole multiples of
# 2^-22 s; the median of the 50 timed calls (an even count) is a multiple of 2^-23 s.  Every staged
# time is recovered as a whole number of these ticks and checked against the printed figures.
TICKS_PER_S = 2 ** 23

# (kernel, path, dse precision, what ran: the operator and dtype of its run_on_gpu)
SOURCES = [
    ("gemm", "ae/figure5/ab/real_hardware/matmul_A100.csv", "bf16", "torch.matmul bf16"),
    ("softmax", "ae/figure5/cf/real_hardware/softmax_A100.csv", "fp16", "torch.softmax dim=-1 fp16"),
    ("layernorm", "ae/figure5/de/real_hardware/layernorm_A100.csv", "fp16",
     "torch.layer_norm no affine fp16 torch.compile"),
    ("gelu", "ae/figure5/g/real_hardware/gelu_A100.csv", "fp16", "gelu tanh fp16 torch.compile"),
]


def git_show(gitdir, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show", COMMIT + ":" + path],
                          check=True, stdout=subprocess.PIPE).stdout.decode("utf-8")


def lines_of(text, path):
    rows = [ln for ln in text.split("\n") if ln.strip()]
    for ln in rows:
        if ln != ln.strip():
            raise ValueError("%s: unexpected white space around %r" % (path, ln))
    return rows


def ticks_in(lo_s, hi_s, what):
    """The one whole number of 2^-23 s ticks whose time lies in [lo_s, hi_s]."""
    k = [t for t in range(int(lo_s * TICKS_PER_S) - 1, int(hi_s * TICKS_PER_S) + 2)
         if lo_s <= t / TICKS_PER_S <= hi_s]
    if len(k) != 1:
        raise ValueError("%s: %d whole numbers of 2^-23 s ticks fit, expected one" % (what, len(k)))
    return k[0]


def ms(ticks):
    return "%.6f" % (ticks * 1000.0 / TICKS_PER_S)


def gemm_rows(path, text):
    """Columns `M, N, K, <latency>ms, <tflops>Tflops`: latency printed as %.4f ms and TFLOPS as %.4f of
    2*M*N*K / latency (ae/figure5/ab/test_matmul.py's print).  The time is the tick count that both
    printed figures allow."""
    out = []
    for i, ln in enumerate(lines_of(text, path), 1):
        f = [x.strip() for x in ln.split(",")]
        if len(f) != 5 or not f[3].endswith("ms") or not f[4].endswith("Tflops"):
            raise ValueError("%s line %d: expected M, N, K, <ms>ms, <T>Tflops" % (path, i))
        m, n, k = (int(x) for x in f[:3])
        lat, tf = f[3][:-2], f[4][:-6]
        flop = 2 * m * n * k
        lo = flop / ((float(tf) + 0.00005) * 1e12)
        hi = flop / ((float(tf) - 0.00005) * 1e12)
        t = ticks_in(lo, hi, "%s line %d" % (path, i))
        if "%.4f" % (t * 1000.0 / TICKS_PER_S) != lat:
            raise ValueError("%s line %d: %d ticks do not print as %s ms" % (path, i, t, lat))
        if k == 12288 and n == 12288:
            sweep, group = "sweep-m", "matmul-sweep-M-nk12288"
        elif m == 8192 and n == k:
            sweep, group = "sweep-nk", "matmul-sweep-NK-m8192"
        else:
            raise ValueError("%s line %d: shape %dx%dx%d is in neither sweep" % (path, i, m, n, k))
        dims = (m, n, k)
        out.append(("a100.matmul.m%d.n%d.k%d" % dims, "M=%d;N=%d;K=%d" % dims, t, dims, group,
                    "line %d: %sms %sTflops" % (i, lat, tf)))
    return out


def rowcol_rows(kernel, path, text):
    """Columns `M, N, <G elements/s>`: M*N / latency / 1e9 printed with Python's repr (test_*.py); the
    tensor is [M, N] and the operator runs over its last dimension, so rows = M, cols = N."""
    out = []
    for i, ln in enumerate(lines_of(text, path), 1):
        f = [x.strip() for x in ln.split(",")]
        if len(f) != 3:
            raise ValueError("%s line %d: expected M, N, G elements/s" % (path, i))
        r, c, v = int(f[0]), int(f[1]), float(f[2])
        s = r * c / (v * 1e9)
        t = ticks_in(s * (1 - 1e-12), s * (1 + 1e-12), "%s line %d" % (path, i))
        if r == 4096 and i <= 11:
            sweep, group = "sweep-cols", "%s-rows4096-sweep-cols" % kernel
        elif c == 4096 and i > 11:
            sweep, group = "sweep-rows", "%s-cols4096-sweep-rows" % kernel
        else:
            raise ValueError("%s line %d: %dx%d is in neither sweep" % (path, i, r, c))
        out.append(("a100.%s.%s.r%d.c%d" % (kernel, sweep, r, c), "rows=%d;cols=%d" % (r, c), t, (r, c), group,
                    "line %d: %s Gelem/s" % (i, f[2])))
    return out


def n_rows(kernel, path, text):
    """Columns `N, <G elements/s>`: N / latency / 1e9 (test_gelu.py); a 1-D tensor of N elements."""
    out = []
    for i, ln in enumerate(lines_of(text, path), 1):
        f = [x.strip() for x in ln.split(",")]
        if len(f) != 2:
            raise ValueError("%s line %d: expected N, G elements/s" % (path, i))
        n, v = int(f[0]), float(f[1])
        s = n / (v * 1e9)
        t = ticks_in(s * (1 - 1e-12), s * (1 + 1e-12), "%s line %d" % (path, i))
        out.append(("a100.%s.n%d" % (kernel, n), "n=%d" % n, t, (n,), "%s-sweep-n" % kernel,
                    "line %d: %s Gelem/s" % (i, f[1])))
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    out = ["# source: https://github.com/%s commit %s; files %s; licence: %s; measured_ms = the median "
           "wall-clock time of 50 calls (time.time() around call + torch.cuda.synchronize) recovered from the "
           "printed latency/TFLOPS (matmul) or G elements/s (softmax layernorm gelu) as a whole number of "
           "2^-23 s; see README.md"
           % (REPO, COMMIT, " ".join(s[1] for s in SOURCES), LICENCE), HEADER]
    seen = set()
    for kernel, path, prec, ran in SOURCES:
        text = git_show(argv[1], path)
        if kernel == "gemm":
            rows = gemm_rows(path, text)
        elif kernel == "gelu":
            rows = n_rows(kernel, path, text)
        else:
            rows = rowcol_rows(kernel, path, text)
        fname = path.rsplit("/", 1)[1]
        for case, shape, ticks, dims, group, label in rows:
            if case in seen:
                raise ValueError("duplicate case " + case)
            seen.add(case)
            heldout = HELDOUT_DIM in dims
            if heldout:
                group += "/d2048"
            note = "%s %s; %s" % (fname, label, ran)
            if "," in note:
                raise ValueError("comma in note " + note)
            out.append(",".join([case, HW, kernel, prec, shape, ms(ticks), "heldout" if heldout else "fit",
                                 group, note]))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
