#!/bin/bash
# One fuzzing campaign: every target named for SECONDS of wall time each, one at a time (C
# targets with libFuzzer, Python targets with atheris), starting from the seeds
# (tests/fuzz/seeds.py) plus the kept corpus tests/data/fuzz/<target>. Prints one line per
# target: executions, coverage, corpus size, findings. Findings are in build/fuzz/findings.
#   bash tests/fuzz/run.sh SECONDS TARGET...           (make fuzz does this)
#   bash tests/fuzz/run.sh --merge TARGET...           add the new inputs that add coverage
#                                                       to tests/data/fuzz/<target> (minimised)
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}/fuzz
PY=${PYTHON:-.venv/bin/python}
C_TARGETS=" perfdata_scan evtab spe cfi "
kept() { [ "$1" = spe ] && echo tests/data/spe/fuzz-corpus || echo "tests/data/fuzz/$1"; }
engine() {  # the command that runs target $1 with libFuzzer options
	case "$C_TARGETS" in
	*" $1 "*) echo "$B/${1}_fuzz" ;;
	*)
		# libFuzzer runs its own program again for -merge and -fork: a Python target gets an
		# executable of its own that names the target
		mkdir -p "$B"
		printf '#!/bin/sh\nHPMKIT_FUZZ_ARGV0="$0" exec "%s" "%s" %s "$@"\n' \
			"$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")" "$(realpath tests/fuzz/run_py.py)" "$1" >"$B/py-$1"
		chmod +x "$B/py-$1"
		echo "$B/py-$1" ;;
	esac
}
if [ "${1:-}" = --merge ]; then
	shift
	for t in "$@"; do
		mkdir -p "$(kept "$t")"
		# -merge=1 copies into the first folder only the inputs of the others that add coverage;
		# C inputs are cut to 4 KiB (the tables and record streams keep nearly all their coverage
		# and the repository stays small), perf.data files keep up to 64 KiB (their sections)
		case "$C_TARGETS" in *" $t "*) len=${MERGE_MAX_LEN:-4096} ;; *) len=${MERGE_MAX_LEN:-65536} ;; esac
		mkdir -p "$B/findings/$t"
		$(engine "$t") -merge=1 -max_len="$len" -rss_limit_mb=4096 -timeout=30 \
			-artifact_prefix="$B/findings/$t/" "$(kept "$t")" "$B/corpus/$t" \
			>"$B/logs/$t.merge.log" 2>&1
		echo "$t: $(ls "$(kept "$t")" | wc -l) inputs kept in $(kept "$t") ($(du -sh "$(kept "$t")" | cut -f1))"
	done
	exit 0
fi
SECS=${1:?usage: run.sh SECONDS TARGET... | --merge TARGET...}
shift
[ -d "$B/seeds" ] || $PY tests/fuzz/seeds.py "$B/seeds" >/dev/null
mkdir -p "$B/logs" "$B/findings"
for t in "$@"; do
	mkdir -p "$B/corpus/$t" "$B/findings/$t"
	cp -n "$B/seeds/$t"/* "$B/corpus/$t"/ 2>/dev/null
	[ -d "$(kept "$t")" ] && cp -n "$(kept "$t")"/* "$B/corpus/$t"/ 2>/dev/null
	log="$B/logs/$t.log"
	start=$(date +%s)
	$(engine "$t") -max_total_time="$SECS" -rss_limit_mb=4096 -timeout=30 -max_len=65536 \
		-artifact_prefix="$B/findings/$t/" -print_final_stats=1 "$B/corpus/$t" >"$log" 2>&1
	rc=$?
	execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
	echo "$t: $((${execs:-0})) executions in $(($(date +%s) - start)) s, coverage ${cov:-?} edges," \
		"corpus $(ls "$B/corpus/$t" | wc -l), findings $(ls "$B/findings/$t" | wc -l) (exit $rc, log $log)"
done
