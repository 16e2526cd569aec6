#!/usr/bin/env bash
# Installs a built bundle for the current user, with its desktop entry, AppStream metainfo and
# icons, in the XDG folders (honours XDG_DATA_HOME; the `mooring` command goes to
# XDG_BIN_HOME, default ~/.local/bin) -- or removes exactly what it installed.
#   packaging/desktop.sh install [BUNDLE]   (default dist/mooring; installing again replaces it)
#   packaging/desktop.sh uninstall          (your tasks, settings and logs are kept)
set -euo pipefail
action=${1:-}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
app_id=io.mooring.Mooring
data_home=${XDG_DATA_HOME:-$HOME/.local/share}
bin_home=${XDG_BIN_HOME:-$HOME/.local/bin}
# The program, not the user's data: that lives in $data_home/Mooring and is never touched here.
target="$data_home/$app_id"
entry="$data_home/applications/$app_id.desktop"
metainfo="$data_home/metainfo/$app_id.metainfo.xml"
icons="$data_home/icons/hicolor"
link="$bin_home/mooring"
say() { printf 'desktop: %s\n' "$*"; }
die() { printf 'desktop: %s\n' "$*" >&2; exit 1; }

refresh_caches() {
  if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database -q "$data_home/applications" 2>/dev/null || true
  fi
  # Icon themes notice a changed folder; a user's hicolor folder usually has no cache to rebuild.
  [ -d "$icons" ] && touch "$icons"
  return 0
}

install_bundle() {
  local bundle
  bundle=$(cd "${1:-dist/mooring}" 2>/dev/null && pwd) || die "no bundle at ${1:-dist/mooring}: run make package"
  [ -x "$bundle/mooring" ] || die "$bundle has no executable 'mooring': run make package"
  case "$target" in
    *[\"\`\$\\%]* | *$'\n'*) die "cannot write a desktop entry for $target (quote, \$, \\, % or newline in the path); set XDG_DATA_HOME to a plainer folder" ;;
  esac
  mkdir -p "$data_home" "$bin_home"
  # Copy next to the old one, then swap, so a failed copy leaves the installed app as it was.
  rm -rf "$target.new" "$target.old"
  cp -a "$bundle" "$target.new"
  [ -e "$target" ] && mv "$target" "$target.old"
  mv "$target.new" "$target"
  rm -rf "$target.old"

  local exec_path="$target/mooring"
  [[ "$exec_path" == *" "* ]] && exec_path="\"$exec_path\""
  mkdir -p "$(dirname "$entry")"
  sed -e "s|^Exec=mooring\$|Exec=$exec_path|" -e "s|^TryExec=mooring\$|TryExec=$target/mooring|" \
    "$repo/resources/desktop/$app_id.desktop" >"$entry.tmp"
  mv "$entry.tmp" "$entry"
  install -D -m 644 "$repo/resources/desktop/$app_id.metainfo.xml" "$metainfo"
  install -D -m 644 "$repo/resources/icons/$app_id.svg" "$icons/scalable/apps/$app_id.svg"
  local png size
  for png in "$repo"/resources/icons/hicolor/*/apps/"$app_id.png"; do
    size=$(basename "$(dirname "$(dirname "$png")")")
    install -D -m 644 "$png" "$icons/$size/apps/$app_id.png"
  done
  if [ -e "$link" ] && [ ! -L "$link" ]; then
    say "left $link alone (not a link this script made); the command is $target/mooring"
  else
    ln -sfn "$target/mooring" "$link"
  fi
  if command -v desktop-file-validate >/dev/null 2>&1; then
    desktop-file-validate "$entry" || die "the installed entry $entry does not validate"
  fi
  refresh_caches
  say "installed Mooring in $target"
  say "menu entry $entry; icons in $icons; command $link"
  case ":$PATH:" in *":$bin_home:"*) ;; *) say "note: $bin_home is not on your PATH" ;; esac
}

uninstall_bundle() {
  rm -f "$entry" "$metainfo" "$icons/scalable/apps/$app_id.svg"
  rm -f "$icons"/*/apps/"$app_id.png"
  if [ -L "$link" ] && [ "$(readlink "$link")" = "$target/mooring" ]; then rm -f "$link"; fi
  rm -rf "$target" "$target.new" "$target.old"
  refresh_caches
  say "removed Mooring from $data_home (the program, its menu entry and icons)"
  say "your tasks, settings and logs are kept (\`mooring doctor\` shows where; by default $data_home/Mooring)"
}

case "$action" in
  install) install_bundle "${2:-}" ;;
  uninstall) uninstall_bundle ;;
  *) echo "usage: $0 install [BUNDLE] | uninstall" >&2; exit 2 ;;
esac
