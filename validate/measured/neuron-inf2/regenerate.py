#!/usr/bin/env python3
"""Rebuild validate/measured/neuron-inf2/kernels.csv from a mirror of aws-neuron/aws-neuron-sdk.

Usage: python3 validate/measured/neuron-inf2/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:aws-neuron/aws-neuron-sdk` brings (a bare git directory).  Every
about-neuron/benchmarks/inf2/{latency,throughput}_data_*.csv at COMMIT is read with `git --git-dir MIRROR show
COMMIT:PATH`, in the order FILES lists them (the order inf2-performance.rst shows them, the latency file of each
section first, then the files that page no longer shows), rows in file order.  Rows are left out only by the rules
in README.md (instance other than Inf2.xlarge; a pipeline task; a repeat of a row already staged).  Standard library
only; anything unexpected raises.
"""
import csv
import hashlib
import io
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from network_source import git, slug  # noqa: E402  (validate/measured/network_source.py)

REPO = "aws-neuron/aws-neuron-sdk"
COMMIT = "81ce03ae261e12925e53437a0f690478e6366155"  # HEAD of master as fetched, 2026-08-21
DIR = "about-neuron/benchmarks/inf2/"
LICENCE = ("CC BY-SA 4.0 for documentation (LICENSE-DOCUMENTATION; LICENSE-SUMMARY-DOCS-SAMPLES: "
           "Copyright 2019 Amazon.com Inc. or its affiliates)")
HW = "aws-inferentia2"
INSTANCE = "Inf2.xlarge"   # the one instance aws-inferentia2 describes: one chip of two NeuronCores
COPIES = 2                 # Data Parallel on Inf2.xlarge: one model copy per NeuronCore (README.md)
HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note,workload,software"
SOFTWARE = "vendor-npu"  # Neuron compiler and runtime: software/vendor-npu.json (the hwdesc npu's own stack)

ENC = ["Model", "Scripts", "Framework", "Inst. Type", "Task", "Throughput (inference/second)", "Latency P50 (ms)",
       "Latency P99 (ms)", "Application Type", "Neuron Version", "Run Mode", "Batch Size", "Sequence Length",
       "Model Data Type", "Compilation Autocast Data Type", "OS Type"]
VIS = ["Model", "Image Size", "Scripts", "Framework", "Inst. Type", "Task", "Throughput (inference/sec)",
       "Latency P50 (ms)", "Latency P99 (ms)", "Application Type", "Neuron Version", "Run Mode", "Batch Size",
       "Model Data Type", "Compilation Autocast Data Type"]
ENCDEC = ["Model", "Scripts", "Framework", "Inst. Type", "Task", "Throughput (tokens/second)",
          "Latency per Token P50 (ms)", "Latency per Token P99 (ms)", "Application Type", "Neuron Version", "Run Mode",
          "TP Degree", "DP Degree", "Batch Size", "Sequence Length", "Input Length", "Output Length", "Model Data Type",
          "Compilation Autocast Data Type"]
DEC = ["Model", "Scripts", "Framework", "Inst. Type", "Task", "Output Token Throughput (tokens/sec)",
       "TTFT Latency P50 (ms)", "TTFT Latency P99 (ms)", "TPOT Latency P50 (ms)", "TPOT Latency P99 (ms)",
       "Application Type", "Neuron Version", "Run Mode", "TP Degree", "Batch Size", "Sequence Length", "Input Length",
       "Output Length", "Model Data Type", "Compilation Autocast Data Type", "Weight Storage Data Type"]
