#!/bin/sh
# tests/report_test.sh -- script tests of dse report (docs/report.md) and of the page in a real browser.
#
# Sweeps small specs (sweeps/llm_edge.json, 1,920 points; tests/data/report-tiny.json, 96 points whose
# description holds </script> and quotes), writes their reports, and checks: the bad-input cases (exit
# status 2, one line "dse: FILE: ...", nothing written); that dse sweep writes the report beside its
# plot and --no-plot does not; that the page fetches nothing; and, in headless Chromium, that the page's
# script ran to its end (body data-status="ok", no console error), drew one SVG circle per front point
# of the database (pareto = 1, counted here with python3's sqlite3), labels the first front point in
# dse sweep's order with its design, shows its operators and roofline, keeps escaped text inert, omits
# the breakdowns when the run's inputs changed, and that a 1200x900 screenshot is that size and not blank
# (decoded with python3's zlib and struct). Without Chromium those cases are skipped and counted.
#
# Environment: DSE_BIN (default ./dse), DSE_SRCDIR (default: the directory above this script), as
# tests/cli_test.sh. Prints "ok NAME" / "FAIL NAME: why" per case and ends with
# "report_test: N passed, N failed"; exits 1 when a case failed.

set -u

suite=report_test
TMO=120 # seconds allowed per dse run
. "$(cd "$(dirname "$0")" && pwd)/test_env.sh"
cd "$SRC" || exit 1 # shipped names resolve against the current directory
D=tests/data


skipped=0
skip() {
    skipped=$((skipped + 1))
    echo "skip $1: $2"
}


# expect_fail NAME FILE_NOT_WRITTEN 'stderr substring' DSE-ARGS...: exit 2, one line "dse: ...", nothing
# on stdout, and no file at FILE_NOT_WRITTEN.
expect_fail() {
    name=$1 nofile=$2 sub=$3
    shift 3
    rm -f "$nofile"
    dse "$@"
    if [ "$rc" -ne 2 ]; then
        fail "$name" "exit $rc, expected 2: $(head -n 1 "$ERR")"
    elif [ -s "$OUT" ]; then
        fail "$name" "wrote to stdout: $(head -n 1 "$OUT")"
    elif [ "$(wc -l <"$ERR")" -ne 1 ]; then
        fail "$name" "message is not one line: $(tr '\n' '|' <"$ERR" | cut -c 1-300)"
    elif ! head -n 1 "$ERR" | grep -q '^dse: '; then
        fail "$name" "message does not start with 'dse: ': $(head -n 1 "$ERR")"
    elif ! grep -qF -e "$sub" "$ERR"; then
        fail "$name" "message lacks '$sub': $(head -n 1 "$ERR")"
    elif [ -e "$nofile" ] || ls "$nofile".tmp.* >/dev/null 2>&1; then
        fail "$name" "$nofile was written"
    else
        ok "$name"
    fi
}

# ---- sweeps and their reports ----
dse sweep sweeps/llm_edge.json --db "$tmp/edge.db" --quiet
if [ "$rc" -eq 0 ] && [ -s "$tmp/edge-front.html" ] && grep -q "^report: $tmp/edge-front.html" "$OUT"; then
    ok "sweep writes the report beside the plot"
else
    fail "sweep writes the report beside the plot" "exit $rc; $(head -n 2 "$ERR"); $(ls "$tmp")"
fi
dse sweep tests/data/report-tiny.json --db "$tmp/noplot.db" --quiet --no-plot
if [ "$rc" -eq 0 ] && [ ! -e "$tmp/noplot-front.html" ] && ! grep -q "^report:" "$OUT"; then
    ok "sweep --no-plot writes no report"
else
    fail "sweep --no-plot writes no report" "exit $rc; $(ls "$tmp")"
