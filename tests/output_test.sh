#!/bin/sh
# tests/output_test.sh -- what dse's output options do with the names they are given (src/outfile.h).
#
# Every output option (report -o, plot -o, sweep's database, plot and page, calibrate --out, validate
# --write-error-bars) must refuse a target that is one of the command's own inputs (exit 2, the input
# untouched), follow a symbolic link (its target replaced, the link kept), write a FIFO or a character
# device through (never replace the node), and refuse a directory. Issue 23 item 1: before the fix
# `dse report DB -o DB` replaced the database with the page and exited 0, and -o /dev/null, a FIFO or
# a symlink was replaced by a regular file. Temporaries are removed when a signal ends a write (item 18).
#
# Environment: DSE_BIN, DSE_SRCDIR as tests/cli_test.sh. Ends with "output_test: N passed, N failed".

set -u

suite=output_test
TMO=120 # seconds allowed per dse run
. "$(cd "$(dirname "$0")" && pwd)/test_env.sh"
cd "$SRC" || exit 1
D=tests/data



# refused NAME SUBSTRING FILE-THAT-MUST-NOT-CHANGE DSE-ARGS...: exit 2, one "dse: " line holding the
# substring, nothing on stdout, the file byte for byte as before.
refused() {
    name=$1 sub=$2 keep=$3
    shift 3
    before=$(cksum <"$keep")
    dse "$@"
    after=$(cksum <"$keep")
    if [ "$rc" -ne 2 ]; then
        fail "$name" "exit $rc, expected 2: $(head -c 300 "$ERR")"
    elif [ -s "$OUT" ]; then
        fail "$name" "wrote to stdout: $(head -c 200 "$OUT")"
    elif ! grep -qF -e "$sub" "$ERR" || [ "$(wc -l <"$ERR")" -ne 1 ] || ! head -n 1 "$ERR" | grep -q '^dse: '; then
        fail "$name" "stderr lacks '$sub' on one 'dse: ' line: $(head -c 300 "$ERR")"
    elif [ "$before" != "$after" ]; then
        fail "$name" "$keep changed"
    else
        ok "$name"
    fi
}

# kill_mid_write PID DIR: SIGTERM to PID once a temporary shows in DIR (gnuplot is writing it), or
# when PID ends; prints 1 when the signal landed mid-write.
kill_mid_write() {
    n=0
    while [ $n -lt 1000 ] && kill -0 "$1" 2>/dev/null; do
        if [ -n "$(find "$2" -name '*.tmp*' 2>/dev/null | head -n 1)" ]; then
            kill -TERM "$1" 2>/dev/null
            echo 1
            return
        fi
        sleep 0.005
        n=$((n + 1))
    done
    kill -TERM "$1" 2>/dev/null
    echo 0
}

