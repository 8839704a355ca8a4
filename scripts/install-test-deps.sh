#!/usr/bin/env bash
# Installs the reference tools the tests compare against, only those missing:
# gdal-bin (gdal2tiles, gdalinfo) from Debian; mercantile, mbutil, pmtiles, xyzservices,
# staticmap from PyPI; Chromium and its driver (Debian) with selenium, jsonschema and Pillow
# (PyPI) for the server's end-to-end checks; numpy to compare pyramids with gdal2tiles'.
set -euo pipefail
bash "$(dirname "$0")/install-deps.sh" gdal-bin chromium chromium-driver osmium-tool redis-server wrk slowhttptest nginx-light

need=()
python3 -c "import mercantile" 2>/dev/null || need+=("mercantile==1.2.1")
python3 -c "import pmtiles.writer" 2>/dev/null || need+=("pmtiles==3.8.1")
python3 -c "import xyzservices" 2>/dev/null || need+=("xyzservices==2026.9.1")
python3 -c "import staticmap" 2>/dev/null || need+=("staticmap==0.5.7")
command -v mb-util >/dev/null 2>&1 || need+=("mbutil==0.3.0")
python3 -c "import selenium" 2>/dev/null || need+=("selenium==4.27.1")
python3 -c "import jsonschema" 2>/dev/null || need+=("jsonschema==4.26.0")
python3 -c "import PIL" 2>/dev/null || need+=("pillow==13.0.0")
python3 -c "import numpy" 2>/dev/null || need+=("numpy==2.4.6")
python3 -c "import gpxpy" 2>/dev/null || need+=("gpxpy==1.6.2")
if ((${#need[@]})); then
  echo "tilekit: installing from PyPI: ${need[*]}"
  python3 -m pip install -q --disable-pip-version-check "${need[@]}" 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
python3 -c "import mercantile, pmtiles.writer, xyzservices, staticmap, selenium, jsonschema, PIL, numpy, gpxpy" || { echo "error: could not install ${need[*]} from PyPI" >&2; exit 1; }
command -v mb-util >/dev/null 2>&1 || { echo "error: mb-util (PyPI mbutil) is not on PATH" >&2; exit 1; }
