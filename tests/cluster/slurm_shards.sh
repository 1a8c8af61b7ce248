#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A sharded scan on a real Slurm: starts munge, slurmctld and slurmd on this machine (a single-node cluster of
# our own, in a temporary folder, on ports of its own), submits packaging/slurm/submit-shards.sh with 4 parts over
# a generated corpus, waits for the array and the merge, and checks that the merged records are a single-process
# scan's. Stops the daemons and removes the folder however it ends. Labelled `cluster` in CTest.
#   slurm_shards.sh HITSCOPE_CLI SOURCE_DIR
set -euo pipefail
cli=$(realpath "$1")
src=$(realpath "$2")
for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || {
        echo "FAIL: $tool is not installed (Debian: slurm-wlm, munge; packaging/setup.sh installs them)" >&2
        exit 1
    }
done
export PATH="$PATH:/usr/sbin"
work=$(mktemp -d /tmp/hitscope-slurm.XXXXXX)
export SLURM_CONF="$work/slurm.conf"
cleanup() {
    scontrol shutdown >/dev/null 2>&1 || true
    for pidfile in "$work/slurmctld.pid" "$work/slurmd.pid" "$work/munged.pid"; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    done
    rm -rf "$work"
}
trap cleanup EXIT

# munge, with a key and a socket of its own.
mkdir -p "$work/state" "$work/spool" "$work/log" "$work/out"
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 600 "$work/munge.key"
munged --force --key-file="$work/munge.key" --socket="$work/munge.sock" --pid-file="$work/munged.pid" \
    --log-file="$work/log/munged.log" --seed-file="$work/munge.seed"

# Ports of our own, so that a Slurm already on this machine is left alone.
base=$((20000 + ($$ % 20000)))
host=$(hostname -s)
user=$(id -un)
cat > "$SLURM_CONF" <<CONF
ClusterName=hitscope-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$work/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
    sinfo -h -o %t 2>/dev/null | grep -q idle && break
    sleep 1
done
sinfo -h -o %t | grep -q idle || { echo "FAIL: the Slurm node did not come up" >&2; tail -20 "$work"/log/*.log >&2; exit 1; }

# A corpus with strings to find, a FIFO (a file's problem) and a rule that is rejected.
python3 - "$work/corpus" <<'PY'
import os, random, sys
root = sys.argv[1]
rng = random.Random(20261205)
words = [b"alpha", b"beta", b"gamma", b"MZ\x90\x00", b"evil.example.com"]
for d in range(6):
    os.makedirs(f"{root}/d{d}/sub", exist_ok=True)
    for f in range(40):
        size = rng.choice([0, 10, 900, 5000, 70000, 300000])
        data = bytearray(rng.getrandbits(8) for _ in range(min(size, 4096))) * (size // 4096 + 1)
        data = data[:size]
        for _ in range(rng.randint(0, 5)):
            if size > 20:
                w = rng.choice(words)
                at = rng.randrange(0, max(1, size - len(w)))
                data[at:at + len(w)] = w
        sub = "sub/" if f % 3 == 0 else ""
        with open(f"{root}/d{d}/{sub}f{f}.bin", "wb") as out:
            out.write(data)
PY
mkfifo "$work/corpus/pipe"
printf 'alpha\nevil.example.com\n' > "$work/iocs.txt"
printf -- '-\tgamma\tgam+a\n-\tbroken\t(unclosed\n' > "$work/regexes.tsv"
cat > "$work/rules.yar" <<'YAR'
rule pe_head { strings: $mz = { 4D 5A 90 00 } condition: $mz }
rule two_words { strings: $a = "alpha" $b = "beta" condition: $a and $b }
YAR
scan=(-w --engine cpu -r "$work/iocs.txt" -r "$work/regexes.tsv" -r "$work/rules.yar" "$work/corpus")

set +e
"$cli" scan --json "${scan[@]}" > "$work/single.json"
single_rc=$?
set -e
[ "$single_rc" -eq 2 ] || { echo "FAIL: the single scan exited $single_rc, not 2 (the FIFO and the rejected rule)" >&2; exit 1; }

ids=$(cd "$work" && HITSCOPE_CLI="$cli" "$src/packaging/slurm/submit-shards.sh" 4 "$work/out" "${scan[@]}")
echo "submitted: $ids"
for _ in $(seq 1 300); do
    [ -z "$(squeue -h -j "${ids// /,}" 2>/dev/null)" ] && break
    sleep 1
done
[ -z "$(squeue -h -j "${ids// /,}" 2>/dev/null)" ] || {
    echo "FAIL: the jobs did not end in 300 s" >&2
    squeue >&2
    cat "$work"/out/*.log >&2 2>/dev/null
    tail -20 "$work/log/slurmd.log" "$work/log/slurmctld.log" >&2
    exit 1
}
[ -f "$work/out/merged.json" ] || { echo "FAIL: no merged output" >&2; cat "$work"/out/*.log >&2; tail -20 "$work/log/slurmd.log" >&2; exit 1; }
[ "$(cat "$work/out/merged.exit")" = 2 ] || { echo "FAIL: the merge exited $(cat "$work/out/merged.exit")" >&2; exit 1; }

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
root = work + "/corpus"
def load(path):
    return [line for line in open(path, "rb").read().split(b"\n") if line]
def canonical(lines):
    # Rejections, the files' records as written, problems in the walk's order, and the summary apart.
    rejections, files, problems, summary = [], [], [], None
    for line in lines:
        r = json.loads(line)
        t = r["type"]
        if t == "summary":
            summary = r
        elif t == "rejection":
            rejections.append(line)
        elif t == "problem":
            rel = r["file"][len(root) + 1:] if r["file"].startswith(root + "/") else r["file"]
            problems.append(([n.encode() for n in rel.split("/")], line))
        else:
            files.append(line)
    problems.sort()
    return rejections + files + [p[1] for p in problems], summary
single, s1 = canonical(load(work + "/single.json"))
merged_lines = load(work + "/out/merged.json")
merged, s2 = canonical(merged_lines)
assert merged_lines[:-1] == merged, "the merge did not write its records in the walk's order"
parts = [load(f"{work}/out/part-{k}-of-4.json") for k in range(1, 5)]
for k, p in enumerate(parts, 1):
    head = json.loads(p[0])
    assert head["type"] == "shard" and head["index"] == k and head["count"] == 4, f"part {k}: {head}"
    assert json.loads(p[-1])["type"] == "summary", f"part {k} has no summary"
if single != merged:
    for i, (a, b) in enumerate(zip(single, merged)):
        if a != b:
            print("first difference at record", i, a, b, file=sys.stderr)
            break
    print(len(single), "records in the single scan,", len(merged), "merged", file=sys.stderr)
    sys.exit(1)
for key in ("files", "bytes", "hits", "problems", "rejections", "cancelled", "engine", "exit_code"):
    assert s1[key] == s2[key], f"summary {key}: single {s1[key]}, merged {s2[key]}"
assert s1["files"] > 200 and s1["hits"] > 100, s1
print(f"PASS: {len(merged)} records and the summary ({s1['files']} files, {s1['hits']} hits) equal to one scan's,"
      f" from 4 Slurm array tasks")
PY
