#!/usr/bin/env bash
# Run the test suite with the library versions a Raspberry Pi gets from setup.sh:
# Raspberry Pi OS bookworm's apt numpy (1.24) and, pinned below 4.11 to match it,
# opencv-python-headless 4.10 (OpenCV's classic dnn engine, the ArUco API of 4.x).
# Off a Pi this is the closest check of the Pi's Python side; it builds its own
# venv (default /tmp/peloton-pi-venv, or $1) and leaves .venv alone.
#
#   tools/test_pi_versions.sh [VENV] [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-/tmp/peloton-pi-venv}"
shift || true
numpy_pin="${PELOTON_PI_NUMPY:-numpy==1.24.4}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
constraints="$venv/constraints.txt"
printf '%s\nopencv-python-headless<4.11\n' "$numpy_pin" > "$constraints"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$constraints" -e ".[test]"
"$venv/bin/python" -c 'import cv2, numpy; print(f"numpy {numpy.__version__}, OpenCV {cv2.__version__}")'
"$venv/bin/python" -m pytest -p no:cacheprovider "$@" tests
