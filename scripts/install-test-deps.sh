#!/usr/bin/env bash
# Installs the Python reference libraries the tests compare against, only if missing.
set -euo pipefail
need=()
python3 -c "import mercantile" 2>/dev/null || need+=("mercantile==1.2.1")
if ((${#need[@]})); then
  echo "tilekit: installing from PyPI: ${need[*]}"
  python3 -m pip install -q --disable-pip-version-check "${need[@]}" 2>&1 | grep -v "Running pip as the 'root' user" || true
  python3 -c "import mercantile" || { echo "error: could not install ${need[*]} from PyPI" >&2; exit 1; }
fi
