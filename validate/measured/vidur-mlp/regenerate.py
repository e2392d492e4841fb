#!/usr/bin/env python3
"""Rebuild validate/measured/vidur-mlp/kernels.csv from a mirror of microsoft/vidur.

Usage: python3 validate/measured/vidur-mlp/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:microsoft/vidur` brings (a bare git directory).
Standard library only. Output is deterministic: rows sorted by (hw, model, tp, tokens,
repeat, operator).  See README.md in this folder for the meaning of every column.
"""
import csv
import io
import subprocess
import sys

REPO = "microsoft/vidur"
COMMIT = "7d47513363ec447a741ac5e47241580b47724fbf"
LICENCE = "MIT License (LICENSE: Copyright (c) Microsoft Corporation)"

# Vidur device folder -> shipped dse hwdesc
HW = {"a100": "nvidia-a100-sxm4-80gb", "h100": "nvidia-h100-sxm5-80gb"}

# (device folder, HuggingFace model id) for every mlp.csv under
# data/profiling/compute/{a100,h100}/ at COMMIT.
FILES = [
    ("a100", "Qwen/Qwen-72B"),
    ("a100", "codellama/CodeLlama-34b-Instruct-hf"),
    ("a100", "internlm/internlm-20b"),
    ("a100", "meta-llama/Llama-2-70b-hf"),
    ("a100", "meta-llama/Llama-2-7b-hf"),
    ("a100", "meta-llama/Meta-Llama-3-70B"),
    ("a100", "meta-llama/Meta-Llama-3-8B"),
    ("a100", "microsoft/phi-2"),
    ("h100", "Qwen/Qwen-72B"),
    ("h100", "codellama/CodeLlama-34b-Instruct-hf"),
    ("h100", "internlm/internlm-20b"),
    ("h100", "meta-llama/Llama-2-70b-hf"),
    ("h100", "meta-llama/Llama-2-7b-hf"),
    ("h100", "microsoft/phi-2"),
]

# Norm type per model, from vidur/config/model_config.py at COMMIT (the CSV does not
# carry it): Phi2ModelConfig has norm LAYER_NORM and post_attn_norm False; every other
# model here inherits Llama2ModelConfig (RMS_NORM, post_attn_norm True).
LAYERNORM_MODELS = {"microsoft/phi-2"}

# Vidur operator -> short slug used in `case`; the order is the output order.
OPS = [
    ("input_layernorm", "ln1"),
    ("attn_pre_proj", "qkv"),
    ("attn_rope", "rope"),
    ("attn_post_proj", "oproj"),
    ("post_attention_layernorm", "ln2"),
    ("mlp_up_proj", "up"),
    ("mlp_act", "act"),
    ("mlp_down_proj", "down"),
    ("add", "add"),
]
OP_ORDER = {name: i for i, (name, _) in enumerate(OPS)}
OP_SLUG = dict(OPS)

HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note"
PRECISION = "fp16"  # mlp_wrapper.py: self.model.to(dtype=torch.float16)

# Size rule (README "Size"): every token count of the profiled grid is kept when it is
# below KEEP_ALL_BELOW; from there up, only token counts that are a multiple of
# KEEP_STEP_ABOVE are kept.
KEEP_ALL_BELOW = 1024
KEEP_STEP_ABOVE = 128


def git_show(gitdir, path):
    out = subprocess.run(
        ["git", "--git-dir", gitdir, "show", COMMIT + ":" + path],
        check=True, stdout=subprocess.PIPE,
    ).stdout
    return out.decode("utf-8")


def exact(num, den):
    if num % den:
        return None
    return num // den


