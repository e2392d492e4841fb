"""parts.py -- a staged kernels.csv kept as parts of at most 1.9 MiB (the repository holds no file over
2 MiB): `python3 parts.py split DIR < kernels.csv` writes DIR/kernels-01.csv, kernels-02.csv, ... (each with
the comment lines and the header, then the next rows); `python3 parts.py join DIR` prints the stream the
parts were cut from, so `python3 DIR/regenerate.py MIRROR | cmp - <(python3 parts.py join DIR)` checks a
folder. dse reads every DIR/kernels*.csv. Python 3 standard library only."""
import glob
import os
import sys

LIMIT = 1900 * 1024


def split(d, text):
    lines = text.splitlines(keepends=True)
    head = []
    while lines and lines[0].startswith("#"):
        head.append(lines.pop(0))
    head.append(lines.pop(0))  # the header
    for old in glob.glob(os.path.join(d, "kernels*.csv")):
        os.remove(old)
    part, size, k = [], sum(map(len, head)), 1
    for ln in lines:
        if part and size + len(ln) > LIMIT:
            write(d, k, head, part)
            part, size, k = [], sum(map(len, head)), k + 1
        part.append(ln)
        size += len(ln)
    write(d, k, head, part)


def write(d, k, head, rows):
    with open(os.path.join(d, "kernels-%02d.csv" % k), "w", newline="") as f:
        f.write("".join(head + rows))


def join(d):
    out = []
    for i, p in enumerate(sorted(glob.glob(os.path.join(d, "kernels-*.csv")))):
        with open(p, newline="") as f:
            lines = f.read().splitlines(keepends=True)
        n = 0
        while lines[n].startswith("#"):
            n += 1
        out.extend(lines if i == 0 else lines[n + 1:])
    return "".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("split", "join"):
        sys.exit("usage: parts.py split|join DIR")
    if sys.argv[1] == "split":
        split(sys.argv[2], sys.stdin.read())
    else:
        sys.stdout.write(join(sys.argv[2]))
