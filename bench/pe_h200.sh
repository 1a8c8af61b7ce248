#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# pe-module rule collections on the device machine, hitscope-cli (CPU engine, -j 16) beside yara -p 16, whole
# commands, page cache warm. Packed with ../shared/device/pack-runtime.sh into .pack/gpu together with
# bench/make_pe_corpus.py, a sample folder of distinct PE files (pesample/; the corpus is those files and copies
# with an overlay appended, made there) and the rule files (never committed: their licences forbid it). Run as
#   bash .pack/gpu/on-gpu.sh bash bench/pe_h200.sh .pack/gpu/bin
set -u
. "$(dirname "$0")/devicerun.sh"
bin=$(cd "$1" && pwd)
out=${OUT:-/tmp}
size=${SIZE:-4G}
defines="-d filename=x -d filepath=x -d extension=x -d filetype=x -d owner=x"
echo "cores: $(nproc)"
python3 "$bin/make_pe_corpus.py" /tmp/pecorpus "$size" --no-default-roots --root "$bin/pesample" \
    --manifest /tmp/pecorpus.tsv | tail -3
t0=$EPOCHREALTIME; find /tmp/pecorpus -type f -exec cat {} + > /dev/null; t1=$EPOCHREALTIME
echo "read ceiling (cat, one thread): $(python3 -c "print(round($t1 - $t0, 3))") s"
measure yara_false yara -p 16 -w -r "$bin/false.yar" /tmp/pecorpus
measure yara_ispe yara -p 16 -w -r "$bin/ispe.yar" /tmp/pecorpus
measure hs_ispe hitscope-cli scan --engine cpu -j 16 -w "$bin/ispe.yar" /tmp/pecorpus
for set in reversinglabs-pe signature-base-pe yararules-pe; do
    d=""
    [ "$set" = signature-base-pe ] && d=$defines
    for run in 1 2; do
        measure "yara_${set}_$run" yara -p 16 -w $d -r "$bin/$set.yar" /tmp/pecorpus
        measure "hs_${set}_$run" hitscope-cli scan --engine cpu -j 16 -w $d "$bin/$set.yar" /tmp/pecorpus
    done
    sort "/tmp/yara_${set}_1.out" > /tmp/a; sort "/tmp/hs_${set}_1.out" > /tmp/b
    if cmp -s /tmp/a /tmp/b; then echo "$set: the same $(wc -l < /tmp/a) lines"; else echo "$set: DIFFERENT"; diff /tmp/a /tmp/b | head -5; fi
done
cp /tmp/hs_yararules-pe_1.err "$out/hs_yararules_err.txt" 2>/dev/null
