#!/usr/bin/env python3
"""Rebuild validate/measured/hailo8l-zoo/kernels.csv (or networks.csv) from a mirror of hailo-ai/hailo_model_zoo.

Usage: python3 validate/measured/hailo8l-zoo/regenerate.py MIRROR_GIT_DIR > kernels.csv
       python3 validate/measured/hailo8l-zoo/regenerate.py MIRROR_GIT_DIR --networks > networks.csv

MIRROR_GIT_DIR is what `fetch github:hailo-ai/hailo_model_zoo` brings (a bare git directory).  Every
docs/public_models/HAILO8L/HAILO8L_*.rst at COMMIT is read with `git --git-dir MIRROR show COMMIT:PATH`, in the
order `git ls-tree` lists them (by name), each file's list-tables in file order, each table's rows in order.
Standard library only.  Anything the parser does not expect raises; the rows left out on purpose are left
out by the rules named in README.md (FPS written as 0).
"""
import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from network_source import git, slug  # noqa: E402  (validate/measured/network_source.py)

REPO = "hailo-ai/hailo_model_zoo"
COMMIT = "c83fc030e862de8daf05b783f503712d168ef620"  # HEAD of master as fetched, 2026-01-20
DIR = "docs/public_models/HAILO8L/"
LICENCE = "MIT (LICENSE: Copyright (c) Hailo, Inc. and its affiliates)"
HW = "hailo-8l-m2-x4"  # README.md: the zoo host's link is x4, not the Pi 5's one lane
HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note,workload,software"
SOFTWARE = "vendor-npu"  # Hailo Dataflow Compiler HEFs: software/vendor-npu.json (the hwdesc npu's own stack)
NET_HEADER = "network,task,H,W,C,params_M,ops_G,fps_b1,fps_b8,input,half"
EXPECTED_FILES = 24  # HAILO8L_*.rst files at COMMIT; a different count means the layout changed: look again

NAME, FPS1, FPS8, LINKS, RES, PARAMS, OPS = ("Network Name", "FPS (Batch Size=1)", "FPS (Batch Size=8)", "Links",
                                            "Input Resolution (HxWxC)", "Params (M)", "OPS (G)")
# Every header layout the tables use at COMMIT.  Columns not named above (accuracy) are read past.
HEADERS = [
    (NAME, "float", "Hardware Degradation", FPS1, FPS8, LINKS, RES, PARAMS, OPS),
    (NAME, "float mAP", "Hardware mAP", FPS1, FPS8, LINKS, RES, PARAMS, OPS),
    (NAME, FPS1, FPS8, LINKS, RES, PARAMS, OPS),
    (NAME, FPS1, FPS8, LINKS, RES),
]
# One table whose header does not describe its rows: HAILO8L_object_detection_3d.rst's second table names ten
# columns (Pretrained, Source, Compiled and Profile Report after OPS) but its one row has seven cells in the
# order of the third layout above (the Links cell fourth).  Read with that layout; the Links check below
# confirms the order.
MISDESCRIBED = {
    (NAME, FPS1, FPS8, RES, PARAMS, OPS, "Pretrained", "Source", "Compiled", "Profile Report"):
        (NAME, FPS1, FPS8, LINKS, RES, PARAMS, OPS),
}
MARKERS = ("|rocket|", "|star|")
NUM = re.compile(r"\d+(?:\.\d+)?")
HWC = re.compile(r"(\d+)x(\d+)x(\d+)")


