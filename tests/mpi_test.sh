#!/bin/sh
# tests/mpi_test.sh -- dse sweep across MPI ranks (./configure --with-mpi; docs/mpi.md).
#
# The contract under test: `mpirun -np N dse sweep SPEC` gives the database one process gives for the
# same spec and seed, point for point (every column of every row but run_id, and the run's
# hypervolume), for grid, random and NSGA-II searches, at 2 and 4 ranks (oversubscribed on this
# machine) and with threads inside ranks; --resume under mpirun finishes a run that one process
# started; an error on the ranks is reported once, with exit status 2, and writes nothing.
#
# Needs dse built with MPI and Open MPI's mpirun; without them every case is skipped, with a message.
# Environment: DSE_BIN, DSE_SRCDIR as for tests/cli_test.sh.
# Prints "ok NAME" / "FAIL NAME: why" / "skip NAME: why" per case and a last line
# "mpi_test: N passed, N failed".
set -u

suite=mpi_test
. "$(cd "$(dirname "$0")" && pwd)/test_env.sh"
cd "$SRC" || exit 1

skipped=0
skip() { skipped=$((skipped + 1)); echo "skip $1: $2"; }
finish() {
    [ "$skipped" -eq 0 ] || echo "mpi_test: $skipped cases skipped"
    echo "mpi_test: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

if ! "$BIN" --version | grep -q ' MPI'; then
    skip mpi "this dse was built without MPI (./configure --with-mpi; scripts/test.sh does so when Open MPI is installed)"
    finish
fi
if ! command -v mpirun >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    skip mpi "mpirun or python3 not found (apt-get install openmpi-bin python3)"
    finish
fi
# Open MPI refuses root unless told; shared memory only (no network here), and no single-copy
# mechanism (ptrace across processes is not allowed in every container).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
    OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
: "${OMP_NUM_THREADS:=1}"
export OMP_NUM_THREADS
mpi() { # ranks, then dse's arguments
    n=$1
    shift
    timeout 120 mpirun --oversubscribe -np "$n" "$BIN" "$@"
}

# Specs: the shipped main job (a grid with a memory axis), and the 300,000-point resume spec as
# random and NSGA-II searches.
python3 - "$tmp" <<'PY' || { fail setup "could not write the specs"; finish; }
import json, sys
t = sys.argv[1]
base = json.load(open("tests/data/sweep-resume.json"))
base["workload"]["model"] = "models/llama-3.2-1b.json"
base["system"] = ["hwdesc/" + s.split("/")[-1] for s in base["system"]]
r = dict(base, name="mpi-random", search={"method": "random", "samples": 20000, "seed": 7})
g = dict(base, name="mpi-nsga2", search={"method": "nsga2", "population": 96, "generations": 12, "seed": 11})
json.dump(r, open(t + "/random.json", "w"))
json.dump(g, open(t + "/nsga2.json", "w"))
# every registry metric stored: more than 64 travel between ranks (two 64-bit masks on the wire)
a = dict(base, name="mpi-store-all", store="all", search={"method": "random", "samples": 3000, "seed": 5})
json.dump(a, open(t + "/storeall.json", "w"))
PY

# same_db A B: every points row (all columns but run_id) and the run's hypervolume and point count.
same_db() {
    python3 - "$1" "$2" <<'PY'
import sqlite3, sys
def read(path):
    d = sqlite3.connect(path)
    cols = [r[1] for r in d.execute("pragma table_info(points)") if r[1] != "run_id"]
    run = d.execute("select id, hypervolume, points_total, status from runs order by id desc limit 1").fetchone()
    rows = d.execute("select %s from points where run_id = ? order by point" % ",".join('"%s"' % c for c in cols),
                     (run[0],)).fetchall()
    return cols, run[1:], rows
ca, ra, pa = read(sys.argv[1])
cb, rb, pb = read(sys.argv[2])
assert ca == cb, "columns differ"
assert ra == rb, "runs differ: %r vs %r" % (ra, rb)
assert ra[2] == "complete", "run not complete: %r" % (ra,)
assert len(pa) == len(pb), "%d rows vs %d" % (len(pa), len(pb))
for x, y in zip(pa, pb):
    assert x == y, "point %r differs: %r vs %r" % (x[0], x, y)
assert len(pa) > 0, "no rows"
PY
}

for case in grid:sweeps/llm_edge.json random:$tmp/random.json nsga2:$tmp/nsga2.json storeall:$tmp/storeall.json; do
    name=${case%%:*}
    spec=${case#*:}
    if ! "$BIN" sweep "$spec" --db "$tmp/$name-1.db" --no-plot --quiet --json >"$tmp/$name-1.out" 2>"$tmp/$name-1.err"; then
        fail "mpi-$name" "one process failed: $(head -c 300 "$tmp/$name-1.err")"
        continue
    fi
    for n in 2 4; do
        if ! mpi "$n" sweep "$spec" --db "$tmp/$name-$n.db" --no-plot --quiet --json >"$tmp/$name-$n.out" 2>"$tmp/$name-$n.err"; then
            fail "mpi-$name-np$n" "mpirun failed: $(head -c 400 "$tmp/$name-$n.err")"
        elif ! why=$(same_db "$tmp/$name-1.db" "$tmp/$name-$n.db" 2>&1); then
            fail "mpi-$name-np$n" "$(echo "$why" | tail -n 1)"
        elif [ "$(grep -v '"db":' "$tmp/$name-1.out")" != "$(grep -v '"db":' "$tmp/$name-$n.out")" ]; then
            fail "mpi-$name-np$n" "the printed front differs from one process's"
        else
            ok "mpi-$name-np$n"
        fi
    done
done

# Threads inside ranks: 2 ranks x 2 threads, the same database again.
if OMP_NUM_THREADS=2 mpi 2 sweep "$tmp/random.json" --db "$tmp/random-2x2.db" --no-plot --quiet >/dev/null 2>"$tmp/2x2.err" &&
    why=$(same_db "$tmp/random-1.db" "$tmp/random-2x2.db" 2>&1); then
    ok mpi-ranks-x-threads
else
    fail mpi-ranks-x-threads "${why:-$(head -c 300 "$tmp/2x2.err")}"
fi

# Progress of a batch job (stderr a pipe to mpirun): a line at each tenth of the plan, from rank 0 only.
mpi 2 sweep "$tmp/random.json" --no-db --no-plot >/dev/null 2>"$tmp/prog.err"
if [ "$(grep -c '^dse sweep: 100 % (20000 of 20000 points)' "$tmp/prog.err")" -eq 1 ] &&
    [ "$(grep -c '^dse sweep: [0-9]* %' "$tmp/prog.err")" -le 10 ]; then
    ok mpi-progress-lines
else
    fail mpi-progress-lines "$(head -c 300 "$tmp/prog.err")"
fi

# The run's row says it ran on ranks; the points' rows do not.
if python3 -c "
import sqlite3, sys
h = sqlite3.connect(sys.argv[1]).execute('select host from runs').fetchone()[0]
assert h.endswith('(MPI: 4 ranks)'), h
" "$tmp/grid-4.db" 2>"$tmp/host.err"; then ok mpi-run-host; else fail mpi-run-host "$(tail -n 1 "$tmp/host.err")"; fi

# --resume under mpirun: one process is stopped by Ctrl-C, two ranks finish the run; the database
# then holds what one uninterrupted process stores.
spec=tests/data/sweep-resume.json
"$BIN" sweep "$spec" --db "$tmp/res.db" --no-plot --quiet >/dev/null 2>"$tmp/res1.err" &
pid=$!
interrupt_stored "$pid" "$tmp/res.db"
wait "$pid"
rc=$?
"$BIN" sweep "$spec" --db "$tmp/res-full.db" --no-plot --quiet >/dev/null 2>&1
if [ "$rc" -ne 1 ] || ! grep -q "interrupted: [0-9]* points saved" "$tmp/res1.err"; then
    fail mpi-resume "the first run was not interrupted (exit $rc): $(head -c 300 "$tmp/res1.err")"
elif ! mpi 2 sweep "$spec" --db "$tmp/res.db" --no-plot --quiet --resume >/dev/null 2>"$tmp/res2.err"; then
    fail mpi-resume "mpirun --resume failed: $(head -c 300 "$tmp/res2.err")"
elif ! grep -q "resuming run 1" "$tmp/res2.err"; then
    fail mpi-resume "did not resume: $(head -c 300 "$tmp/res2.err")"
elif ! why=$(same_db "$tmp/res-full.db" "$tmp/res.db" 2>&1); then
    fail mpi-resume "$(echo "$why" | tail -n 1)"
else
    ok mpi-resume
fi

# An input error on the ranks: reported once (rank 0), exit status 2, the foreign file untouched.
python3 -c "import sqlite3, sys; d = sqlite3.connect(sys.argv[1]); d.execute('create table t (x)'); d.commit()" "$tmp/foreign.db"
sum0=$(cksum <"$tmp/foreign.db")
mpi 2 sweep sweeps/llm_edge.json --db "$tmp/foreign.db" --no-plot --quiet >"$tmp/f.out" 2>"$tmp/f.err"
rc=$?
n=$(grep -c '^dse: ' "$tmp/f.err")
if [ "$rc" -eq 2 ] && [ "$n" -eq 1 ] && grep -q "^dse: .*foreign.db: not a dse sweep database" "$tmp/f.err" &&
    [ "$(cksum <"$tmp/foreign.db")" = "$sum0" ] && [ ! -s "$tmp/f.out" ]; then
    ok mpi-input-error
else
    fail mpi-input-error "exit $rc, $n dse lines: $(head -c 400 "$tmp/f.err")"
fi
# A spec error, which every rank finds: one message too.
printf '{"name": "x"' >"$tmp/bad.json"
mpi 4 sweep "$tmp/bad.json" --no-plot --quiet >/dev/null 2>"$tmp/b.err"
rc=$?
n=$(grep -c '^dse: ' "$tmp/b.err")
if [ "$rc" -eq 2 ] && [ "$n" -eq 1 ]; then ok mpi-spec-error; else fail mpi-spec-error "exit $rc, $n dse lines: $(head -c 300 "$tmp/b.err")"; fi

finish
