# tests/test_env.sh -- sourced by the script tests (cli_test.sh, report_test.sh) with $suite set to the
# test's name: finds the sources (SRC: DSE_SRCDIR, else the folder above tests/) and the dse program
# (BIN: DSE_BIN, a relative path taken from the folder the test started in; else SRC/dse), as make check
# (VPATH and distcheck builds included) and a hand run both need. A missing program is one failure.
# ok NAME and fail NAME WHY print a case's result and count it in passed / failed; interrupt_stored PID
# DB sends Ctrl-C to a running dse sweep once it has stored its first points.
start_dir=$(pwd)
script_dir=$(cd "$(dirname "$0")" && pwd)
SRC=${DSE_SRCDIR:-$script_dir/..}
SRC=$(cd "$SRC" && pwd) || { echo "$suite: DSE_SRCDIR '$SRC' is not a directory" >&2; exit 1; }
if [ -n "${DSE_BIN:-}" ]; then
    case $DSE_BIN in
    /*) BIN=$DSE_BIN ;;
    *) BIN=$start_dir/$DSE_BIN ;;
    esac
else
    BIN=$SRC/dse
fi
if [ ! -x "$BIN" ]; then
    echo "$suite: $BIN is not an executable (set DSE_BIN)" >&2
    echo "$suite: 0 passed, 1 failed"
    exit 1
fi

passed=0
failed=0
ok() {
    passed=$((passed + 1))
    echo "ok $1"
}
fail() {
    failed=$((failed + 1))
    echo "FAIL $1: $2"
}

# Ctrl-C to sweep PID once DB holds its first points (polled; a sweep of a few hundred thousand points
# takes about a second, too little for a fixed sleep on a fast machine and too much on a slow one).
interrupt_stored() {
    i=0
    while [ $i -lt 400 ] && kill -0 "$1" 2>/dev/null; do
        if python3 -c "
import sqlite3, sys
c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True, timeout=1)
sys.exit(0 if c.execute('select count(*) from points').fetchone()[0] > 0 else 1)
" "$2" 2>/dev/null; then
            break
        fi
        sleep 0.02
        i=$((i + 1))
    done
    kill -INT "$1" 2>/dev/null
}
