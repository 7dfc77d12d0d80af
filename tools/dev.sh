#!/usr/bin/env bash
# Strata's developer entry point on Debian 12:
#   tools/dev.sh run    install missing packages, build (Release), open the desktop app (or, without
#                       a display, chat with the bundled tiny model in the terminal)
#   tools/dev.sh test   install missing packages, build (Release), run every test suite (ctest)
#   tools/dev.sh build  install missing packages and build only
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
packages=(cmake ninja-build g++ pkg-config libspdlog-dev nlohmann-json3-dev libxxhash-dev liburing-dev
          libpcre2-dev libutf8proc-dev qt6-base-dev libcpp-httplib-dev
          # The Arm64 NEON kernels' test (tests/cross/): a cross compiler and user-mode qemu.
          g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
          # The desktop app (app/, qml/): Qt Quick, its QML runtime modules, Qt SQL's SQLite driver.
          qt6-declarative-dev libqt6sql6-sqlite qml6-module-qtqml qml6-module-qtqml-models
          qml6-module-qtqml-workerscript qml6-module-qtquick qml6-module-qtquick-window
          qml6-module-qtquick-controls qml6-module-qtquick-templates qml6-module-qtquick-layouts
          qml6-module-qtquick-shapes qml6-module-qtquick-dialogs qml6-module-qttest
          # QtQuick.Dialogs' own (non-native) file dialog, used where no platform dialog is.
          qml6-module-qt-labs-folderlistmodel
          # The installer (installer/): the app's PNG icons are rendered from its SVG.
          librsvg2-bin)

install_missing_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # The server's test drives it with the official openai npm client: node and npm from Debian
  # where they are absent (a NodeSource nodejs, which bundles npm, conflicts with Debian's npm).
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "dev.sh: installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  install_missing_packages
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" --parallel "$(nproc)"
}

# The expert tiers' and the step batcher's threads under ThreadSanitizer: a second build of the
# engine and the tests labelled "tier" or "threads". TSan maps fixed address ranges that newer kernels' ASLR (more than 28 bits of
# mmap randomness) can collide with; then it cannot run at all, and this says so loudly.
tsan_tier_tests() {
  local bits
  bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
  if [ "$bits" -gt 28 ]; then
    echo "NOT RUN: ThreadSanitizer tier tests (vm.mmap_rnd_bits is $bits; run 'sysctl vm.mmap_rnd_bits=28')" >&2
    return 0
  fi
  cmake -S "$root" -B "$root/build-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_TSAN=ON
  cmake --build "$root/build-tsan" --parallel "$(nproc)" --target test_expert_store test_step_batcher
  ctest --test-dir "$root/build-tsan" -L 'tier|threads' --output-on-failure --timeout 600
}

case "${1:-}" in
  build)
    configure_and_build
    ;;
  run)
    configure_and_build
    # The desktop app where there is a display (it opens the bundled tiny model on first run);
    # the terminal chat where there is none.
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$build/app/strata" ]; then
      echo "$build/app/strata"
      exec "$build/app/strata"
    fi
    model="$root/resources/models/strata-tiny"
    if [ -f "$model/config.json" ]; then
      echo "strata-cli chat --model $model"
      exec "$build/engine/cli/strata-cli" chat --model "$model"
    fi
    # Without the bundled model, generate from the reference test checkpoint (random weights:
    # the ids are meaningless, but every part of the forward pass runs).
    model="$root/tests/data/tiny-dsa"
    prompt="17,3,250,88,5,141,64,9,200,31,77,12"
    echo "strata-cli generate --model $model --tokens $prompt --max-new 32 --greedy"
    "$build/engine/cli/strata-cli" generate --model "$model" --tokens "$prompt" --max-new 32 --greedy
    ;;
  test)
    configure_and_build
    ctest --test-dir "$build" --output-on-failure --timeout 600
    tsan_tier_tests
    ;;
  *)
    echo "usage: tools/dev.sh run|test|build" >&2
    exit 2
    ;;
esac
