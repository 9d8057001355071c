#!/bin/bash
# The fuzz targets' committed inputs, replayed through each target built
# like the rest of the suite ($B/fuzz/TARGET, tests/fuzz/replay.c): the
# corpus, and the regression inputs of every finding fixed.  In a
# SANITIZE=1 build an input that makes ASan or UBSan report fails here.
. "$TOP/tests/lib.sh"

targets="imsg sandboxd auditd jsonrpc http config init ws jwt share"
logs=$B/test-logs/fuzz
mkdir -p "$logs"

for t in $targets; do
	for kind in corpus regress; do
		dir=$TOP/tests/fuzz/$kind/$t
		if [ ! -d "$dir" ] || [ -z "$(ls "$dir")" ]; then
			ok "$t: no $kind inputs to replay"
			continue
		fi
		log=$logs/$t-$kind.log
		n=$(ls "$dir" | wc -l)
		if "$B/fuzz/$t" -v "$dir" > "$log" 2>&1 &&
		    grep -q "^replayed $n inputs" "$log"; then
			ok "$t: $n $kind inputs replay cleanly"
		else
			not_ok "$t: $kind inputs replay cleanly (see $log)"
			diag_file "$log" 20
		fi
	done
done
done_testing
