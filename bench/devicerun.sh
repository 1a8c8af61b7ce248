# SPDX-License-Identifier: GPL-3.0-or-later
# What the device machine's benchmark scripts share (sourced: collections_h200.sh, pe_h200.sh, devices_h200.sh).
# say: a line on stdout and, where the script set `log`, in that file.
say() {
    if [ -n "${log:-}" ]; then echo "$@" | tee -a "$log"; else echo "$@"; fi
}
# measure NAME COMMAND...: the seconds, exit status and lines of one whole command (its output in /tmp/NAME.out,
# its errors in /tmp/NAME.err), killed after MEASURE_TIMEOUT seconds (default 300).
measure() {
    local name=$1
    shift
    local t0=$EPOCHREALTIME
    timeout "${MEASURE_TIMEOUT:-300}" "$@" > "/tmp/$name.out" 2> "/tmp/$name.err"
    local rc=$? t1=$EPOCHREALTIME
    say "$name: $(python3 -c "print(round($t1 - $t0, 3))") s, exit $rc, $(wc -l < "/tmp/$name.out") lines"
}
