# tests/test_env.sh -- sourced by the script tests (cli_test.sh, report_test.sh) with $suite set to the
# test's name: finds the sources (SRC: DSE_SRCDIR, else the folder above tests/) and the dse program
# (BIN: DSE_BIN, a relative path taken from the folder the test started in; else SRC/dse), as make check
# (VPATH and distcheck builds included) and a hand run both need. A missing program is one failure.
# ok NAME and fail NAME WHY print a case's result and count it in passed / failed; interrupt_stored PID
# DB sends Ctrl-C to a running dse sweep once it has stored its first points. Every suite gets a scratch
# folder removed on exit ($tmp) and dse ARGS..., which runs $BIN with stdout in $OUT, stderr in $ERR and
# its exit status in $rc, killed after $TMO seconds (a hang; 300 unless the suite sets it); first_err
# prints the first line of $ERR, skip NAME WHY a case not run, expect_refused NAME SUBSTRING ARGS... a
# refusal (exit 2, one line "dse: ..." holding SUBSTRING, nothing on stdout).
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

# Ctrl-C to sweep PID once DB holds its first points, polled (a sweep of 300,000 points takes under half
# a second, too little for a fixed sleep and for starting python3 between polls). The sign is the
# database's write-ahead log passing 1 MiB: a new database and its run's rows are a few hundred KiB
# of it (16 KiB pages), so beyond that the run's blocks of points are being committed.
interrupt_stored() {
    i=0
    while [ $i -lt 2000 ] && kill -0 "$1" 2>/dev/null; do
        [ "$( { wc -c <"$2-wal"; } 2>/dev/null || echo 0)" -gt 1048576 ] && break
        sleep 0.005
        i=$((i + 1))
    done
    kill -INT "$1" 2>/dev/null
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dse-$suite.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
OUT=$tmp/out
ERR=$tmp/err
TMO=${TMO:-300}
if command -v timeout >/dev/null 2>&1; then have_timeout=1; else have_timeout=0; fi

dse() {
    if [ "$have_timeout" = 1 ]; then
        timeout "$TMO" "$BIN" "$@" >"$OUT" 2>"$ERR" </dev/null
    else
        "$BIN" "$@" >"$OUT" 2>"$ERR" </dev/null
    fi
    rc=$?
}

first_err() { head -n 1 "$ERR" | cut -c 1-300; }

skip() { echo "skip $1: $2"; }

# expect_refused NAME 'stderr substring' DSE-ARGS...: exit 2, one line "dse: ..." holding the
# substring, nothing on stdout.
expect_refused() {
    name=$1 sub=$2
    shift 2
    dse "$@"
    if [ "$rc" -ne 2 ]; then
        fail "$name" "exit $rc, expected 2; stderr: $(first_err)"
    elif [ -s "$OUT" ]; then
        fail "$name" "wrote to stdout on an error: $(head -n 1 "$OUT" | cut -c 1-200)"
    elif [ "$(wc -l <"$ERR")" -ne 1 ] || ! head -n 1 "$ERR" | grep -q '^dse: '; then
        fail "$name" "not one line 'dse: ...': $(cut -c 1-300 "$ERR")"
    elif ! grep -qF -e "$sub" "$ERR"; then
        fail "$name" "stderr lacks '$sub': $(first_err)"
    else
        ok "$name"
    fi
}