# (file stem, header, shown on inf2-performance.rst at COMMIT)
FILES = [
    ("latency_data_encoder", ENC, True), ("throughput_data_encoder", ENC, True),
    ("latency_data_encoder_decoder", ENCDEC, True), ("throughput_data_encoder_decoder", ENCDEC, True),
    ("latency_data_vision_transformers", VIS, True), ("throughput_data_vision_transformers", VIS, True),
    ("latency_data_vision_cnn", VIS, True), ("throughput_data_vision_cnn", VIS, True),
    ("latency_data_vision_sd", VIS, True), ("throughput_data_vision_sd", VIS, True),
    ("latency_data_vision_dit", VIS, True), ("throughput_data_vision_dit", VIS, True),
    ("latency_data_decoder", DEC, False), ("throughput_data_decoder", DEC, False),
    ("latency_data_vision", VIS, False), ("throughput_data_vision", VIS, False),
]
INSTANCES = {"Inf2.xlarge", "Inf2.8xlarge", "Inf2.24xlarge", "Inf2.48xlarge"}
PIPELINES = {"Image Generation", "Multimodal Autoencoding"}  # README.md: several networks and a loop, not one network
NUM = re.compile(r"\d+(?:\.\d+)?")
# Models with a second input the shape cannot say, by the benchmark script the Scripts column links to
# (archive/src/benchmark/pytorch/<name>_benchmark.py).
REMARKS = {  # README.md says more: hf-openai-clip_benchmark.py lines 18-26 (the full CLIPModel)
    "hf-openai-clip": "two inputs: the images and the text ids of 100 CIFAR-100 prompts per call",
}


