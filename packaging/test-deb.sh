#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Debian package, as ctest runs it (packaging/CMakeLists.txt):
#   test-deb.sh build BUILD_DIR OUT_DIR    cpack -G DEB, then check its control data and contents
#   test-deb.sh install OUT_DIR SOURCE_DIR dpkg -i the package, run what it installed from /usr, dpkg -r
# "install" needs root (CI runs as root on a fresh Debian 12); without it, it exits 77, which ctest reports as
# skipped.
set -euo pipefail
# Under pipefail a reader that stops early (grep -q, awk's exit) can fail the pipeline with the writer's SIGPIPE,
# at random: readers here always read their whole input.

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

mode=${1:?usage: test-deb.sh build|install ...}

deb_of() { ls "$1"/hitscope_*.deb 2>/dev/null | sed -n 1p; }

if [ "$mode" = build ]; then
    build=${2:?build dir}
    out=${3:?output dir}
    command -v dpkg-deb >/dev/null || skip "dpkg-deb is not installed (package dpkg)"
    command -v dpkg-shlibdeps >/dev/null || fail "dpkg-shlibdeps is missing (package dpkg-dev): the package's Depends would be incomplete"
    rm -rf "$out"
    mkdir -p "$out"
    cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1 || { cat "$out/cpack.log"; fail "cpack -G DEB failed"; }
    deb=$(deb_of "$out")
    [ -n "$deb" ] || { cat "$out/cpack.log"; fail "cpack made no hitscope_*.deb in $out"; }
    echo "package: $deb ($(du -h "$deb" | cut -f1))"

    info=$(dpkg-deb --info "$deb")
    echo "$info" | sed -n '/Package:/,$p'
    field() { dpkg-deb --field "$deb" "$1"; }
    [ "$(field Package)" = hitscope ] || fail "Package is '$(field Package)', not hitscope"
    [ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture is '$(field Architecture)'"
    [ -n "$(field Version)" ] || fail "no Version"
    [ -n "$(field Description)" ] || fail "no Description"

    contents=$(dpkg-deb --contents "$deb" | awk '{print $NF}')
    for path in ./usr/bin/hitscope ./usr/bin/hitscope-cli ./usr/lib/hitscope/hitscope-cli-gpu.so \
        ./usr/share/applications/io.hitscope.Hitscope.desktop \
        ./usr/share/metainfo/io.hitscope.Hitscope.metainfo.xml \
        ./usr/share/icons/hicolor/scalable/apps/io.hitscope.Hitscope.svg; do
        echo "$contents" | grep -xF "$path" >/dev/null || fail "$path is not in the package"
    done
    for size in 16 32 48 64 128 256; do
        path=./usr/share/icons/hicolor/${size}x${size}/apps/io.hitscope.Hitscope.png
        echo "$contents" | grep -xF "$path" >/dev/null || fail "$path is not in the package"
    done
    # Nothing outside /usr (a CMAKE_INSTALL_PREFIX gone wrong would put files in /usr/local or the build tree).
    stray=$(echo "$contents" | grep -v '^\./usr/' | grep -v '^\./$' | grep -v '^\./usr/$' || true)
    [ -z "$stray" ] || fail "files outside /usr: $stray"

    # Depends must name the package of every shared library the binaries load, so that apt brings them on a
    # fresh system: compare with the libraries the linker recorded (what dpkg-shlibdeps should have found).
    depends=$(field Depends)
    echo "Depends: $depends"
    extract="$out/root"
    dpkg-deb --extract "$deb" "$extract"
    missing=""
    for bin in "$extract"/usr/bin/* "$extract"/usr/lib/hitscope/*.so; do
        for lib in $(objdump -p "$bin" | awk '/NEEDED/ {print $2}'); do
            path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|x86_64|64bit/ && !found {print $NF; found = 1}')
            [ -n "$path" ] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l && !found {print $NF; found = 1}')
            [ -n "$path" ] || fail "$(basename "$bin") needs $lib, which is not on this system"
            real=$(readlink -f "$path")
            owner=$(dpkg -S "$real" 2>/dev/null || dpkg -S "$path" 2>/dev/null || true)
            owner=${owner%%:*}
            [ -n "$owner" ] || fail "$lib ($real) belongs to no Debian package: the .deb cannot depend on it"
            # libc6 is the only package allowed to be implied (dpkg-shlibdeps names it anyway).
            if ! echo "$depends" | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -xF "$owner" >/dev/null; then
                missing="$missing $owner($lib for $(basename "$bin"))"
            fi
        done
    done
    [ -z "$missing" ] || fail "Depends lacks:$missing"
    # Loaded at run time, so no linker record: the Vulkan loader.
    echo "$depends" | grep -e 'libvulkan1' >/dev/null || fail "Depends lacks libvulkan1 (Qt loads the Vulkan loader at run time)"
    # Every dependency must be installable from the configured archives (apt on a fresh Debian 12).
    if command -v apt-cache >/dev/null && [ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial -e auxfiles)" ]; then
        for dep in $(echo "$depends" | tr ',|' '\n\n' | sed 's/^ *//; s/ .*//' | sort -u); do
            apt-cache show "$dep" >/dev/null 2>&1 || fail "dependency $dep is not in any configured archive"
        done
    else
        echo "note: no apt package lists here; dependencies not checked against the archive"
    fi
    echo "PASS: $deb"
    exit 0
fi

if [ "$mode" = install ]; then
    out=${2:?output dir}
    src=${3:?source dir}
    [ "$(id -u)" -eq 0 ] || skip "installing the .deb needs root (CI runs as root); run ctest as root to test dpkg -i"
    command -v dpkg >/dev/null || skip "dpkg is not installed"
    deb=$(deb_of "$out")
    [ -n "$deb" ] || fail "no package in $out: the package_deb test makes it"
    if dpkg-query -W -f='${Status}' hitscope 2>/dev/null | grep -e "install ok installed" >/dev/null; then
        skip "a hitscope package is already installed here; not replacing it"
    fi
    # One install at a time, whoever runs the tests on this machine.
    exec 9>/tmp/hitscope-deb-test.lock
    flock -w 600 9 || fail "waited 10 minutes for another package test"
    trap 'dpkg -r hitscope >/dev/null 2>&1 || true' EXIT
    dpkg -i "$deb" || fail "dpkg -i $deb failed (missing dependencies? see above)"
    dpkg-query -W -f='${Status}\n' hitscope | grep -e "install ok installed" >/dev/null || fail "not installed after dpkg -i"

    export QT_QPA_PLATFORM=offscreen
    version=$(dpkg-deb --field "$deb" Version)
    got=$(/usr/bin/hitscope --version) || fail "/usr/bin/hitscope --version failed"
    echo "$got"
    echo "$got" | grep -F "$version" >/dev/null || fail "hitscope --version says '$got', the package is $version"
    /usr/bin/hitscope-cli --help | grep -e 'hitscope-cli scan' >/dev/null || fail "/usr/bin/hitscope-cli --help failed"
    # The installed CLI finds its shaders and rules without the build tree: scan the demo folder.
    result=$(cd / && /usr/bin/hitscope-cli scan --engine cpu -r "$src/resources/demo/rules/iocs.txt" "$src/resources/demo/files") \
        || fail "the installed hitscope-cli could not scan the demo folder"
    [ -n "$result" ] || fail "the installed hitscope-cli found nothing in the demo folder"
    echo "$result" | sed -n 1,3p
    # A GPU command opens the CLI's GPU module from /usr/lib/hitscope (with or without a device to find).
    devices=$(env -u QT_QPA_PLATFORM /usr/bin/hitscope-cli devices) || true
    echo "$devices" | sed -n 1p
    if echo "$devices" | grep -e 'cannot load the GPU module' >/dev/null; then
        fail "the installed hitscope-cli cannot open its GPU module: $devices"
    fi
    [ -f /usr/share/applications/io.hitscope.Hitscope.desktop ] || fail "the desktop entry was not installed"

    dpkg -r hitscope || fail "dpkg -r hitscope failed"
    trap - EXIT
    [ ! -e /usr/bin/hitscope ] || fail "/usr/bin/hitscope is still there after dpkg -r"
    echo "PASS: installed, ran and removed $deb"
    exit 0
fi

fail "unknown mode $mode"
