"""One Markdown pipe table of a README, read for the regenerate.py scripts (standard library only)."""
import re


def cells(line):
    """The cells of one table row '| a | b |', stripped."""
    if not (line.startswith("|") and line.endswith("|")):
        raise ValueError("not a table row: %r" % line)
    return [c.strip() for c in line[1:-1].split("|")]


def read_table(lines, i, columns):
    """The table whose header is lines[i]: it must name `columns` and be followed by the alignment row.
    Returns ([(line number, {column: cell}), ...], the index of the first line after the table)."""
    if cells(lines[i].strip()) != columns:
        raise ValueError("line %d: unexpected header %r" % (i + 1, lines[i]))
    if not all(re.fullmatch(r":?-+:?", c) for c in cells(lines[i + 1].strip())):
        raise ValueError("line %d: expected the alignment row" % (i + 2))
    rows, i = [], i + 2
    while i < len(lines) and lines[i].strip().startswith("|"):
        c = cells(lines[i].strip())
        if len(c) != len(columns):
            raise ValueError("line %d: %d cells, expected %d" % (i + 1, len(c), len(columns)))
        rows.append((i + 1, dict(zip(columns, c))))
        i += 1
    return rows, i
