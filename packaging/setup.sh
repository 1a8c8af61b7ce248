#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs every Debian 12 package Hitscope needs to build, test and benchmark. Run as root or with sudo.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
packages=(
    build-essential cmake ninja-build pkg-config git python3 pmccabe
    qt6-base-dev qt6-base-private-dev qt6-shadertools-dev libqcustomplot-dev
    libvulkan-dev mesa-vulkan-drivers libgl1-mesa-dri vulkan-tools vulkan-validationlayers glslang-tools spirv-tools
    xvfb xauth
    slurm-wlm munge
    yara libyara-dev libvectorscan-dev liburing-dev
    shim-unsigned libmono-corlib4.5-dll
    appstream
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "hitscope: build dependencies are installed"
