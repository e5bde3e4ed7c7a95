#!/usr/bin/env bash
# Offscreen rendering for `sim2real sim2sim --video` on a machine without a display: MuJoCo renders through
# OSMesa on the CPU (Debian/Ubuntu package libosmesa6; EGL is used instead where an NVIDIA GPU is present).
# Installs the package when it is missing and this runs as root with apt-get; otherwise says what to install.
set -euo pipefail
if ldconfig -p 2>/dev/null | grep -q "libOSMesa\.so"; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing libosmesa6 (offscreen rendering for sim2sim --video)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libosmesa6 >/dev/null
else
    echo "setup: note: no libOSMesa; for sim2sim --video on a headless CPU machine: sudo apt-get install libosmesa6"
fi