fi
dse sweep tests/data/report-tiny.json --db "$tmp/tiny.db" --quiet --no-plot
[ "$rc" -eq 0 ] || fail "tiny sweep" "exit $rc: $(head -n 1 "$ERR")"
# a reason the page must keep inert: it closes the script, and holds both quotes and an ampersand
python3 - "$tmp/tiny.db" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
p = c.execute("SELECT min(point) FROM points WHERE feasible = 0").fetchone()[0]
rid = c.execute("INSERT INTO reasons (text) VALUES (?)",
                ("</script><script>document.body.setAttribute('data-status','pwned')</script> \"q\" 'a' & <i>x</i>",)).lastrowid
c.execute("UPDATE point_rows SET reason = ? WHERE key = (SELECT key_base FROM runs) + ?", (rid, p))
# and a design value (the page's JSON, its legend and tables): the points are evaluated again by index
c.execute("UPDATE axis_values SET value = ? WHERE value = 'raspberry-pi-5-hailo-8l'",
          ("pi</script><script>document.body.setAttribute('data-status','pwned')</script>\"&'",))
c.commit()
EOF
dse report "$tmp/tiny.db" -o "$tmp/tiny.html"
if [ "$rc" -eq 0 ] && [ -s "$tmp/tiny.html" ] && grep -q "^wrote $tmp/tiny.html" "$OUT"; then
    ok "report of a sweep"
else
    fail "report of a sweep" "exit $rc: $(head -n 1 "$ERR")"
fi
dse report "$tmp/edge.db" --color precision -o "$tmp/edge-prec.html"
ci=$(python3 -c "import json,sqlite3,sys; print(json.loads(sqlite3.connect(sys.argv[1]).execute('SELECT axes FROM runs').fetchone()[0]).index('precision'))" "$tmp/edge.db")
if [ "$rc" -eq 0 ] && grep -q "\"color\":$ci," "$tmp/edge-prec.html" && grep -q "per value of precision" "$tmp/edge-prec.html"; then
    ok "report --color precision"
else
    fail "report --color precision" "exit $rc: $(head -n 1 "$ERR")"
fi
# the page fetches nothing: no src/href attributes, no URL but the SVG namespace
if [ -s "$tmp/tiny.html" ] && ! grep -Eiq '(src|href|action)=|<link|@import|url\(' "$tmp/tiny.html" &&
    [ -z "$(grep -Eo 'https?://[^"]*' "$tmp/tiny.html" | grep -v '^http://www.w3.org/2000/svg$')" ]; then
    ok "report is self-contained"
else
    fail "report is self-contained" "$(grep -Eio '(src|href)=[^ ]*|https?://[^"]*' "$tmp/tiny.html" | head -n 3)"
fi
# the escaped text, as written
if grep -qF '&lt;/script&gt;&lt;script&gt;' "$tmp/tiny.html" && [ "$(grep -o '<script' "$tmp/tiny.html" | wc -l)" -eq 2 ] &&
    grep -qF '\u003c/script\u003e' "$tmp/tiny.html"; then
    ok "report escapes text"
else
    fail "report escapes text" "$(grep -o '<script' "$tmp/tiny.html" | wc -l) script tags"
fi

