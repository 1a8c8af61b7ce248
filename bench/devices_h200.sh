#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One GPU against several (--devices) on the device machine: regexes.tsv and a real collection (elastic.yar),
# hitscope-bench end to end with one device and with DEVICES (default: 0,1 on a two-GPU host, 0,0 on one GPU:
# the same GPU twice, for the pool's overhead), the resident kernel on one device, yara -p and Vectorscan beside
# them in the one-device run; then whole commands with -s on one device and on DEVICES, compared line for line.
# Corpus: make_corpus.py there, copied up to about 4 GiB, page cache warm. Packed as collections_h200.sh is:
#   DEVICES=0,1 bash .pack/gpu/on-gpu.sh bash bench/devices_h200.sh .pack/gpu/bin
set -u
. "$(dirname "$0")/devicerun.sh"
bin=$(cd "$1" && pwd)
out=${OUT:-/tmp}
log=$out/devices.txt
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
devices=${DEVICES:-$([ "$gpus" -ge 2 ] && echo 0,1 || echo 0,0)}
threads=$(nproc)
say "cores: $threads; GPUs: $gpus; devices: $devices; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
python3 "$bin/make_corpus.py" /tmp/d1 2048 2>&1 | tail -1 | tee -a "$log"
mkdir -p /tmp/d4
for copy in a b c; do cp -r /tmp/d1 "/tmp/d4/$copy"; done
say "corpus: $(find /tmp/d4 -type f | wc -l) files, $(du -sb /tmp/d4 | cut -f1) bytes"
find /tmp/d4 -type f -print0 | xargs -0 cat > /dev/null # the page cache warm
bench() { # LABEL ARGS...
    local label=$1; shift
    say "=== $label: hitscope-bench $*"
    timeout 500 hitscope-bench -j "$threads" "$@" 2>&1 | grep -v "^  rejected\|^groups (" | tee -a "$log" > /dev/null
}
for rules in regexes.tsv elastic.yar; do
    bench "$rules one device" --engine gpu --devices 0 --repeat 2 -r "$bin/$rules" /tmp/d4
    bench "$rules devices $devices" --engine gpu --devices "$devices" --repeat 2 --no-yara --no-vectorscan \
        -r "$bin/$rules" /tmp/d4
done
for rules in regexes.tsv elastic.yar; do
    measure one hitscope-cli scan --engine gpu --devices 0 -s -w -r "$bin/$rules" /tmp/d4
    measure pool hitscope-cli scan --engine gpu --devices "$devices" -s -w --telemetry /tmp/pool.json -r "$bin/$rules" /tmp/d4
    cmp -s /tmp/one.out /tmp/pool.out && say "$rules: one device and $devices print the same lines, in the same order" \
        || say "$rules: one device and $devices DIFFER: $(diff /tmp/one.out /tmp/pool.out | grep -c '^[<>]') lines"
    say "$rules batches per device slot: $(python3 -c "
import json, collections
print(dict(collections.Counter(json.loads(l)['device_slot'] for l in open('/tmp/pool.json'))))")"
done
