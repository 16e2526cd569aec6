#!/usr/bin/env bash
# Screenshots of the window's main states under Xvfb (a real X11 window, no desktop needed):
# first run, the tool palette, the approval dialog, a running task card, the input form, the
# tasks panel, the servers panel, settings, a conversation with a running task card, and the
# dark palette, a reply with a code block and its versions, the prompt picker, a message with
# files attached. Output: build/screenshots/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$here/.venv/bin/python}
out=$here/build/screenshots
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
rm -rf "$out"
mkdir -p "$out"
export MOORING_DATA_DIR=$data/mooring
export PYTHONPATH=$here:$here/app${PYTHONPATH:+:$PYTHONPATH}
export PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring
export QT_QPA_PLATFORM=xcb
csv=$here/resources/samples/suppliers_ambiguous_id.csv
xvfb-run -a -s "-screen 0 1280x900x24" "$python" "$here/tests/ui/window_probe.py" flow "$csv" "$out" >/dev/null
# A conversation whose tool call became a running task (a scripted model on 127.0.0.1).
xvfb-run -a -s "-screen 0 1280x900x24" "$python" "$here/tests/ui/chat_shots.py" "$out" >/dev/null
MOORING_COLOR_SCHEME=dark xvfb-run -a -s "-screen 0 1280x900x24" \
  "$python" "$here/tests/ui/window_probe.py" shot "$out/10-dark-palette.png" >/dev/null
# The docs show some of them: copy those into docs/images/, so `make screenshots` keeps the
# docs' pictures current (tests/docs checks that every image there is one of these).
mkdir -p "$here/docs/images"
for shot in 03-approval-dialog 05-task-needs-input 06-input-form 08-servers-panel \
  14-chat-code-and-versions 15-prompt-picker 16-chat-attachments; do
  cp "$out/$shot.png" "$here/docs/images/$shot.png"
done
ls "$out"
