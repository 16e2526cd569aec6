#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Mooring needs, only those that are missing.
#   venv  - what `python3 -m venv` needs
#   gui   - Qt's runtime libraries (offscreen and X11)
#   all   - gui + Xvfb, xauth, a D-Bus daemon, AT-SPI, desktop-file-utils, appstream and
#           Node.js + npm for the test suite
# On other systems (or without root/sudo) it says what is missing and leaves the rest to you.
set -euo pipefail
mode=${1:-all}

venv_pkgs=()
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then venv_pkgs+=(python3-venv); fi
gui_pkgs=(libgl1 libegl1 libxkbcommon0 libglib2.0-0 libfontconfig1 libdbus-1-3
          libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0)
# at-spi2-core + python3-pyatspi: the window's accessibility test (tests/ui/test_accessibility.py).
test_pkgs=(xvfb xauth dbus-daemon at-spi2-core python3-pyatspi)
# desktop-file-validate and appstreamcli check the desktop entry and metainfo (tests/packaging).
test_pkgs+=(desktop-file-utils appstream)
# Node.js and npm run the npm MCP servers the suite talks to (tests/peers_node). A Node.js that
# is already there (e.g. from NodeSource, which bundles npm) is kept: Debian's npm conflicts with it.
if ! command -v node >/dev/null 2>&1; then test_pkgs+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then test_pkgs+=(npm); fi

case "$mode" in
  venv) wanted=("${venv_pkgs[@]}") ;;
  gui) wanted=("${gui_pkgs[@]}") ;;
  all) wanted=("${venv_pkgs[@]}" "${gui_pkgs[@]}" "${test_pkgs[@]}") ;;
  *) echo "usage: $0 venv|gui|all" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "system-deps: not a Debian-like system; make sure Qt's runtime libraries, Xvfb and dbus-daemon are installed." >&2
  exit 0
fi

missing=()
for p in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "system-deps: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  apt_get=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  apt_get=(sudo apt-get)
else
  echo "system-deps: missing packages and no root: run  sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${apt_get[@]}" update -qq
"${apt_get[@]}" install -y -qq --no-install-recommends "${missing[@]}"
