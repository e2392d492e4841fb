#!/usr/bin/env python3
"""Rebuild validate/measured/trtutils-jetson/kernels.csv from a mirror of justincdavis/trtutils.

Usage: python3 validate/measured/trtutils-jetson/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:justincdavis/trtutils` brings (a bare git directory).  The two board files
benchmark/data/models/{OrinNano-8GB,OrinAGX-64GB}.json are read at COMMIT with `git --git-dir MIRROR show
COMMIT:PATH`; only their "tensorrt" framework key is staged (the raw TensorRT engine execution).  Output order:
board (as BOARDS lists them), then model and input size in the order the JSON file holds them.  Standard
library only; anything unexpected raises.  README.md in this folder says what every field means.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from network_source import git, slug  # noqa: E402  (validate/measured/network_source.py)

REPO = "justincdavis/trtutils"
COMMIT = "471d1e925fd7ea41469d3a692bf5ac6c479206ca"  # HEAD as fetched, 2026-05-14
LICENCE = "MIT (LICENSE: Copyright (c) 2024 Justin Davis)"
DATA_COMMIT = "112a28cecefe463502b9c6ced3d9dcadf0c047ed"  # last commit to change these numbers (0.6.0, 2025-06-17)
FRAMEWORK = "tensorrt"
# file stem -> (slug used in case ids, shipped hwdesc).  Boards without a shipped hwdesc are not read.
BOARDS = [
    ("OrinNano-8GB", "orinnano", "nvidia-jetson-orin-nano-8gb"),
    ("OrinAGX-64GB", "orinagx64", "nvidia-jetson-agx-orin-64gb"),
]
# The frameworks each board file holds at COMMIT; a new or missing one means the file changed: look again.
FRAMEWORKS = {"ultralytics(torch)", "ultralytics(trt)", "trtutils(cpu)", "trtutils(cuda)", "trtutils(trt)", "tensorrt"}
STATS = {"mean", "median", "min", "max"}
HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note,workload,software"
SOFTWARE = "tensorrt"  # TensorRT engines: software/tensorrt.json (the hwdesc GPU's own stack)
HELDOUT_SIZE = 480  # ../README.md: every row at input size 480 is held out, and every model whose name ends in m


def load(gitdir, stem):
    path = "benchmark/data/models/%s.json" % stem
    raw = git(gitdir, "show", COMMIT + ":" + path)
    data = json.loads(raw)
    if set(data) != FRAMEWORKS:
        raise ValueError("%s: frameworks %s, expected %s" % (path, sorted(data), sorted(FRAMEWORKS)))
    return path, data[FRAMEWORK]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: regenerate.py MIRROR_GIT_DIR > kernels.csv")
    print("# source: https://github.com/%s benchmark/data/models/{%s}.json at commit %s (numbers last changed in %s); "
          "licence: %s" % (REPO, ",".join(b[0] for b in BOARDS), COMMIT, DATA_COMMIT, LICENCE))
    print("# the \"tensorrt\" framework only: wall-clock time of one engine execution (execute_async + stream "
          "synchronize; inputs already on the GPU) of an FP16-enabled TensorRT engine at batch 1 and a square "
          "input; measured_ms = the median of 1000 timed runs; boards without a shipped hwdesc are not staged; "
          "split: models ending in m and input size 480 held out; see README.md")
    print(HEADER)
    cases = set()
    for stem, bslug, hw in BOARDS:
        path, fw = load(sys.argv[1], stem)
        if not fw:
            raise ValueError("%s: no %s rows" % (path, FRAMEWORK))
        for model, sizes in fw.items():
            if not re.fullmatch(r"yolo[a-z0-9]+", model):
                raise ValueError("%s: unexpected model %r" % (path, model))
            for size, st in sizes.items():
                if not re.fullmatch(r"[1-9]\d*", size):
                    raise ValueError("%s: %s: unexpected input size %r" % (path, model, size))
                if not isinstance(st, dict) or set(st) != STATS or not all(
                        isinstance(v, float) and v > 0 for v in st.values()):
                    raise ValueError("%s: %s/%s: unexpected statistics %r" % (path, model, size, st))
                if not st["min"] <= st["median"] <= st["max"] or not st["min"] <= st["mean"] <= st["max"]:
                    raise ValueError("%s: %s/%s: statistics out of order %r" % (path, model, size, st))
                s = int(size)
                held = model.endswith("m") or s == HELDOUT_SIZE
                group = "trtutils/%s" % slug(model) + ("/%d" % s if s == HELDOUT_SIZE else "")
                case = "trtutils.%s.%s.%d" % (bslug, slug(model), s)
                if case in cases:
                    raise ValueError("duplicate case %s" % case)
                cases.add(case)
                note = "%s %s/%s/%s: median %.6g ms (mean %.6g min %.6g max %.6g)" % (
                    path.split("/")[-1], FRAMEWORK, model, size, st["median"], st["mean"], st["min"], st["max"])
                print("%s,%s,network,fp16,B=1;H=%d;W=%d,%.6g,%s,%s,%s,zoo/%s,%s" % (
                    case, hw, s, s, st["median"], "heldout" if held else "fit", group, note, slug(model), SOFTWARE))


if __name__ == "__main__":
    main()
