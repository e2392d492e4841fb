#!/usr/bin/env python3
"""Rebuilds models/traces/sharegpt-first-turns.csv from a fetched mirror of microsoft/sarathi-serve:
    python3 models/traces/sharegpt_first_turns.py MIRROR_GIT_DIR > models/traces/sharegpt-first-turns.csv
The source is in conversation order, one row per assistant turn, each prompt the conversation so far
(README-sharegpt.md). A row opens a conversation when its prompt is shorter than the previous row's prompt +
output (a continuation's prompt holds that history). Those rows are first turns: the first user message and
the first reply, what vLLM's benchmark_serving draws from ShareGPT. Their lengths are then scaled, prompts and
outputs each by one factor, so that after vLLM's length filter (drop prompt < 4 or output < 4, prompt > 1024 or
prompt + output > 2048) their means are the published means of vLLM's own ShareGPT sample: 202 input and 179
output tokens (Llama-3 tokenizer; vLLM blog, "vLLM v0.6.0: 2.7x Throughput Improvement and 5x Latency
Reduction", 2024-09-05, Dataset). The shape is Sarathi's first turns, the scale vLLM's. Standard library only."""
import subprocess
import sys

COMMIT = "72339db5b120614033b317880ad3a05a5e4c9415"
PATH = "data/processed_traces/sharegpt_8k_filtered_stats_llama2_tokenizer.csv"
HEADER = "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio"


TARGET = (202, 179)  # vLLM v0.6.0 blog: its ShareGPT sample's average input and output tokens


def scaled(rows, sp, so):
    out = []
    for p, d in rows:
        p, d = int(p * sp + 0.5), int(d * so + 0.5)
        if p >= 4 and d >= 4 and p <= 1024 and p + d <= 2048:
            out.append((p, d))
    return out


def stats(v):
    v = sorted(v)
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    p90 = v[-(-9 * n // 10) - 1]
    return "mean %.2f median %s p90 %d max %d" % (sum(v) / n, ("%g" % med), p90, v[-1])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: sharegpt_first_turns.py MIRROR_GIT_DIR")
    text = subprocess.run(["git", "--git-dir", sys.argv[1], "show", COMMIT + ":" + PATH], check=True,
                          capture_output=True, text=True).stdout
    lines = text.splitlines()
    if lines[0] != HEADER:
        sys.exit("unexpected header: " + lines[0])
    rows = []
    for ln in lines[1:]:
        f = ln.split(",")
        p, d, t = int(f[0]), int(f[1]), int(f[2])
        if p < 1 or d < 1 or t != p + d:
            sys.exit("unexpected row: " + ln)
        rows.append((p, d))
    starts = [r for i, r in enumerate(rows) if i == 0 or r[0] < rows[i - 1][0] + rows[i - 1][1]]
    raw = [r for r in starts if r[0] >= 4 and r[1] >= 4 and r[0] <= 1024 and r[0] + r[1] <= 2048]
    sp, so = 1.0, 1.0
    for _ in range(50):  # fixed point: the kept rows' means at the targets
        keep = scaled(starts, sp, so)
        sp *= TARGET[0] / (sum(p for p, d in keep) / len(keep))
        so *= TARGET[1] / (sum(d for p, d in keep) / len(keep))
    keep = scaled(starts, sp, so)
    out = sys.stdout
    out.write("# sharegpt-first-turns.csv: ShareGPT first turns (Sarathi-Serve's conversations), scaled to the means of "
              "vLLM benchmark_serving's ShareGPT sample\n")
    out.write("# source: https://github.com/microsoft/sarathi-serve  file %s\n" % PATH)
    out.write("#   commit %s (branch niyama_asplos2026), sha256 of the file "
              "6d6c296302a853e2669a674a96f269283e60c57e60363bd450588a1066919f9f, %d rows\n" % (COMMIT, len(rows)))
    out.write("# license: Apache License 2.0 (microsoft/sarathi-serve); token counts only, no text (README-sharegpt.md)\n")
    out.write("# rows: a source row whose prompt is shorter than the previous row's prompt + output opens a conversation "
              "(%d of %d rows); those are first turns\n" % (len(starts), len(rows)))
    out.write("#   unscaled, under vLLM benchmark_serving's filter (drop prompt < 4 or output < 4, prompt > 1024 or prompt + "
              "output > 2048): %d rows; prompt_tokens %s; output_tokens %s\n" %
              (len(raw), stats([p for p, d in raw]), stats([d for p, d in raw])))
    out.write("# scaled: prompt_tokens x %.4f, output_tokens x %.4f (rounded), then the same filter (%d dropped, %d kept), "
              "so the means are vLLM's sample's\n" % (sp, so, len(starts) - len(keep), len(keep)))
    out.write("#   target means 202 input / 179 output tokens: vLLM blog 'vLLM v0.6.0: 2.7x Throughput Improvement and 5x "
              "Latency Reduction' (2024-09-05), Dataset: ShareGPT\n")
    out.write("# a PROXY of vLLM's ShareGPT sample: the shape of another ShareGPT subset's first turns (most likely "
              "openchat_sharegpt4, GPT-4 replies, Llama-2 tokenizer),\n")
    out.write("#   not ShareGPT_V3_unfiltered_cleaned_split.json's; only its means are vLLM's (README-sharegpt.md)\n")
    out.write("# stats (%d rows): prompt_tokens %s; output_tokens %s\n" %
              (len(keep), stats([p for p, d in keep]), stats([d for p, d in keep])))
    out.write("# arrival_s is 0 on every row (the source has no timing): use it with --lengths and a rate\n")
    out.write("arrival_s,prompt_tokens,output_tokens\n")
    for p, d in keep:
        out.write("0,%d,%d\n" % (p, d))


main()