# reap PID FIFO: waits for the reader of FIFO; a dse that replaced the FIFO instead of writing it
# leaves the reader blocked: it is then opened once for writing so that the reader ends.
reap() {
    [ -p "$2" ] || { (: >>"$2") 2>/dev/null; }
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.2
    done
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

# a small stored run (96 points) to report and plot
"$BIN" sweep "$D/report-tiny.json" --db "$tmp/run.db" --no-plot >/dev/null 2>"$ERR" ||
    fail output-setup "the sweep of $D/report-tiny.json failed: $(head -c 300 "$ERR")"
DB=$tmp/run.db
cp "$DB" "$tmp/pristine.db" # for the cases after those a dse that replaces its inputs would break

# ---- the command's own inputs ----
refused report-onto-db "is one of this command's inputs, the sweep database" "$DB" report "$DB" -o "$DB"
ln -s "$DB" "$tmp/db-link.html"
refused report-onto-db-via-link "is one of this command's inputs, the sweep database" "$DB" report "$DB" -o "$tmp/db-link.html"
ln "$DB" "$tmp/db-hard.html"
refused report-onto-db-hard-link "the sweep database" "$DB" report "$DB" -o "$tmp/db-hard.html"
cp "$DB" "$tmp/run.png" # a database whose name ends in .png: plot -o must not replace it
refused plot-onto-db "is one of this command's inputs, the sweep database" "$tmp/run.png" plot "$tmp/run.png" -o "$tmp/run.png"
# the database is still one after each refusal
if dse report "$DB" -o "$tmp/after.html" && [ "$rc" -eq 0 ] && head -c 15 "$tmp/after.html" | grep -q '<!DOCTYPE'; then
    ok report-db-still-reads
else
    fail report-db-still-reads "exit $rc: $(head -c 300 "$ERR")"
fi
cp sweeps/llm_edge.json "$tmp/spec.json"
refused sweep-db-onto-spec "is one of this command's inputs, the sweep spec" "$tmp/spec.json" sweep "$tmp/spec.json" --db "$tmp/spec.json"
refused sweep-db-onto-hwdesc "is one of this command's inputs, a hwdesc of the sweep" hwdesc/nvidia-jetson-orin-nano-8gb.json \
    sweep "$tmp/spec.json" --db hwdesc/nvidia-jetson-orin-nano-8gb.json
# the page beside the database (DB minus .db, + -front.html) would be the spec itself
cp "$D/report-tiny.json" "$tmp/x-front.html"
refused sweep-page-onto-spec "is one of this command's inputs, the sweep spec" "$tmp/x-front.html" sweep "$tmp/x-front.html" --db "$tmp/x.db"
if [ -e "$tmp/x.db" ]; then fail sweep-page-onto-spec-no-db "a refused sweep left $tmp/x.db"; else ok sweep-page-onto-spec-no-db; fi
cp validate/published/edge.csv "$tmp/edge.csv"
refused error-bars-onto-corpus "is one of this command's inputs, a file of the published corpus" "$tmp/edge.csv" \
    validate --published --corpus "$tmp/edge.csv" --write-error-bars "$tmp/edge.csv"
# the targets are copies: a dse that writes them anyway must not change the repository
cp "$D/h200-uncalibrated.json" "$tmp/h200.json"
sed "s#tests/data/h200-uncalibrated.json#$tmp/h200.json#g" "$D/published/overhead.csv" >"$tmp/overhead.csv"
refused calibrate-published-onto-hwdesc "is one of this command's inputs, a hwdesc" "$tmp/h200.json" \
    calibrate --published --corpus "$tmp/overhead.csv" --hw "$tmp/h200.json" --out "$tmp/h200.json"
cp "$D/import-fit.json" "$tmp/import.json"
refused calibrate-onto-import "is one of this command's inputs, the imported measurements" "$tmp/import.json" \
    calibrate --hw raspberry-pi-5 --import "$tmp/import.json" --out "$tmp/import.json"

# ---- symbolic links are followed ----
: >"$tmp/target.html"
ln -s "$tmp/target.html" "$tmp/link.html"
dse report "$DB" -o "$tmp/link.html"
if [ "$rc" -eq 0 ] && [ -L "$tmp/link.html" ] && head -c 15 "$tmp/target.html" | grep -q '<!DOCTYPE'; then
    ok report-through-symlink
else
    fail report-through-symlink "exit $rc; link $(ls -l "$tmp/link.html" | cut -c 1-120); target $(wc -c <"$tmp/target.html") bytes"
fi
ln -s "$tmp/nowhere.html" "$tmp/dangling.html"
dse report "$DB" -o "$tmp/dangling.html"
if [ "$rc" -eq 2 ] && grep -qF "symbolic link to a file that does not exist" "$ERR" && [ -L "$tmp/dangling.html" ] &&
    [ ! -e "$tmp/nowhere.html" ]; then
    ok report-dangling-symlink-refused
else
    fail report-dangling-symlink-refused "exit $rc: $(head -c 300 "$ERR")"
fi

# ---- FIFOs and character devices are written through ----
if mkfifo "$tmp/page.fifo" 2>/dev/null; then
    (cat "$tmp/page.fifo" >"$tmp/from-fifo.html") &
    reader=$!
    dse report "$DB" -o "$tmp/page.fifo"
    reap "$reader" "$tmp/page.fifo"
    if [ "$rc" -eq 0 ] && [ -p "$tmp/page.fifo" ] && head -c 15 "$tmp/from-fifo.html" | grep -q '<!DOCTYPE'; then
        ok report-through-fifo
    else
        fail report-through-fifo "exit $rc; $(ls -l "$tmp/page.fifo" | cut -c 1-80); read $(wc -c <"$tmp/from-fifo.html") bytes"
    fi
    mkfifo "$tmp/front.png"
    (cat "$tmp/front.png" >"$tmp/from-fifo.png") &
    reader=$!
    dse plot "$DB" -o "$tmp/front.png"
    reap "$reader" "$tmp/front.png"
    if [ "$rc" -eq 0 ] && [ -p "$tmp/front.png" ] && head -c 4 "$tmp/from-fifo.png" | grep -q 'PNG'; then
        ok plot-through-fifo
    else
        fail plot-through-fifo "exit $rc: $(head -c 200 "$ERR")"
    fi
else
    fail report-through-fifo "mkfifo failed"
fi
# /dev/stdout on a pipe: the page is the only thing on stdout, "wrote" goes to stderr
timeout 60 "$BIN" report "$DB" -o /dev/stdout 2>"$ERR" </dev/null | cat >"$tmp/piped.html"
if head -c 15 "$tmp/piped.html" | grep -q '<!DOCTYPE' && tail -c 20 "$tmp/piped.html" | grep -q '</html>' &&
    grep -qF "wrote /dev/stdout" "$ERR"; then
    ok report-to-stdout-pipe
else
    fail report-to-stdout-pipe "$(head -c 100 "$tmp/piped.html"); stderr $(head -c 200 "$ERR")"
fi
for dev in /dev/null /dev/full; do
    [ -c "$dev" ] || continue
    dse report "$DB" -o "$dev"
    want=0
    [ "$dev" = /dev/full ] && want=1 # no space left: a runtime failure, said so
    if [ "$rc" -eq "$want" ] && [ -c "$dev" ] && { [ "$want" = 0 ] || grep -qF "No space left" "$ERR"; }; then
        ok "report-to-$(basename "$dev")"
    else
        fail "report-to-$(basename "$dev")" "exit $rc (expected $want); $(ls -l "$dev" | cut -c 1-60); $(head -c 200 "$ERR")"
    fi
done

# ---- what cannot be written is refused ----
mkdir "$tmp/adir" "$tmp/adir.png"
refused report-onto-directory "is a folder" "$DB" report "$DB" -o "$tmp/adir"
refused plot-onto-directory "is a directory" "$DB" plot "$DB" -o "$tmp/adir.png"

# ---- no temporary is left when a signal ends the write (item 18) ----
# dse plot is stopped while gnuplot draws: whatever it had written is removed with it.
mkdir "$tmp/sig"
cp "$tmp/pristine.db" "$tmp/sig/run.db"
i=0
hits=0
while [ $i -lt 5 ]; do
    "$BIN" plot "$tmp/sig/run.db" -o "$tmp/sig/p$i.png" >/dev/null 2>&1 &
    pid=$!
    hits=$((hits + $(kill_mid_write "$pid" "$tmp/sig")))
    wait "$pid" 2>/dev/null
    i=$((i + 1))
done
sleep 0.3 # gnuplot, orphaned, stops when its script pipe closes
left=$(find "$tmp/sig" -name '*.tmp*' | wc -l)
if [ "$hits" -eq 0 ]; then fail plot-signal-no-temporaries "no signal landed while a plot was written"; elif [ "$left" -eq 0 ]; then ok plot-signal-no-temporaries; else fail plot-signal-no-temporaries "$left temporaries left: $(find "$tmp/sig" -name '*.tmp*' | head -n 3)"; fi

# dse serve --plot: none of its three files may be one of the run's inputs, and a signal during the
# plots leaves no temporary (before: .PREFIX-cdf.png.PID-0.tmp files and only some plots).
cp models/traces/azure-conv-2023.csv "$tmp/x-cdf.png" # a trace whose name is one of the plots'
refused serve-plot-onto-trace "is one of this command's inputs, the lengths' trace" "$tmp/x-cdf.png" \
    serve --hw nvidia-h100-sxm5-80gb --workload llama-3.1-8b --rate 1 --requests 20 --lengths "$tmp/x-cdf.png" --plot "$tmp/x"
mkdir "$tmp/ssig"
i=0
hits=0
while [ $i -lt 4 ]; do
    "$BIN" serve --hw nvidia-h100-sxm5-80gb --workload llama-3.1-8b --rate 5 --requests 300 --plot "$tmp/ssig/s$i" >/dev/null 2>&1 &
    pid=$!
    hits=$((hits + $(kill_mid_write "$pid" "$tmp/ssig")))
    wait "$pid" 2>/dev/null
    i=$((i + 1))
done
sleep 0.3
left=$(find "$tmp/ssig" -name '*.tmp*' | wc -l)
if [ "$hits" -eq 0 ]; then fail serve-plot-signal-no-temporaries "no signal landed while a plot was written"; elif [ "$left" -eq 0 ]; then ok serve-plot-signal-no-temporaries; else fail serve-plot-signal-no-temporaries "$left temporaries left: $(find "$tmp/ssig" -name '*.tmp*' | head -n 3)"; fi

echo "$suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
