#!/usr/bin/env python3
"""Rebuild validate/measured/xla-collective/kernels.csv from a mirror of ROCm/xla (or openxla/xla).

Usage: python3 validate/measured/xla-collective/regenerate.py MIRROR_GIT_DIR > kernels.csv

MIRROR_GIT_DIR is what `fetch github:ROCm/xla` brings (a bare git directory); the file is read with
`git --git-dir MIRROR_GIT_DIR show COMMIT:PATH`.  Standard library only.  Output is deterministic:
rows in the order of KINDS, then layout (LAYOUTS / PATTERNS order), then bytes ascending.
README.md in this folder says what every column means and where the numbers come from.
"""
import os
import re
import subprocess
import sys

REPO = "ROCm/xla"
COMMIT = "183fa00cb5d82384463a1a7aed1ab06bc9026974"
PATH = "xla/service/gpu/model/default_collective_perf_table.txtpb"
KEY = "sm_90"
LICENCE = "Apache License 2.0 (LICENSE; file header: Copyright 2026 The OpenXLA Authors)"
HW = "nvidia-dgx-h100"
HEADER = "case,hw,kernel,precision,shape,measured_ms,half,group,note"
DEVICES = 8  # every sm_90 entry spans 8 GPUs (iota_reshape_dims: 8, or 8 devices in the permute)

# XLA opcode -> dse kernel, in output order.
KINDS = [
    ("all-reduce", "all_reduce"),
    ("all-gather", "all_gather"),
    ("reduce-scatter", "reduce_scatter"),
    ("all-to-all", "all_to_all"),
    ("collective-permute", "send_recv"),
]
KIND = dict(KINDS)
KIND_ORDER = {op: i for i, (op, _) in enumerate(KINDS)}

# XLA element type -> (dse precision, bytes per element)
ELEM = {"F32": ("fp32", 4), "BF16": ("bf16", 2), "F16": ("fp16", 2),
        "F8E4M3FN": ("fp8", 1), "F8E5M2": ("fp8", 1)}

# Replica-group layouts: (num_replica_groups, num_devices_per_group) -> label, output order.
LAYOUTS = [(1, 8), (2, 4), (4, 2)]

