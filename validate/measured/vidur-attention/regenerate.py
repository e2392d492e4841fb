#!/usr/bin/env python3
"""Rebuild validate/measured/vidur-attention/kernels.csv from a mirror of microsoft/vidur.

Usage: python3 validate/measured/vidur-attention/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:microsoft/vidur` brings (a bare git directory).
Standard library only; the output is deterministic (rows sorted by head configuration, tp,
phase, batch size, chunk size, kv cache size, repeat).  See README.md in this folder.
"""
import csv
import io
import subprocess
import sys

REPO = "microsoft/vidur"
COMMIT = "e2d00e9afba96cec9f0e7ea560bbfc4a539fae6a"
PATH = "data/profiling/a100/attention.csv"
LICENCE = "MIT License (LICENSE: Copyright (c) Microsoft Corporation)"
HW = "nvidia-a100-sxm4-80gb"

# Head configurations of the 70B-class models (Llama-2-70B, Llama-3-70B, CodeLlama-70B:
# 64 query heads, 8 KV heads, head dim 128).  The CSV names no model, so the split rule
# "model name contains 70b/72b" is applied to this head configuration instead (README).
HELD_HEADS = {(64, 8, 128)}
HELD_TP = {4}


def git_show(gitdir, path):
    return subprocess.run(
        ["git", "--git-dir", gitdir, "show", "%s:%s" % (COMMIT, path)],
        check=True, stdout=subprocess.PIPE).stdout.decode("utf-8")


def fmt_ms(text):
    """The source's ms value rounded to 1e-6 ms (the source's resolution is 1e-3 ms)."""
    s = "%.6f" % round(float(text), 6)
    s = s.rstrip("0").rstrip(".")
    return s if s else "0"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: regenerate.py MIRROR_GIT_DIR")
    rows = []
    for idx, r in enumerate(csv.DictReader(io.StringIO(git_show(sys.argv[1], PATH)))):
        if (r["attention_backend"] != "AttentionBackend.FLASH_ATTENTION"
                or r["profile_method"] != "ProfileMethod.KINETO"):
            raise SystemExit("row %d: backend %s, method %s" % (idx, r["attention_backend"],
                                                                r["profile_method"]))
        n_embd, nq, nkv = int(r["n_embd"]), int(r["n_q_head"]), int(r["n_kv_head"])
        tp = int(r["num_tensor_parallel_workers"])
        if n_embd % nq or nq % tp or nkv % tp:
            raise SystemExit("row %d: heads do not divide" % idx)
        d = n_embd // nq                      # attention_wrapper.py: head_dim = n_embd // n_q_head
        h, hkv = nq // tp, nkv // tp          # heads per GPU, as the profiler sized them
        b = int(r["batch_size"])
        chunk = int(r["prefill_chunk_size"])
        kv = int(r["kv_cache_size"])
        prefill = {"True": True, "False": False}[r["is_prefill"]]
        if prefill:
            op = "attn_prefill"
            s, t = chunk, kv + chunk          # chunk queries over kv cached + chunk new keys
            if b != 1:
                raise SystemExit("row %d: prefill batch %d" % (idx, b))
        else:
            op = "attn_decode"
            s, t = 1, kv + 1                  # the new token's key is appended, then attended
            if chunk != 0:
                raise SystemExit("row %d: decode with chunk %d" % (idx, chunk))
        med = r["time_stats.%s.median" % op]
        if med == "":
            raise SystemExit("row %d: no %s median" % (idx, op))
        rows.append(((nq, nkv, d), tp, 0 if prefill else 1, b, chunk, kv, idx,
                     h, hkv, s, t, d, op, med))
    rows.sort(key=lambda x: x[:7])
    w = io.StringIO()
    w.write("# source: https://github.com/%s commit %s; file %s; licence: %s; "
            "measured_ms = time_stats.attn_prefill.median or time_stats.attn_decode.median (ms); "
            "fp16 FlashAttention (flash_attn_with_kvcache; paged KV; block 16); see README.md\n"
            % (REPO, COMMIT, PATH, LICENCE))
    w.write("case,hw,kernel,precision,shape,measured_ms,half,group,note\n")
    seen = {}
    for heads, tp, dec, b, chunk, kv, idx, h, hkv, s, t, d, op, med in rows:
        nq, nkv, _ = heads
        key = (heads, tp, dec, b, chunk, kv)
        seen[key] = seen.get(key, 0) + 1
        rep = "" if seen[key] == 1 else ".rep%d" % seen[key]
        cfg = "a100.h%dkv%dd%d.tp%d" % (nq, nkv, d, tp)
        if dec:
            case = "%s.decode.b%d.kv%d%s" % (cfg, b, kv, rep)
        else:
            case = "%s.prefill.c%d.kv%d%s" % (cfg, chunk, kv, rep)
        half = "heldout" if (heads in HELD_HEADS or tp in HELD_TP) else "fit"
        group = "h%d-kv%d-d%d/tp%d" % (nq, nkv, d, tp)
        note = "%s row %d kv_cache_size=%d prefill_chunk_size=%d" % (op, idx, kv, chunk)
        w.write("%s,%s,attention,fp16,B=%d;H=%d;Hkv=%d;S=%d;T=%d;D=%d;causal=1,%s,%s,%s,%s\n"
                % (case, HW, b, h, hkv, s, t, d, fmt_ms(med), half, group, note))
    sys.stdout.write(w.getvalue())


if __name__ == "__main__":
    main()
