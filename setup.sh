#!/usr/bin/env bash
# Peloton's one installer, on a Raspberry Pi and on any Debian-like machine.
#
#   ./setup.sh          install the companion into .venv
#   ./setup.sh test     install what the tests need, then lint, type-check and test
#   ./setup.sh run      start the table companion (arrives with the table service)
#
# On a Raspberry Pi (found from /proc/device-tree/model) it installs the apt
# packages the camera needs (python3-picamera2) and makes the venv with
# --system-site-packages, pinning numpy to apt's so pip never upgrades it.
# PELOTON_FORCE_PI=1 takes the Pi branch anywhere; PELOTON_DRY_RUN=1 prints
# the commands instead of running them (used to check the Pi branch off a Pi).
set -euo pipefail
cd "$(dirname "$0")"

mode="${1:-install}"
venv=".venv"
dry="${PELOTON_DRY_RUN:-0}"

run() {
    if [ "$dry" = "1" ]; then
        echo "+ $*"
    else
        "$@"
    fi
}

is_pi() {
    [ "${PELOTON_FORCE_PI:-0}" = "1" ] && return 0
    [ -r /proc/device-tree/model ] && grep -qi "raspberry pi" /proc/device-tree/model 2>/dev/null
}

as_root() {
    if [ "$(id -u)" = "0" ]; then run "$@"; else run sudo "$@"; fi
}

apt_updated=0
apt_install() {
    command -v apt-get >/dev/null 2>&1 || { echo "setup: no apt-get here; install $* by hand" >&2; return 0; }
    local missing=()
    for p in "$@"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    if [ "$apt_updated" = "0" ]; then as_root apt-get update -qq; apt_updated=1; fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}

python_bin() {
    for p in python3.11 python3; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
            echo "$p"; return 0
        fi
    done
    echo "setup: Python 3.11 or newer is needed" >&2
    exit 1
}

make_venv() {
    local py
    py="$(python_bin)"
    if is_pi; then
        # picamera2 needs libcamera, which only apt provides; the venv sees apt's packages.
        apt_install python3-picamera2 python3-libcamera python3-numpy python3-venv python3-gpiozero python3-lgpio
        [ -x "$venv/bin/python" ] || run "$py" -m venv --system-site-packages "$venv"
        # Keep apt's numpy: a pip-upgraded numpy breaks apt's simplejpeg (picamera2's JPEG encoder).
        local np
        np="$("$py" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || echo "")"
        if [ -n "$np" ]; then
            {
                echo "numpy==$np"
                # opencv-python-headless 4.11 and newer need numpy 2; Raspberry Pi OS bookworm has 1.24.
                case "$np" in 1.*) echo "opencv-python-headless<4.11" ;; esac
            } > "$venv.constraints.tmp"
            [ "$dry" = "1" ] && sed 's/^/+   constraint: /' "$venv.constraints.tmp"
            run cp "$venv.constraints.tmp" "$venv/constraints.txt"
            rm -f "$venv.constraints.tmp"
        else
            run sh -c ": > $venv/constraints.txt"
        fi
    else
        [ -x "$venv/bin/python" ] || run "$py" -m venv "$venv"
        run sh -c ": > $venv/constraints.txt"
    fi
}

pip_install() {
    run "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$venv/constraints.txt" "$@"
}

install() {
    make_venv
    pip_install -e ".$1"
}

case "$mode" in
    install)
        install ""
        echo "setup: installed; try: .venv/bin/companion --help"
        ;;
    test)
        install "[test]"
        run "$venv/bin/ruff" check companion vision firmware web tests tools examples
        run "$venv/bin/mypy"
        run "$venv/bin/python" -m pytest "${@:2}"
        ;;
    run)
        install ""
        if "$venv/bin/companion" serve --help >/dev/null 2>&1; then
            run "$venv/bin/companion" serve "${@:2}"
        else
            echo "setup: the table service (companion serve) is not built yet." >&2
            echo "setup: what runs today is listed in README.md (companion replay, simulate, dice, locate, bench)." >&2
            exit 2
        fi
        ;;
    *)
        echo "usage: ./setup.sh [install|test|run]" >&2
        exit 2
        ;;
esac