def list_tables(text, path):
    """[(dataset heading, [(line number, [cells])...])] for every '.. list-table::' of one file; row 0 is the
    header.  Raises on any line inside a table that is not an option, a blank line or a one-line cell."""
    lines = text.split("\n")
    out, heading, i = [], None, 0
    while i < len(lines):
        ln = lines[i]
        if i > 0 and ln and re.fullmatch(r"\^+", ln) and lines[i - 1].strip():
            heading = lines[i - 1].strip()
        if ln.rstrip() != ".. list-table::":
            if ln.startswith(".. list-table"):
                raise ValueError("%s line %d: unexpected directive %r" % (path, i + 1, ln))
            i += 1
            continue
        i += 1
        opts = {}
        while i < len(lines) and lines[i].startswith("   :"):
            m = re.fullmatch(r"   :([a-z-]+):(.*)", lines[i].rstrip())
            if not m:
                raise ValueError("%s line %d: bad option %r" % (path, i + 1, lines[i]))
            opts[m.group(1)] = m.group(2).strip()
            i += 1
        if opts.get("header-rows") != "1":
            raise ValueError("%s line %d: expected :header-rows: 1, got %r" % (path, i, opts))
        rows = []
        while i < len(lines) and (lines[i].strip() == "" or lines[i].startswith("   ")):
            ln = lines[i]
            if ln.startswith("   * - "):
                rows.append((i + 1, [ln[7:]]))
            elif ln.startswith("     - "):
                if not rows:
                    raise ValueError("%s line %d: cell before any row" % (path, i + 1))
                rows[-1][1].append(ln[7:])
            elif ln.strip():
                raise ValueError("%s line %d: unexpected line in a list-table: %r" % (path, i + 1, ln))
            i += 1
        if len(rows) < 2:
            raise ValueError("%s: table before line %d has no data rows" % (path, i + 1))
        if heading is None:
            raise ValueError("%s: table before line %d has no dataset heading" % (path, i + 1))
        out.append((heading, rows))
    return out


def networks(gitdir):
    """Every network row of every table, in file order, as a dict."""
    paths = [p for p in git(gitdir, "ls-tree", "--name-only", COMMIT, DIR).split("\n") if p]
    if len(paths) != EXPECTED_FILES or not all(re.fullmatch(re.escape(DIR) + r"HAILO8L_[a-z0-9_]+\.rst", p)
                                               for p in paths):
        raise ValueError("unexpected files under %s: %s" % (DIR, paths))
    nets, seen = [], {}
    for path in paths:
        fname = path[len(DIR):]
        task = fname[len("HAILO8L_"):-len(".rst")]
        for heading, rows in list_tables(git(gitdir, "show", COMMIT + ":" + path), path):
            header = tuple(c.strip() for c in rows[0][1])
            if header in MISDESCRIBED:
                cols = MISDESCRIBED[header]
            elif header in HEADERS:
                cols = header
            else:
                raise ValueError("%s line %d: unexpected header %r" % (path, rows[0][0], header))
            for line, cells in rows[1:]:
                if len(cells) != len(cols):
                    raise ValueError("%s line %d: %d cells for %d columns" % (path, line, len(cells), len(cols)))
                r = dict(zip(cols, (c.strip() for c in cells)))
                if not r[LINKS].startswith("`"):
                    raise ValueError("%s line %d: Links cell is %r (columns out of order?)" % (path, line, r[LINKS]))
                written = r[NAME]
                key = written
                for mk in MARKERS:
                    key = key.replace(mk, "")
                key = key.replace(" ", "")
                if not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
                    raise ValueError("%s line %d: unexpected network name %r" % (path, line, written))
                if slug(key) in seen:
                    raise ValueError("%s line %d: network %r also at %s" % (path, line, key, seen[slug(key)]))
                seen[slug(key)] = "%s line %d" % (fname, line)
                for c in (FPS1, FPS8) + ((PARAMS, OPS) if PARAMS in cols else ()):
                    if not NUM.fullmatch(r[c]):
                        raise ValueError("%s line %d: %s is %r" % (path, line, c, r[c]))
                inputs = r[RES].split(", ")
                if not all(HWC.fullmatch(s) for s in inputs):
                    raise ValueError("%s line %d: input resolution %r" % (path, line, r[RES]))
                nets.append({
                    "file": fname, "line": line, "table": heading, "task": task, "written": written, "key": key,
                    "slug": slug(key), "markers": [mk for mk in MARKERS if mk in written],
                    "fps": {1: r[FPS1], 8: r[FPS8]}, "inputs": inputs,
                    "params": r.get(PARAMS), "ops": r.get(OPS),
                    # ../README.md: held out when the sha256 of the name (markers and spaces removed) starts 0-7
                    "half": "heldout" if hashlib.sha256(key.encode("utf-8")).hexdigest()[0] in "01234567" else "fit",
                })
    return nets


