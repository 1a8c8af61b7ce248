#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Literal lists, regexes.tsv and YARA collections on the device machine: the GPU engine (tableless catalog: key
# kernel and host screens; and with --gpu-dfas), the CPU engine, Vectorscan and yara -p 16 in hitscope-bench
# runs, then whole commands compared line for line. Packed with ../shared/device/pack-runtime.sh into .pack/gpu
# with ../shared/bench/{make_corpus.py,gen_literals.py,regexes.tsv}, mixed_nomod.yar and elastic.yar (the
# fetched collection, never committed). Run as
#   bash .pack/gpu/on-gpu.sh bash bench/collections_h200.sh .pack/gpu/bin
set -u
. "$(dirname "$0")/devicerun.sh"
MEASURE_TIMEOUT=200
bin=$(cd "$1" && pwd)
out=${OUT:-/tmp}
log=$out/collections.txt
say "cores: $(nproc); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
t0=$EPOCHREALTIME
python3 "$bin/make_corpus.py" /tmp/c2 2048 2>&1 | tail -1 | tee -a "$log"
mkdir -p /tmp/c4 && cp -r /tmp/c2 /tmp/c4/a && cp -r /tmp/c2 /tmp/c4/b
python3 "$bin/gen_literals.py" /tmp/c2 /tmp/lits > /dev/null 2>&1
if [ ! -f /tmp/lits/lits_10000.txt ]; then
    # gen_literals.py writes 10,000 only when the corpus has strings enough: lits_1000 and random words then.
    python3 -c "
import random; r = random.Random(7)
out = open('/tmp/lits/lits_1000.txt').read().split('\n')[:-1]
while len(out) < 10000: out.append(''.join(r.choice('abcdefghijklmnopqrstuvwxyz0123456789_') for _ in range(r.randint(8, 24))))
open('/tmp/lits/lits_10000.txt', 'w').write('\n'.join(out) + '\n')"
    say "lits_10000.txt: lits_1000 and 9,000 random words"
fi
say "corpus: $(find /tmp/c4 -type f | wc -l) files, $(du -sb /tmp/c4 | cut -f1) bytes; lits: $(ls /tmp/lits | tr '\n' ' '); $(python3 -c "print(round($EPOCHREALTIME - $t0))") s"
bench() { # LABEL ARGS...
    local label=$1; shift
    say "=== $label: hitscope-bench $*"
    timeout 400 hitscope-bench -j 16 "$@" 2>&1 | grep -v "^  rejected\|^groups (" | tee -a "$log" | tail -40 > /dev/null
}
bench lits10k --engine gpu --repeat 2 --no-yara -r /tmp/lits/lits_10000.txt /tmp/c4
bench lits1k --engine gpu --repeat 2 --no-yara -r /tmp/lits/lits_1000.txt /tmp/c4
bench regexes --engine gpu --repeat 2 --no-yara -r "$bin/regexes.tsv" /tmp/c4
bench regexes-dfas --engine gpu --repeat 2 --no-yara --no-vectorscan --gpu-dfas -r "$bin/regexes.tsv" /tmp/c4
bench elastic --engine gpu --repeat 2 --no-vectorscan -r "$bin/elastic.yar" /tmp/c4
bench elastic-cpu --engine cpu --repeat 2 --no-vectorscan --no-yara -r "$bin/elastic.yar" /tmp/c4
bench mixed --engine gpu --repeat 2 --no-vectorscan -r "$bin/mixed_nomod.yar" /tmp/c4
bench mixed-dfas --engine gpu --repeat 2 --no-vectorscan --no-yara --gpu-dfas -r "$bin/mixed_nomod.yar" /tmp/c4
for set in elastic mixed_nomod; do
    measure "gpu_$set" hitscope-cli scan --engine gpu -s -w -r "$bin/$set.yar" /tmp/c4
    measure "cpu_$set" hitscope-cli scan --engine cpu -s -w -r "$bin/$set.yar" /tmp/c4
    measure "yara_$set" yara -p 16 -s -w -r "$bin/$set.yar" /tmp/c4
    sort "/tmp/gpu_$set.out" > /tmp/a; sort "/tmp/cpu_$set.out" > /tmp/b; sort "/tmp/yara_$set.out" > /tmp/c
    cmp -s /tmp/a /tmp/b && say "$set: GPU and CPU the same $(wc -l < /tmp/a) lines" || say "$set: GPU and CPU DIFFERENT"
    cmp -s /tmp/a /tmp/c && say "$set: GPU and yara the same" || say "$set: GPU and yara differ: $(diff /tmp/a /tmp/c | grep -c '^[<>]') lines"
done
for set in elastic mixed_nomod; do # where the host's screens ran, from the CLI's per-batch telemetry
    hitscope-cli scan --engine gpu -w --telemetry "/tmp/tel_$set.json" -r "$bin/$set.yar" /tmp/c4 > /dev/null 2>&1
    python3 -c "
import json
b = [json.loads(l) for l in open('/tmp/tel_$set.json') if '\"batch\"' in l]
hay = sum(x['haystack_bytes'] for x in b)
print('$set telemetry: %d batches, %.2f%% of 64-byte blocks marked, host screens %.0f ms, GPU %.0f ms, engine %.0f ms' % (
    len(b), 100 * 64 * sum(x['key_blocks'] for x in b) / hay, sum(x['host_screen_ms'] for x in b),
    sum(x['gpu_ms'] for x in b), sum(x['engine_ms'] for x in b)))" | tee -a "$log"
done
for run in 1 2; do
    measure "gpu_elastic_$run" hitscope-cli scan --engine gpu -w -r "$bin/elastic.yar" /tmp/c4
    measure "yara_elastic_$run" yara -p 16 -w -r "$bin/elastic.yar" /tmp/c4
done