# collective-permute source_target_pairs over 8 devices, as xla/tools/collective_perf_table_gen.cc
# BuildSourceTargetPairs writes them, -> (label, XLA pattern name); output order.
PATTERNS = [
    ("oneway", "kIntraPartitionOneWay", [(i, i + DEVICES // 2) for i in range(DEVICES // 2)]),
    ("mutual", "kIntraPartitionTwoWayAllMutual",
     [p for i in range(DEVICES // 2) for p in ((2 * i, 2 * i + 1), (2 * i + 1, 2 * i))]),
    ("ring", "kIntraPartitionTwoWayHasNonMutual", [(i, (i + 1) % DEVICES) for i in range(DEVICES)]),
]

# README: every all-to-all row, and every row with 2^24 <= bytes <= 2^25, is held out.
HELDOUT_LO, HELDOUT_HI = 1 << 24, 1 << 25


def git_show(gitdir, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show", COMMIT + ":" + path],
                          check=True, stdout=subprocess.PIPE).stdout.decode("utf-8")


sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from xla_textproto import parse_textproto, unquote  # noqa: E402  (validate/measured/xla_textproto.py)


def one(msg, field, default=None):
    v = msg.get(field, [])
    if not v and default is not None:
        return default
    if len(v) != 1:
        raise ValueError("expected one %s, got %d" % (field, len(v)))
    return v[0]


def runtime_ns(size, thr):
    """The generator stored thr = uint64(size * 1e9 / t_ns), t_ns the integer median runtime
    (xla/tools/collective_perf_table_gen.cc GetNetworkThroughputBytesPerSec).  Recover t_ns and
    check that it reproduces thr."""
    ns = round(size * 1e9 / thr)
    if ns <= 0 or int(size * 1e9 / ns) != thr:
        raise ValueError("throughput %d of %d bytes does not come from a whole number of ns" % (thr, size))
    return ns


def ms(ns):
    return "%d.%06d" % divmod(ns, 1000000)


def row_of(ent):
    ins = one(ent, "instruction")
    op = unquote(one(ins, "opcode"))
    if op not in KIND:
        raise ValueError("opcode %r has no dse kernel" % op)
    shape = one(ins, "shape")
    etype = one(shape, "element_type")
    prec, esize = ELEM[etype]
    elems = 1
    for d in shape.get("dimensions", []):
        elems *= int(d)
    out_bytes = elems * esize  # the instruction's shape is its output
    thr = int(one(ent, "network_throughput_bytes_per_sec"))
    if op == "collective-permute":
        pairs = [(int(one(p, "source", "0")), int(one(p, "target", "0"))) for p in ins["source_target_pairs"]]
        pat = [p for p in PATTERNS if p[2] == pairs]
        if len(pat) != 1:
            raise ValueError("collective-permute pairs %r match no pattern" % (pairs,))
        label = pat[0][0]
        lorder = [p[0] for p in PATTERNS].index(label)
        ranks = 2  # one message between a pair of devices
        size = out_bytes  # each source sends its whole buffer (input = output shape)
        note = "collective-permute %s {%s}" % (etype.lower(), " ".join("%d->%d" % p for p in pairs))
    else:
        iota = one(ins, "iota_collective_device_list")
        ngroups = int(one(iota, "num_replica_groups"))
        gsize = int(one(iota, "num_devices_per_group"))
        if one(iota, "iota_reshape_dims") != str(DEVICES) or one(iota, "iota_transpose_perm") != "0":
            raise ValueError("unexpected iota device list %r" % (iota,))
        if (ngroups, gsize) not in LAYOUTS:
            raise ValueError("unexpected layout %dx%d" % (ngroups, gsize))
        label = "%dx%d" % (ngroups, gsize)
        lorder = LAYOUTS.index((ngroups, gsize))
        ranks = gsize
        # The table's size (tensor_size_bytes) is the input of all-reduce / reduce-scatter /
        # all-to-all and the output of all-gather; the stored shape is the output, which for
        # reduce-scatter is 1/group of the input.
        size = out_bytes * gsize if op == "reduce-scatter" else out_bytes
        note = "%s %s iota replica groups %dx%d of %d gpus" % (op, etype.lower(), ngroups, gsize, DEVICES)
    ns = runtime_ns(size, thr)
    kernel = KIND[op]
    heldout = kernel == "all_to_all" or HELDOUT_LO <= size <= HELDOUT_HI
    group = "%s/%s" % (kernel, label)
    if heldout and kernel != "all_to_all":
        group += "/16-32MiB"
    case = "%s.%s.%d" % (kernel, label, size)
    line = ",".join([case, HW, kernel, prec, "bytes=%d;ranks=%d;nodes=1" % (size, ranks), ms(ns),
                     "heldout" if heldout else "fit", group, note])
    return (KIND_ORDER[op], lorder, size), case, line


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    table = parse_textproto(git_show(argv[1], PATH))
    blocks = [e for e in table["entries"] if unquote(one(e, "key")) == KEY]
    if len(blocks) != 1:
        raise ValueError("expected one %s block, got %d" % (KEY, len(blocks)))
    rows = sorted(row_of(e) for e in one(blocks[0], "value")["entries"])
    cases = [r[1] for r in rows]
    if len(set(cases)) != len(cases):
        raise ValueError("duplicate case")
    out = ["# source: https://github.com/%s commit %s; file %s key %s; licence: %s; "
           "measured_ms = bytes / network_throughput_bytes_per_sec * 1e3 (median runtime of 20 runs); "
           "see README.md" % (REPO, COMMIT, PATH, KEY, LICENCE), HEADER]
    out += [r[2] for r in rows]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
