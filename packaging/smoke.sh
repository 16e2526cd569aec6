#!/usr/bin/env bash
# Smoke test of a built bundle (run by `make package`): BUNDLE/mooring on a fresh data folder,
# offscreen, with no Python of the build environment on the path.
#   1. `mooring --version` prints the version
#   2. `mooring doctor` runs its checks (warnings are fine, a failure is not)
#   3. the bundled demo server is configured and is started through the bundle itself
#      (`mooring demo-server`), and a demo import task runs to completion through the CLI
#   4. a local model's process is an entry of the bundle (`mooring local-model`) with llama.cpp
#   5. the window opens, paints, shows the demo server, and quits cleanly (MOORING_SMOKE=1)
# Usage: packaging/smoke.sh [BUNDLE]   (default dist/mooring)
set -euo pipefail
bundle=$(cd "${1:-dist/mooring}" && pwd)
exe="$bundle/mooring"
[ -x "$exe" ] || { echo "smoke: no executable at $exe (run make package)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data="$work/data"
# A clean environment: nothing of a virtualenv or a checkout may help the bundle.
run() {
  env -i HOME="$work/home" PATH=/usr/bin:/bin LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen \
    XDG_RUNTIME_DIR="$work/runtime" MOORING_DATA_DIR="$data" \
    PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring "$@"
}
mkdir -p "$work/home" "$work/runtime" && chmod 700 "$work/runtime"
step() { printf 'smoke: %s\n' "$*"; }
fail() { printf 'smoke: FAILED: %s\n' "$*" >&2; exit 1; }

step "bundle $bundle ($(du -sh "$bundle" | cut -f1))"

version=$(run "$exe" --version) || fail "--version exited non-zero"
[[ "$version" =~ ^mooring\ [0-9] ]] || fail "--version printed: $version"
step "--version: $version"

if ! doctor=$(run "$exe" doctor 2>&1); then
  printf '%s\n' "$doctor" >&2
  fail "doctor reported a failure"
fi
grep -q '^OK *database' <<<"$doctor" || { printf '%s\n' "$doctor" >&2; fail "doctor: no database check"; }
step "doctor: $(grep -c '^OK' <<<"$doctor") checks OK, $(grep -c '^WARN' <<<"$doctor") warnings"

servers=$(run "$exe" servers list) || fail "servers list exited non-zero"
grep -q "^demo .*$exe demo-server --store" <<<"$servers" \
  || fail "the demo server is not started through the bundle: $servers"
step "demo server: $exe demo-server"

run "$exe" rules add demo import_suppliers allow >/dev/null || fail "rules add exited non-zero"
if ! call=$(run timeout 180 "$exe" call demo import_suppliers --args '{"path": "suppliers_clean.csv"}' --json 2>"$work/call.err"); then
  cat "$work/call.err" >&2
  fail "the demo import did not complete"
fi
state=$(grep -m1 '"state":' <<<"$call" | tr -d ' ,')
[ "$state" = '"state":"completed"' ] || { printf '%s\n' "$call" >&2; fail "demo import ended $state"; }
grep -q '"saved": 12' <<<"$call" || fail "demo import did not save the 12 sample suppliers"
step "demo import: completed, 12 suppliers saved"

# The process a local model runs in: the bundle's own entry, with llama.cpp in it (no model file
# here: the entry must fail on the file, having imported llama.cpp, not on a missing module).
help=$(run "$exe" local-model --help) || fail "local-model --help exited non-zero"
grep -q -- '--model' <<<"$help" || fail "local-model --help printed: $help"
local_out=$(run env MOORING_LOCAL_MODEL_KEY=smoke "$exe" local-model --model "$work/none.gguf" </dev/null 2>/dev/null || true)
grep -q '"error"' <<<"$local_out" || fail "local-model said nothing: $local_out"
if grep -q 'not installed' <<<"$local_out"; then fail "llama.cpp is not in the bundle: $local_out"; fi
step "local model: $exe local-model (llama.cpp bundled)"

if ! run env MOORING_SMOKE=1 timeout 120 "$exe" >"$work/window.out" 2>"$work/window.err"; then
  cat "$work/window.out" "$work/window.err" >&2
  tail -n 20 "$data/logs/mooring.log" >&2
  fail "the window did not open and quit cleanly"
fi
window=$(cat "$work/window.out")
grep -q '"smoke": "painted"' <<<"$window" || fail "the window did not report its first paint: $window"
grep -q '"icon": true' <<<"$window" || fail "the window has no icon: $window"
grep -q '"demo (bundled)"' <<<"$window" || fail "the window does not show the demo server: $window"
step "window: painted and closed cleanly ($window)"

if grep -E 'Traceback|internal error' "$data/logs/mooring.log" >/dev/null 2>&1; then
  grep -E -B2 -A10 'Traceback|internal error' "$data/logs/mooring.log" >&2
  fail "the log file has an internal error"
fi
step "passed"