# ---- bad input: exit 2, one line, nothing written ----
echo "not a database" >"$tmp/text.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE points (a)'); c.commit()" "$tmp/other.db"
expect_fail "report: no such file" "$tmp/x.html" "no such database" report "$tmp/none.db" -o "$tmp/x.html"
expect_fail "report: not SQLite" "$tmp/x.html" "not an SQLite database" report "$tmp/text.db" -o "$tmp/x.html"
expect_fail "report: another program's database" "$tmp/x.html" "not a dse sweep database" report "$tmp/other.db" -o "$tmp/x.html"
expect_fail "report: no such run" "$tmp/x.html" "no run 99" report "$tmp/tiny.db" --run 99 -o "$tmp/x.html"
expect_fail "report: unknown --color" "$tmp/x.html" "'nosuch' is not an axis of run" report "$tmp/tiny.db" --color nosuch -o "$tmp/x.html"
expect_fail "report: -o in a missing folder" "$tmp/nodir/x.html" "no folder" report "$tmp/tiny.db" -o "$tmp/nodir/x.html"
mkdir "$tmp/adir"
expect_fail "report: -o a folder" "$tmp/adir/x.html" "is a folder" report "$tmp/tiny.db" -o "$tmp/adir"
expect_fail "report: two databases" "$tmp/x.html" "unexpected argument" report "$tmp/tiny.db" "$tmp/edge.db"
# a run whose inputs changed: the page says so, and has no breakdown
cp "$tmp/tiny.db" "$tmp/changed.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE runs SET git = '0000000'\"); c.commit()" "$tmp/changed.db"
dse report "$tmp/changed.db" -o "$tmp/changed.html"
if [ "$rc" -eq 0 ] && grep -q "inputs changed since the sweep" "$tmp/changed.html" && grep -q '"bd":\[\]' "$tmp/changed.html" &&
    ! grep -q 'class="compare"' "$tmp/changed.html"; then
    ok "report of a changed run omits the breakdowns"
else
    fail "report of a changed run omits the breakdowns" "exit $rc: $(head -n 1 "$ERR")"
fi

# ---- in a browser ----
chrome=""
for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null 2>&1; then
        chrome=$c
        break
    fi
