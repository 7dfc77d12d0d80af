#!/usr/bin/env bash
# Builds the .deb from a built tree (cpack), unpacks it into a temporary root and runs what it
# installed from there: strata --version, a headless screenshot of the app, and strata-cli
# answering from the packaged tiny model. Every missing piece fails the test.
#   test_package.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail

build=$1
source=$2
version=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }
# Width and height from a PNG's IHDR chunk ("W H"); fails on anything that is not a PNG.
png_size() {
  [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$1 is not a PNG"
  echo "$((16#$(od -An -tx1 -j16 -N4 "$1" | tr -d ' \n'))) $((16#$(od -An -tx1 -j20 -N4 "$1" | tr -d ' \n')))"
}

for tool in cpack dpkg-deb dpkg-query ldd; do
  command -v "$tool" >/dev/null || fail "$tool is not installed"
done
[ -f "$build/CPackConfig.cmake" ] || fail "$build/CPackConfig.cmake missing: configure first"

step "cpack -G DEB"
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB failed"; }
debs=("$tmp"/pkg/*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "expected one .deb in $tmp/pkg, found: ${debs[*]}"
deb=${debs[0]}
echo "$(basename "$deb"): $(du -h "$deb" | cut -f1)"

step "control file"
[ "$(dpkg-deb -f "$deb" Package)" = strata ] || fail "Package is not 'strata'"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version is not $version"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
# Names only, one a line ("libc6 (>= 2.34)" -> libc6; alternatives split too).
dep_names=$(echo "$depends" | tr ',|' '\n\n' | sed -E 's/\(.*\)//; s/^ +//; s/ +$//' | sed '/^$/d')
require_dep() { grep -qx "$1" <<<"$dep_names" || fail "Depends lacks $1"; }
# Every Qt module the UI imports, named the way Debian packages them (QtQuick.Controls ->
# qml6-module-qtquick-controls), and the SQLite driver of Qt SQL.
imports=$(grep -ho '^import Qt[A-Za-z.]*' "$source"/qml/*.qml | sort -u | cut -d' ' -f2)
[ -n "$imports" ] || fail "no Qt imports found in $source/qml/*.qml"
for module in $imports; do
  require_dep "qml6-module-$(echo "$module" | tr 'A-Z.' 'a-z-')"
done
require_dep libqt6sql6-sqlite
# What dpkg-shlibdeps found in the binaries.
require_dep libc6
require_dep libqt6core6
require_dep libqt6quick6
# Each dependency is a real package (installed here by tools/dev.sh).
for name in $dep_names; do
  dpkg-query -W "$name" >/dev/null 2>&1 || fail "Depends names $name, which is not an installed package"
done

step "dpkg-deb -x"
root=$tmp/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/strata usr/bin/strata-cli; do
  [ -x "$root/$f" ] || fail "$f missing or not executable"
  if ldd "$root/$f" | grep -q 'not found'; then
    ldd "$root/$f" >&2
    fail "$f links a library that is not found"
  fi
done
model=$root/usr/share/strata/models/strata-tiny
for f in config.json model.safetensors tokenizer.json tokenizer_config.json chat_template.jinja; do
  [ -s "$model/$f" ] || fail "the tiny model's $f is missing from the package"
done
desktop=$root/usr/share/applications/io.strata.Strata.desktop
[ -f "$desktop" ] || fail "io.strata.Strata.desktop missing"
grep -qx 'Exec=strata' "$desktop" || fail "the .desktop file does not run strata"
icon=$(sed -n 's/^Icon=//p' "$desktop")
[ -n "$icon" ] || fail "the .desktop file names no icon"
[ -s "$root/usr/share/icons/hicolor/scalable/apps/$icon.svg" ] || fail "scalable $icon.svg missing"
for size in 48 128 256; do
  png=$root/usr/share/icons/hicolor/${size}x${size}/apps/$icon.png
  [ -f "$png" ] || fail "${size}x${size} $icon.png missing"
  [ "$(png_size "$png")" = "$size $size" ] || fail "$png is $(png_size "$png"), not ${size}x${size}"
done
metainfo=$root/usr/share/metainfo/io.strata.Strata.metainfo.xml
[ -f "$metainfo" ] || fail "AppStream metainfo missing"
grep -q "<launchable type=\"desktop-id\">$(basename "$desktop")</launchable>" "$metainfo" ||
  fail "the metainfo does not launch $(basename "$desktop")"
grep -q "<release version=\"$version\"" "$metainfo" || fail "the metainfo has no release $version"

step "strata --version"
out=$(QT_QPA_PLATFORM=offscreen "$root/usr/bin/strata" --version 2>&1) || fail "strata --version: $out"
echo "$out"
grep -q "$version" <<<"$out" || fail "strata --version does not print $version"

step "strata --screenshot (offscreen, --demo)"
QT_QPA_PLATFORM=offscreen timeout 60 "$root/usr/bin/strata" --screenshot "$tmp/shot.png" \
  --after-ms 300 --demo >"$tmp/app.log" 2>&1 || { cat "$tmp/app.log" >&2; fail "the screenshot run failed"; }
[ -f "$tmp/shot.png" ] || { cat "$tmp/app.log" >&2; fail "no screenshot written"; }
read -r w h <<<"$(png_size "$tmp/shot.png")"
echo "screenshot ${w}x${h}"
[ "$w" -ge 400 ] && [ "$h" -ge 300 ] || fail "the screenshot is only ${w}x${h}"

step "strata-cli run from the packaged model"
answer=$(timeout 60 "$root/usr/bin/strata-cli" run --model "$model" \
  --prompt "What is the capital of France?" --no-think --temperature 0 --max-new 16 2>&1) ||
  fail "strata-cli run failed: $answer"
echo "$answer"
grep -q Paris <<<"$answer" || fail "the packaged model's answer does not contain Paris"
echo "PASS"
