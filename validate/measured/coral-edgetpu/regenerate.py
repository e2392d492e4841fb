#!/usr/bin/env python3
"""Rebuild validate/measured/coral-edgetpu/kernels.csv from a mirror of google-coral/pycoral.

Usage: python3 validate/measured/coral-edgetpu/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:google-coral/pycoral` brings (a bare git directory).  The reference
inference timings benchmarks/reference/inference_reference_{x86_64,rp4b}.csv are read at COMMIT with
`git --git-dir MIRROR show COMMIT:PATH`, hosts in the order HOSTS lists them, rows in file order.  The other
hosts' files (aarch64: the Dev Board; rp3b, rp3b+: USB 2.0) are not staged; README.md says why.  Standard
library only; anything unexpected raises.
"""
import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from network_source import git, slug  # noqa: E402  (validate/measured/network_source.py)

REPO = "google-coral/pycoral"
COMMIT = "46f06c8dd9c5231e5cb27910d4e1fcbdcf1be8f0"  # HEAD as fetched, 2024-03-01 (reference files from 2020-11-05)
LICENCE = "Apache-2.0 (LICENSE)"
HW = "google-coral-edge-tpu"
HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note,workload,software"
SOFTWARE = "tflite-edgetpu"  # Edge TPU compiler + TFLite runtime: software/tflite-edgetpu.json (the npu's own)
SUFFIX = "_edgetpu.tflite"
# host tag as the file names it -> the host as benchmarks/inference_benchmarks.py (lines 21-25) describes it
HOSTS = [
    ("x86_64", "Intel Xeon E5-1650 v3 host over USB 3.0 (inference_benchmarks.py line 22)"),
    ("rp4b", "Raspberry Pi 4 B host (armv7l); port not stated: USB 3.0 by the timings (README.md)"),
]
# The input each model takes.  The classifiers carry it in their names (_224_ / _299_); the two SSD detectors do
# not, and the .tflite files are not in this repository (test_data is a submodule whose model blobs the mirror
# lacks): their sizes are Coral's model pages' (coral.ai/models/object-detection: SSD MobileNet V1 COCO 300x300x3,
# SSD MobileNet V2 Faces 320x320x3).
NAMED_SIZE = re.compile(r".*_(\d+)_quant")
SSD_SIZE = {
    "ssd_mobilenet_v1_coco_quant_postprocess": 300,
    "ssd_mobilenet_v2_face_quant_postprocess": 320,
}


def rows(gitdir, host):
    path = "benchmarks/reference/inference_reference_%s.csv" % host
    text = git(gitdir, "show", COMMIT + ":" + path)
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != "MODEL INFERENCE_TIME":
        raise ValueError("%s: unexpected header %r" % (path, lines[:1]))
    out = []
    for i, ln in enumerate(lines[1:], start=2):
        f = ln.split(" ")
        if len(f) != 2 or not re.fullmatch(r"\d+(?:\.\d+)?", f[1]) or not f[0].endswith(".tflite"):
            raise ValueError("%s line %d: unexpected row %r" % (path, i, ln))
        out.append((path, i, f[0], f[1]))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: regenerate.py MIRROR_GIT_DIR > kernels.csv")
    print("# source: https://github.com/%s benchmarks/reference/inference_reference_{%s}.csv at commit %s; licence: %s"
          % (REPO, ",".join(h for h, _ in HOSTS), COMMIT, LICENCE))
    print("# INFERENCE_TIME: mean ms of 200 calls of the TFLite interpreter's invoke() with the Edge TPU delegate "
          "(benchmarks/inference_benchmarks.py lines 46 and 52-53; random uint8 input; batch 1) on a Coral USB "
          "Accelerator; measured_ms = INFERENCE_TIME; precision int8; hosts on USB 2.0 (rp3b rp3b+) and the Dev "
          "Board (aarch64) are not staged; split: sha256 of MODEL without _edgetpu.tflite starting 0-7 held out; "
          "see README.md")
    print(HEADER)
    cases = set()
    for host, where in HOSTS:
        for path, line, model, t in rows(sys.argv[1], host):
            if not model.endswith(SUFFIX):  # README.md: a model the Edge TPU compiler did not compile runs on the CPU
                continue
            name = model[:-len(SUFFIX)]
            m = NAMED_SIZE.fullmatch(name)
            if name in SSD_SIZE:
                size, how = SSD_SIZE[name], "input %dx%d per coral.ai model page" % (SSD_SIZE[name], SSD_SIZE[name])
            elif m:
                size, how = int(m.group(1)), "input %sx%s from the name" % (m.group(1), m.group(1))
            else:
                raise ValueError("%s line %d: no input size known for %r" % (path, line, model))
            half = "heldout" if hashlib.sha256(name.encode("utf-8")).hexdigest()[0] in "01234567" else "fit"
            case = "coral.%s.%s" % (slug(host), slug(name))
            if case in cases:
                raise ValueError("duplicate case %s" % case)
            cases.add(case)
            note = "%s line %d: %s %s ms; %s; %s" % (path.split("/")[-1], line, model, t, how, where)
            if "," in note:
                raise ValueError("comma in note %r" % note)
            print("%s,%s,network,int8,B=1;H=%d;W=%d,%.6g,%s,coral/%s,%s,zoo/%s,%s" % (
                case, HW, size, size, float(t), half, slug(name), note, slug(name), SOFTWARE))


if __name__ == "__main__":
    main()