done
# browse NAME FILE ARGS...: headless Chromium on FILE, stdout to $tmp/NAME.dom, its log to $tmp/NAME.log
browse() {
    n=$1 f=$2
    shift 2
    timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/chrome-$n" \
        --enable-logging=stderr --v=0 "$@" "file://$f" >"$tmp/$n.dom" 2>"$tmp/$n.log" </dev/null
}
# front DB: the number of front points, the first in dse sweep's order (the minimized objectives, then
# the point) and its system
front() {
    python3 - "$1" <<'EOF'
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rid, objs = c.execute("SELECT id, objectives FROM runs ORDER BY id DESC LIMIT 1").fetchone()
objs = json.loads(objs)
cols = ", ".join('"%s"' % o["metric"] for o in objs)
rows = c.execute("SELECT point, CAST(system AS TEXT), %s FROM points WHERE run_id = ? AND pareto = 1" % cols, (rid,)).fetchall()
key = lambda r: tuple(-v if o["goal"] == "max" else v for o, v in zip(objs, r[2:])) + (r[0],)
first = min(rows, key=key)
print(len(rows), first[0], first[1])
EOF
}
# page_ok NAME DOM LOG: the script ran to its end and logged no error
page_ok() {
    if ! grep -q 'data-status="ok"' "$2"; then
        echo "body data-status is not ok: $(grep -o 'data-status="[^"]*"' "$2" | head -n 1)"
        return 1
    fi
    if grep -Eiq 'Uncaught|CONSOLE.*(error|exception)' "$3"; then
        echo "script error: $(grep -Ei 'Uncaught|CONSOLE' "$3" | head -n 1)"
        return 1
    fi
    return 0
}
if [ -z "$chrome" ]; then
    for c in "browser: llm_edge page" "browser: escaped page" "browser: changed run" "browser: screenshot"; do
        skip "$c" "no chromium on PATH (scripts/setup.sh installs it in test mode)"
    done
else
    set -- $(front "$tmp/edge.db")
    nfront=$1 first=$2 system=$3
    browse edge "$tmp/edge-front.html" --dump-dom
    drawn=$(grep -o '<circle[^>]*class="front[ "]' "$tmp/edge.dom" | wc -l)
    ops=$(grep -o '<tr class="op">' "$tmp/edge.dom" | wc -l)
    if ! why=$(page_ok edge "$tmp/edge.dom" "$tmp/edge.log"); then
        fail "browser: llm_edge page" "$why"
    elif [ "$drawn" -ne "$nfront" ]; then
        fail "browser: llm_edge page" "$drawn front points drawn, the database has $nfront"
    elif ! grep -q "point $first: system $system," "$tmp/edge.dom"; then
        fail "browser: llm_edge page" "no label 'point $first: system $system' for the first front point"
    elif ! grep -q 'class="legend-item">nvidia-jetson-orin-nano-8gb<' "$tmp/edge.dom" ||
        ! grep -q 'class="legend-item">raspberry-pi-5-hailo-8l<' "$tmp/edge.dom"; then
        fail "browser: llm_edge page" "the legend does not name both systems"
    elif [ "$ops" -lt 5 ] || ! grep -q 'class="roof"' "$tmp/edge.dom" || ! grep -q 'class="opdot"' "$tmp/edge.dom"; then
        fail "browser: llm_edge page" "$ops operator rows; roofline: $(grep -c 'class="roof"' "$tmp/edge.dom")"
    elif [ "$(grep -o '<circle[^>]*class="cloud"' "$tmp/edge.dom" | wc -l)" -lt 1 ]; then
        fail "browser: llm_edge page" "no dominated point drawn"
    else
        ok "browser: llm_edge page ($drawn front points, $ops operators)"
    fi
    set -- $(front "$tmp/tiny.db")
    browse tiny "$tmp/tiny.html" --dump-dom
    drawn=$(grep -o '<circle[^>]*class="front[ "]' "$tmp/tiny.dom" | wc -l)
    if ! why=$(page_ok tiny "$tmp/tiny.dom" "$tmp/tiny.log"); then
        fail "browser: escaped page" "$why"
    elif [ "$drawn" -ne "$1" ]; then
        fail "browser: escaped page" "$drawn front points drawn, the database has $1"
    elif [ "$(grep -o '<script' "$tmp/tiny.dom" | wc -l)" -ne 2 ] || ! grep -qF '&lt;/script&gt;' "$tmp/tiny.dom" ||
        ! grep -qF 'class="legend-item">pi&lt;/script&gt;&lt;script&gt;' "$tmp/tiny.dom"; then
        fail "browser: escaped page" "text became markup"
    else
        ok "browser: escaped page"
    fi
    browse changed "$tmp/changed.html" --dump-dom
    if ! why=$(page_ok changed "$tmp/changed.dom" "$tmp/changed.log"); then
        fail "browser: changed run" "$why"
    elif ! grep -q 'class="warn">The run.s inputs changed since the sweep' "$tmp/changed.dom" ||
        grep -q '<tr class="op">' "$tmp/changed.dom"; then
        fail "browser: changed run" "no warning in the breakdown, or operator rows shown"
    else
        ok "browser: changed run"
    fi
    browse shot "$tmp/edge-front.html" --screenshot="$tmp/shot.png" --window-size=1200,900 --hide-scrollbars
    if why=$(python3 - "$tmp/shot.png" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = hdr[:4]
if (w, h) != (1200, 900):
    sys.exit("size %dx%d, expected 1200x900" % (w, h))
if depth != 8 or ctype not in (2, 6):
    sys.exit("unexpected PNG format: depth %d, colour type %d" % (depth, ctype))
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, i = bytearray(stride), [], 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):  # undo the row filter (PNG spec, section 9)
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
colours, ink = set(), 0
for line in rows:
    for x in range(0, stride, bpp):
        px = line[x:x + 3]
        colours.add(px)
        ink += px != b"\xff\xff\xff"
if len(colours) < 50 or ink < 0.02 * w * h:
    sys.exit("blank: %d colours, %d non-white pixels" % (len(colours), ink))
print("%d colours, %.0f%% non-white" % (len(colours), 100.0 * ink / (w * h)))
EOF
    ); then
        ok "browser: screenshot ($why)"
    else
        fail "browser: screenshot" "$why"
    fi
fi

[ "$skipped" -eq 0 ] || echo "report_test: $skipped skipped (no chromium)"
echo "report_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
