#!/bin/sh
# Builds dse (installing what is missing) and runs the whole test suite: the Check unit tests and
# the CLI script tests. Ends with one line "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
DSE_SETUP_TESTS=1 ./scripts/setup.sh || exit 2
rm -f tests/*.log # a log left by an earlier run must not be counted
OMP_NUM_THREADS=1 make -j"$(nproc)" check >/dev/null 2>&1
status=$?
passed=0
failed=0
# the two main suites must have run; every other tests/*_test.sh script (Makefile.am's TESTS) too
logs="tests/check_dse.log tests/cli_test.sh.log"
for t in tests/*_test.sh; do
    [ "$t" = tests/cli_test.sh ] || logs="$logs $t.log"
done
for log in $logs; do
    if [ ! -f "$log" ]; then
        echo "test: $log is missing (the suite did not run)" >&2
        failed=$((failed + 1))
        continue
    fi
    line=$(grep -E '^[a-z_]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$line" ]; then
        echo "test: no summary in $log:" >&2
        tail -n 20 "$log" >&2
        failed=$((failed + 1))
        continue
    fi
    echo "$line"
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/')
    f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/')
    passed=$((passed + p))
    failed=$((failed + f))
    [ "$f" -eq 0 ] || grep -E '^(FAIL|.*:F:|.*:E:)' "$log" >&2
done
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    echo "test: make check failed:" >&2
    tail -n 30 tests/test-suite.log 2>/dev/null >&2
    failed=1
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
