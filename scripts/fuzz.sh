#!/bin/sh
# The libFuzzer runs behind make fuzz and make fuzz-merge.
#
#	fuzz.sh run TARGET...	each target for FUZZ_TIME seconds, one at a
#				time, over its committed corpus and regression
#				inputs; new inputs go to $FZ/corpus/TARGET,
#				crashes to $FZ/artifacts/TARGET/
#	fuzz.sh merge TARGET...	add to tests/fuzz/corpus/TARGET the inputs of
#				$FZ/corpus/TARGET that reach code it does not
#
# Environment: FZ (the fuzz build directory, default build-fuzz),
# FUZZ_TIME (seconds per target, default 60), FUZZ_FLAGS (more libFuzzer
# flags).  Exits 1 after the last target if any run found something.
set -u

FZ=${FZ:-build-fuzz}
FUZZ_TIME=${FUZZ_TIME:-60}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

usage() {
	echo "usage: $0 run|merge target..." >&2
	exit 2
}

# Flags every run of a target takes: its dictionary, quiet daemons (their
# logs would drown the fuzzer's; reports still show), no leak allowance.
flags() {
	echo "-close_fd_mask=3 -timeout=20 -rss_limit_mb=2048"
	[ -f "tests/fuzz/$1.dict" ] && echo "-dict=tests/fuzz/$1.dict"
	return 0
}

run_one() {
	t=$1
	corpus=$FZ/corpus/$t
	art=$FZ/artifacts/$t
	mkdir -p "$corpus" "$art" "tests/fuzz/corpus/$t"
	seeds="tests/fuzz/corpus/$t"
	[ -d "tests/fuzz/regress/$t" ] && seeds="$seeds tests/fuzz/regress/$t"
	echo "fuzz $t: ${FUZZ_TIME}s, new inputs in $corpus"
	before=$(ls "$art" | wc -l)
	# shellcheck disable=SC2046,SC2086
	"$FZ/fuzz_$t" $(flags "$t") ${FUZZ_FLAGS:-} -print_final_stats=1 \
	    -max_total_time="$FUZZ_TIME" -artifact_prefix="$art/" \
	    "$corpus" $seeds > "$FZ/fuzz-$t.log" 2>&1
	rc=$?
	grep -E '^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
	    "$FZ/fuzz-$t.log" | sed "s/^/  $t: /"
	if [ "$rc" -ne 0 ] || [ "$(ls "$art" | wc -l)" -ne "$before" ]; then
		echo "FINDING in $t (exit $rc); the report is in $FZ/fuzz-$t.log:"
		grep -E 'ERROR|SUMMARY|Test unit written' "$FZ/fuzz-$t.log" |
		    sed 's/^/  /'
		ls "$art" | sed "s|^|  $art/|"
		return 1
	fi
	return 0
}

merge_one() {
	t=$1
	mkdir -p "tests/fuzz/corpus/$t" "$FZ/corpus/$t"
	# The committed corpus comes first: it keeps all it has, and only
	# what reaches new code is added.
	# shellcheck disable=SC2046
	"$FZ/fuzz_$t" $(flags "$t") -merge=1 -use_counters=0 \
	    "tests/fuzz/corpus/$t" \
	    "$FZ/corpus/$t" > "$FZ/merge-$t.log" 2>&1 || {
		echo "merge $t failed; see $FZ/merge-$t.log"
		return 1
	}
	echo "merge $t: $(grep -E 'MERGE-OUTER: [0-9]+ new files' \
	    "$FZ/merge-$t.log" | tail -1 | sed 's/.*MERGE-OUTER: //')," \
	    "$(ls "tests/fuzz/corpus/$t" | wc -l) files," \
	    "$(du -sk --apparent-size "tests/fuzz/corpus/$t" | cut -f1) KB"
}

[ $# -ge 2 ] || usage
cmd=$1
shift
failed=
for t in "$@"; do
	[ -x "$FZ/fuzz_$t" ] || { echo "no target $FZ/fuzz_$t" >&2; exit 2; }
	case $cmd in
	run)	run_one "$t" || failed="$failed $t" ;;
	merge)	merge_one "$t" || failed="$failed $t" ;;
	*)	usage ;;
	esac
done
if [ -n "$failed" ]; then
	echo "fuzz: FAILED:$failed"
	exit 1
fi