def shape_of(op, row, gated, layernorm):
    """(kernel, shape string) for one Vidur operator, or None to leave it out."""
    T = int(row["num_tokens"])
    tp = int(row["num_tensor_parallel_workers"])
    h = int(row["n_embd"])
    nh = int(row["n_head"])
    nkv = int(row["n_kv_head"])
    f = int(row["n_expanded_embd"])
    d = exact(h, nh)
    if d is None:
        return "inexact"
    if op == "attn_pre_proj":
        n = exact((nh + 2 * nkv) * d, tp)
        return "inexact" if n is None else ("gemm", "M=%d;N=%d;K=%d" % (T, n, h))
    if op == "attn_post_proj":
        k = exact(nh * d, tp)
        return "inexact" if k is None else ("gemm", "M=%d;N=%d;K=%d" % (T, h, k))
    if op == "mlp_up_proj":
        n = exact((2 * f) if gated else f, tp)
        return "inexact" if n is None else ("gemm", "M=%d;N=%d;K=%d" % (T, n, h))
    if op == "mlp_down_proj":
        k = exact(f, tp)
        return "inexact" if k is None else ("gemm", "M=%d;N=%d;K=%d" % (T, h, k))
    if op == "mlp_act":
        c = exact(f, tp)
        if c is None:
            return "inexact"
        if gated:  # one CTA per token row (sarathi's silu_and_mul): rows and cols, not their product
            return ("silu_mul", "rows=%d;cols=%d" % (T, c))
        return ("gelu", "n=%d" % (T * c))
    if op in ("input_layernorm", "post_attention_layernorm"):
        return ("layernorm" if layernorm else "rmsnorm", "rows=%d;cols=%d" % (T, h))
    if op == "attn_rope":
        c = exact((nh + nkv) * d, tp)
        return "inexact" if c is None else ("rope", "rows=%d;cols=%d" % (T, c))
    if op == "add":
        if layernorm:
            # phi-2 (post_attn_norm False): the `add` timer wraps
            # attn_outputs + feed_forward_hidden_states + residual, i.e. two adds.
            return None
        return ("add", "n=%d" % (T * h))
    return None


def half_of(model, tp):
    m = model.lower()
    if "70b" in m or "72b" in m or tp == 4:
        return "heldout"
    return "fit"


def fmt_ms(s):
    v = float(s)
    if not v > 0.0:
        return None
    # Vidur writes microseconds * 1e-3; rounding to 1e-6 ms removes only the float
    # noise of that product (the source's resolution is 0.5 us).
    return format(round(v, 6), ".10g")


def keep_tokens(T):
    return T < KEEP_ALL_BELOW or T % KEEP_STEP_ABOVE == 0


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: regenerate.py MIRROR_GIT_DIR\n")
        return 2
    gitdir = sys.argv[1]
    out = []
    for dev, model in FILES:
        path = "data/profiling/compute/%s/%s/mlp.csv" % (dev, model)
        rows = list(csv.DictReader(io.StringIO(git_show(gitdir, path))))
        mslug = model.split("/")[-1].lower()
        layernorm = model in LAYERNORM_MODELS
        seen = {}
        for row in rows:
            T = int(row["num_tokens"])
            tp = int(row["num_tensor_parallel_workers"])
            key = (tp, T)
            seen[key] = seen.get(key, 0) + 1
            rep = seen[key]
            if not keep_tokens(T):
                continue
            gated = row["use_gated_mlp"] == "True"
            for op, _ in OPS:
                col = "time_stats.%s.median" % op
                if not row.get(col):
                    continue
                ks = shape_of(op, row, gated, layernorm)
                if ks is None or ks == "inexact":
                    continue
                ms = fmt_ms(row[col])
                if ms is None:
                    continue
                kernel, shape = ks
                case = "%s.%s.tp%d.t%d%s.%s" % (
                    dev, mslug, tp, T, "" if rep == 1 else ".r%d" % rep, OP_SLUG[op])
                note = op if rep == 1 else "%s repeat %d" % (op, rep)
                sortkey = (HW[dev], mslug, tp, T, rep, OP_ORDER[op])
                out.append((sortkey, ",".join([
                    case, HW[dev], kernel, PRECISION, shape, ms,
                    half_of(model, tp), "%s/tp%d" % (mslug, tp), note])))
    out.sort(key=lambda x: x[0])
    w = sys.stdout.write
    w("# source: https://github.com/%s commit %s; files data/profiling/compute/(a100 or h100)/ORG/MODEL/mlp.csv; "
      "licence: %s; measured_ms = time_stats.<op>.median (ms); see README.md\n" % (REPO, COMMIT, LICENCE))
    w(HEADER + "\n")
    for _, line in out:
        w(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
