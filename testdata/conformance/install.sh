#!/bin/sh
# Installs the pinned conformance suite (package.json and package-lock.json
# beside this script, or in PINDIR: the ext-apps check's) into DIR with
# `npm ci`, bounded in time so that a machine without a network fails in
# about a minute instead of hanging.
# Usage: install.sh DIR [SECONDS] [PINDIR]
set -eu
dir=$1
limit=${2:-180}
here=${3:-$(cd "$(dirname "$0")" && pwd)}
# The first pinned package names the install in messages.
pin=$(sed -n 's/.*"\(@modelcontextprotocol\/[a-z-]*\)": *"\([^"]*\)".*/\1@\2/p' "$here/package.json" | head -n 1)
version=${pin##*@}
mkdir -p "$dir"
rm -f "$dir/.installed"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
log="$dir/npm-install.log"
(
	cd "$dir" && exec npm ci --no-audit --no-fund --loglevel=error \
		--fetch-timeout=30000 --fetch-retries=1 \
		--fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000
) >"$log" 2>&1 &
npm_pid=$!
# A portable watchdog (coreutils timeout is not everywhere); its own sleep
# goes with it, so no stray process holds the caller's output open.
(
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	sleep "$limit" &
	s=$!
	wait "$s"
	kill "$npm_pid" 2>/dev/null
	sleep 5 &
	s=$!
	wait "$s"
	kill -KILL "$npm_pid" 2>/dev/null # npm may outwait a TERM
) >/dev/null 2>&1 &
dog=$!
status=0
wait "$npm_pid" || status=$?
kill "$dog" 2>/dev/null || true
if [ "$status" -ne 0 ]; then
	cat "$log"
	echo "$(basename "$dir"): FAILED — could not install $pin with npm" \
		"(exit $status; no network, or the npm registry is unreachable within ${limit}s?)." \
		"Run \`make unit\` for the Go tests alone, or retry \`make $(basename "$dir")\` once the registry is reachable."
	exit 1
fi
echo "$version" >"$dir/.installed"
