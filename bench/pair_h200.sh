#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Paired before/after on the device machine: the same whole commands with two builds, in turns (before, after,
# before, ...), on one page-cached corpus; the median of each build's times, the median of the pairs' ratios,
# and whether both builds printed the same bytes. Packed as collections_h200.sh is, the other build's
# hitscope-cli (and hitscope-cli-gpu.so) in .pack/gpu/before:
#   PAIRS=5 bash .pack/gpu/on-gpu.sh bash bench/pair_h200.sh .pack/gpu/before .pack/gpu/bin
set -u
. "$(dirname "$0")/devicerun.sh"
MEASURE_TIMEOUT=200
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
pairs=${PAIRS:-5}
out=${OUT:-/tmp}
log=$out/pair.txt
say "cores: $(nproc); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
python3 "$after/make_corpus.py" /tmp/p2 2048 2>&1 | tail -1 | tee -a "$log"
say "corpus: $(find /tmp/p2 -type f | wc -l) files, $(du -sb /tmp/p2 | cut -f1) bytes"
find /tmp/p2 -type f -print0 | xargs -0 cat > /dev/null # the page cache warm
pair() { # LABEL ARGS... (of hitscope-cli scan)
    local label=$1; shift
    say "=== $label: hitscope-cli scan $*"
    local i
    : > /tmp/pair.times
    for i in $(seq 1 "$pairs"); do
        for side in before after; do
            local bin=$before
            [ $side = after ] && bin=$after
            local t0=$EPOCHREALTIME
            timeout "$MEASURE_TIMEOUT" "$bin/hitscope-cli" scan "$@" > "/tmp/$side.out" 2> "/tmp/$side.err"
            local rc=$? t1=$EPOCHREALTIME
            echo "$side $i $(python3 -c "print($t1 - $t0)") $rc" >> /tmp/pair.times
        done
        cmp -s /tmp/before.out /tmp/after.out || say "pair $i: the outputs DIFFER ($(wc -l < /tmp/before.out) and $(wc -l < /tmp/after.out) lines)"
    done
    python3 - "$label" <<'PY' | tee -a "$log"
import statistics, sys
rows = [l.split() for l in open('/tmp/pair.times')]
t = {s: [float(r[2]) for r in rows if r[0] == s] for s in ('before', 'after')}
rc = sorted({r[3] for r in rows})
ratios = [a / b for a, b in zip(t['after'], t['before'])]
print(f"{sys.argv[1]}: before {statistics.median(t['before']):.3f} s, after {statistics.median(t['after']):.3f} s, "
      f"after/before median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}), "
      f"{len(ratios)} pairs, exit codes {','.join(rc)}")
PY
    say "$label: $(wc -l < /tmp/after.out) lines, $(wc -c < /tmp/after.out) bytes"
}
pair "elastic -c" -c --engine gpu -r "$after/elastic.yar" /tmp/p2
pair "mixed -s" -s --engine gpu -r "$after/mixed_nomod.yar" /tmp/p2
pair "regexes" --engine gpu -r "$after/regexes.tsv" /tmp/p2
