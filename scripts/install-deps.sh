#!/usr/bin/env bash
# Installs the Debian packages TileKit needs to build and run, only those missing.
# Usage: scripts/install-deps.sh [EXTRA-PACKAGE...]
# A package that cannot be installed fails the run with its name.
set -euo pipefail

# Debian package : pkg-config module it provides (or - for none)
REQUIRED=(
  "pkg-config:-"
  "libcairo2-dev:cairo"
  "libpango1.0-dev:pangocairo"
  "fonts-dejavu-core:-"
  "libpng-dev:libpng"
  "zlib1g-dev:zlib"
  "libdeflate-dev:libdeflate"
  "libisal-dev:libisal"
  "libturbojpeg0-dev:libturbojpeg"
  "libwebp-dev:libwebp"
  "libsqlite3-dev:sqlite3"
  "libmicrohttpd-dev:libmicrohttpd"
  "libjpeg62-turbo-dev:libjpeg"
  "libtiff-dev:libtiff-4"
  "libhiredis-dev:hiredis"
  "libxml2-dev:libxml-2.0"
  "libjs-leaflet:-"
)
for extra in "$@"; do REQUIRED+=("$extra:-"); done

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for entry in "${REQUIRED[@]}"; do
  package=${entry%%:*}
  installed "$package" || missing+=("$package")
done

if ((${#missing[@]})); then
  echo "tilekit: installing Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq >/dev/null || echo "warning: apt-get update failed; trying the install anyway" >&2
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/tilekit-apt.log 2>&1; then
    tail -20 /tmp/tilekit-apt.log >&2
    echo "error: apt-get could not install: ${missing[*]}" >&2
    exit 1
  fi
fi

# Check each package and the pkg-config module SwiftPM will ask for, naming what is wrong.
status=0
for entry in "${REQUIRED[@]}"; do
  package=${entry%%:*} module=${entry#*:}
  if ! installed "$package"; then
    echo "error: Debian package $package is not installed" >&2; status=1
  elif [ "$module" != "-" ] && ! pkg-config --exists "$module"; then
    echo "error: pkg-config cannot find $module (from Debian package $package)" >&2; status=1
  fi
done
exit $status