def shape(n, batch):
    """The shape and a remark for the note (empty when the input is a plain image)."""
    if len(n["inputs"]) != 1:
        raise ValueError("%s line %d: %d inputs, no shape for a staged row" % (n["file"], n["line"], len(n["inputs"])))
    h, w, c = (int(x) for x in HWC.fullmatch(n["inputs"][0]).groups())
    if "text_encoder" in n["key"]:
        if h != 1:
            raise ValueError("%s line %d: text encoder input %r" % (n["file"], n["line"], n["inputs"][0]))
        return "B=%d;S=%d" % (batch, w), "text encoder: input 1x%dx%d is %d token embeddings of width %d" % (w, c, w, c)
    if n["task"] == "video_classification":
        return "B=%d;H=%d;W=%d" % (batch, h, w), ("video clip: input %s as written; frames and channels folded into "
                                                  "C=%d; shape gives H and W only" % (n["inputs"][0], c))
    return "B=%d;H=%d;W=%d" % (batch, h, w), ""


def kernels(nets):
    print("# source: https://github.com/%s %sHAILO8L_*.rst (every task's list-tables: FPS (Batch Size=1) and "
          "FPS (Batch Size=8) of each network's HEF on a Hailo-8L) at commit %s; licence: %s" % (REPO, DIR, COMMIT, LICENCE))
    print("# measured_ms = batch / FPS * 1000 (one batch of 1 or 8 frames); precision int8 (the zoo's HEFs are "
          "quantized); rows whose FPS is written 0 are left out; split: sha256 of the network name (rocket and star "
          "markers and spaces removed) starting 0-7 is held out; see README.md")
    print(HEADER)
    for n in nets:
        for batch in (1, 8):
            fps = float(n["fps"][batch])
            if fps == 0:  # README.md: an FPS written as 0 is no measurement
                continue
            shp, remark = shape(n, batch)
            note = "%s line %d (%s table): %s; FPS %s at batch %d (FPS %s at batch %d); params %s M; OPS %s G; input %s; task %s" % (
                n["file"], n["line"], n["table"], n["written"], n["fps"][batch], batch, n["fps"][9 - batch], 9 - batch,
                n["params"] or "not given", n["ops"] or "not given", n["inputs"][0], n["task"])
            if remark:
                note += "; " + remark
            if fps < 2:  # README.md: integer FPS below 2 is too coarse to score
                note += "; suspect: FPS written as %s (whole frames per second)" % n["fps"][batch]
            if "," in note:
                raise ValueError("comma in note %r" % note)
            print("hailo8l.%s.b%d,%s,network,int8,%s,%.6g,%s,hailo8l/%s,%s,zoo/%s,%s" % (
                n["slug"], batch, HW, shp, batch / fps * 1000.0, n["half"], n["slug"], note, n["slug"], SOFTWARE))


def network_table(nets):
    print(NET_HEADER)
    for n in nets:
        m = HWC.fullmatch(n["inputs"][0]) if len(n["inputs"]) == 1 else None
        h, w, c = m.groups() if m else ("", "", "")
        print(",".join([n["slug"], n["task"], h, w, c, n["params"] or "", n["ops"] or "", n["fps"][1], n["fps"][8],
                        " ".join(n["inputs"]), n["half"]]))


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--networks"):
        sys.exit("usage: regenerate.py MIRROR_GIT_DIR [--networks] > kernels.csv (networks.csv)")
    nets = networks(sys.argv[1])
    if len(sys.argv) == 3:
        network_table(nets)
    else:
        kernels(nets)


if __name__ == "__main__":
    main()
