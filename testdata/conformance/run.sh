#!/bin/sh
# Runs the official MCP conformance suite against `wicket mcp --http --no-auth`
# on an ephemeral loopback port. Usage: run.sh WICKET_BIN CONFORMANCE_DIR
set -eu
bin=$1
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" mcp --http 127.0.0.1:0 --no-auth --profile full 2>"$work/stderr" &
pid=$!
url=""
for _ in $(seq 1 100); do
	url=$(sed -n 's/^wicket mcp: serving Streamable HTTP at \([^ ]*\).*/\1/p' "$work/stderr")
	[ -n "$url" ] && break
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "conformance: wicket mcp --http did not start:"; cat "$work/stderr"; exit 1
fi
echo "conformance: @modelcontextprotocol/conformance against $url"
cd "$dir"
./node_modules/.bin/conformance server --url "$url" --expected-failures "$here/expected-failures.yaml" >"$work/out" 2>&1 || {
	cat "$work/out"; echo "conformance: FAILED (see above)"; exit 1
}
sed -n '/=== SUMMARY ===/,$p' "$work/out"