def read(gitdir, stem, header):
    path = DIR + stem + ".csv"
    reader = csv.reader(io.StringIO(git(gitdir, "show", COMMIT + ":" + path), newline=""))
    rows = []
    for cells in reader:
        if reader.line_num == 1:
            if cells != header:
                raise ValueError("%s: unexpected header %r" % (path, cells))
            continue
        if not cells:
            continue
        if len(cells) != len(header):
            raise ValueError("%s line %d: %d cells, expected %d" % (path, reader.line_num, len(cells), len(header)))
        rows.append((reader.line_num, dict(zip(header, (c.strip() for c in cells)))))
    if not rows:
        raise ValueError("%s: no rows" % path)
    return path, rows


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: regenerate.py MIRROR_GIT_DIR > kernels.csv")
    gitdir = sys.argv[1]
    listed = sorted(p[len(DIR):-len(".csv")] for p in git(gitdir, "ls-tree", "--name-only", COMMIT, DIR).split("\n")
                    if re.fullmatch(re.escape(DIR) + r"(latency|throughput)_data_[a-z_]+\.csv", p))
    if listed != sorted(f[0] for f in FILES):
        raise ValueError("files under %s changed: %s" % (DIR, listed))
    print("# source: https://github.com/%s %s{latency,throughput}_data_*.csv at commit %s; licence: %s"
          % (REPO, DIR, COMMIT, LICENCE))
    print("# Inf2.xlarge rows only (one Inferentia2 chip); Real Time rows: measured_ms = Latency P50 of one batch-1 "
          "request; Batch rows: measured_ms = batch / throughput * 1000 * %d (Data Parallel: one model copy per "
          "NeuronCore; the time one copy takes per batch); precision bf16 (Compilation Autocast Matmult-BF16); "
          "pipelines (Image Generation and Multimodal Autoencoding) and repeats of a staged row left out; split: "
          "sha256 of Model starting 0-7 held out; see README.md" % COPIES)
    print(HEADER)
    seen, cases = {}, set()
    for stem, header, shown in FILES:
        path, rows = read(gitdir, stem, header)
        for line, r in rows:
            if r["Inst. Type"] not in INSTANCES:
                raise ValueError("%s line %d: unexpected instance %r" % (path, line, r["Inst. Type"]))
            if r["Inst. Type"] != INSTANCE:  # README.md: no shipped hwdesc is this instance
                continue
            if header not in (ENC, VIS):
                raise ValueError("%s line %d: a token-level row on %s: not handled" % (path, line, INSTANCE))
            if r["Task"] in PIPELINES:  # README.md: a pipeline of several networks
                continue
            key = tuple(sorted(r.items()))
            if key in seen:  # README.md: the same row in two files is staged once
                continue
            seen[key] = "%s line %d" % (stem, line)
            thr_col = "Throughput (inference/second)" if header is ENC else "Throughput (inference/sec)"
            for c in (thr_col, "Latency P50 (ms)", "Latency P99 (ms)", "Batch Size"):
                if not NUM.fullmatch(r[c]):
                    raise ValueError("%s line %d: %s is %r" % (path, line, c, r[c]))
            if r["Run Mode"] != "Data Parallel":
                raise ValueError("%s line %d: run mode %r" % (path, line, r["Run Mode"]))
            if r["Compilation Autocast Data Type"] != "Matmult-BF16":
                raise ValueError("%s line %d: autocast %r" % (path, line, r["Compilation Autocast Data Type"]))
            if not re.fullmatch(r"[1-9]\d*", r["Batch Size"]):
                raise ValueError("%s line %d: batch %r" % (path, line, r["Batch Size"]))
            b = int(r["Batch Size"])
            thr, p50, p99 = float(r[thr_col]), float(r["Latency P50 (ms)"]), float(r["Latency P99 (ms)"])
            if r["Application Type"] == "Real Time":
                if b != 1:
                    raise ValueError("%s line %d: Real Time row at batch %d" % (path, line, b))
                ms, mode, how = p50, "rt", "Latency P50"
            elif r["Application Type"] == "Batch":
                ms, mode, how = b / thr * 1000.0 * COPIES, "batch", "batch/throughput*1000*%d" % COPIES
            else:
                raise ValueError("%s line %d: application type %r" % (path, line, r["Application Type"]))
            if header is ENC:
                if not re.fullmatch(r"[1-9]\d*", r["Sequence Length"]):
                    raise ValueError("%s line %d: sequence length %r" % (path, line, r["Sequence Length"]))
                shp, size = "B=%d;S=%s" % (b, r["Sequence Length"]), "s" + r["Sequence Length"]
                inp = "sequence %s" % r["Sequence Length"]
            else:
                m = re.fullmatch(r"(\d+)x(\d+)", r["Image Size"])
                if not m or m.group(1) != m.group(2):  # a non-square size would need its order settled
                    raise ValueError("%s line %d: image size %r" % (path, line, r["Image Size"]))
                shp, size = "B=%d;H=%s;W=%s" % (b, m.group(1), m.group(2)), m.group(1)
                inp = "image %s" % r["Image Size"]
            ver = r["Neuron Version"]
            if not re.fullmatch(r"\d+\.\d+(?:\.\d+)?", ver):
                raise ValueError("%s line %d: Neuron version %r" % (path, line, ver))
            ms_slug = slug(r["Model"])
            case = "neuron.%s.%s.b%d.%s.n%s" % (ms_slug, mode, b, size, ver)
            if case in cases:
                raise ValueError("%s line %d: duplicate case %s" % (path, line, case))
            cases.add(case)
            half = "heldout" if hashlib.sha256(r["Model"].encode("utf-8")).hexdigest()[0] in "01234567" else "fit"
            m = re.fullmatch(r":benchmark-pt:`Benchmark <([a-z0-9_-]+)>`", r["Scripts"])
            if not m:
                raise ValueError("%s line %d: Scripts %r" % (path, line, r["Scripts"]))
            # kept under dse's 320-character note: the rest of the source row is in the source file at this line
            note = ("%s.csv line %d%s: %s; Neuron %s; %s; %s; batch %d; %s; throughput %s/s; P50 %s ms; "
                    "in flight %.3g; script %s_benchmark.py" % (
                        stem, line, "" if shown else " (not shown on inf2-performance.rst)", r["Model"], ver,
                        r["Application Type"], r["Run Mode"], b, inp, r[thr_col], r["Latency P50 (ms)"],
                        thr * p50 / 1000.0 / b, m.group(1)))
            if m.group(1) in REMARKS:
                note += "; " + REMARKS[m.group(1)]
            if "," in note:
                raise ValueError("comma in note %r" % note)
            print("%s,%s,network,bf16,%s,%.6g,%s,neuron/%s,%s,zoo/%s,%s" % (
                case, HW, shp, ms, half, ms_slug, note, ms_slug, SOFTWARE))


if __name__ == "__main__":
    main()
