#!/bin/sh
# Runs the official MCP conformance suite against `wicket mcp --http --no-auth`
# on an ephemeral loopback port, bounded in time.
# Usage: run.sh WICKET_BIN CONFORMANCE_DIR [SECONDS]
set -eu
bin=$1
dir=$2
limit=${3:-300}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pid=""
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
"$bin" mcp --http 127.0.0.1:0 --no-auth --profile full 2>"$work/stderr" &
pid=$!
url=""
for _ in $(seq 1 100); do
	url=$(sed -n 's/^wicket mcp: serving Streamable HTTP at \([^ ]*\).*/\1/p' "$work/stderr")
	[ -n "$url" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "conformance: FAILED — wicket mcp --http did not start:"; cat "$work/stderr"; exit 1
fi
echo "conformance: @modelcontextprotocol/conformance@$(cat "$dir/.installed" 2>/dev/null) against $url"
cd "$dir"
./node_modules/.bin/conformance server --url "$url" --expected-failures "$here/expected-failures.yaml" >"$work/out" 2>&1 &
suite=$!
(
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	sleep "$limit" &
	s=$!
	wait "$s"
	echo "conformance: the suite ran over ${limit}s; stopped" >>"$work/out"
	kill "$suite" 2>/dev/null
	sleep 5 &
	s=$!
	wait "$s"
	kill -KILL "$suite" 2>/dev/null
) >/dev/null 2>&1 &
dog=$!
status=0
wait "$suite" || status=$?
kill "$dog" 2>/dev/null || true
# The verdict comes first, then what it rests on.
if [ "$status" -ne 0 ]; then
	echo "conformance: FAILED — a scenario failed that is not in expected-failures.yaml, one listed there passed, or the suite did not finish (its output follows)"
	cat "$work/out"; echo "conformance: FAILED (see above)"; exit 1
fi
expected=$(grep -c '^  - ' "$here/expected-failures.yaml" || true)
echo "conformance: PASSED — every generic scenario passes; the $expected failures below are all expected (fixtures only the suite's reference server has, listed in testdata/conformance/expected-failures.yaml)"
sed -n '/=== SUMMARY ===/,$p' "$work/out"
