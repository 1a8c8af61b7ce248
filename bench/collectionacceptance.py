#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Compare which rules of a public YARA collection yara (the oracle) and hitscope-cli accept.

Every .yar/.yara file is split into its top-level items (import and include lines, rules) by a small
YARA-aware scanner: // and /* */ comments, "strings" with escapes, /regexes/ (in YARA a '/' outside a
comment or a string always starts one) and {hex strings} (with their comments) are skipped, a rule starts
at 'rule' (with any 'private'/'global' in front) at brace depth 0 and ends at its matching '}'.

Each file is first compiled whole by both tools, against an empty data file:
    yara -w [-d NAME=x ...] FILE EMPTY
    hitscope-cli scan --engine cpu --json [-d NAME=x ...] -r FILE EMPTY     (no -w: it hides rejections)
yara accepts a file when it exits 0 and prints no "error" on stderr; hitscope's verdicts are its
"rejection" JSON records (the same as its stderr lines "hitscope-cli: rule rejected: FILE:LINE: rule
NAME: REASON"). When yara accepts the file and hitscope rejects nothing, every rule counts as accepted
by both. Otherwise rules are judged one by one: each gets a file of its own holding the file's import
lines, the earlier rules of the same file it names (transitively, verbatim) and the rule itself; only
that last rule is judged. A rule whose dependency yara refuses is not judged (counted as "skipped").
include lines are not followed (rules are judged without them; index files of includes hold no rule).

Classes, for each judged rule:
  (a)    yara accepts, hitscope rejects for a reason other than a module ("needs module", "entrypoint")
         -- the bugs that matter most; grouped by the reason with names, numbers and lines normalised;
  (a-dep) as (a), but only because a rule it depends on was rejected for a non-module reason;
  (b)    yara refuses, hitscope accepts -- grouped by yara's error message;
  module yara accepts, hitscope rejects only for a module (also through a dependency);
  both refuse / both accept: fine.

Output: OUT/NAME.txt (summary table and the grouped (a)/(b) lists with examples) and OUT/NAME.jsonl
(one record per judged rule). Work files go to a temporary folder under /tmp, removed at the end
(--keep keeps it). Collections whose licences forbid copying can be read from a git directory without
a work tree (--git-dir; files are extracted under the temporary folder only).

Usage:
  bench/collectionacceptance.py [--name NAME] [--git-dir GITDIR [--git-ref REF]] [INPUT ...]
                                [--hitscope PATH] [--yara PATH] [--jobs N] [--out DIR]
                                [--define NAME=VALUE ...] [--no-default-defines] [--keep]
  INPUT: .yar/.yara files or folders (searched recursively). With --git-dir, the .yar/.yara files of
  REF (default HEAD) are used, optionally only those under the INPUT paths (relative to the repository).
  By default both tools get -d filename=x -d filepath=x -d extension=x -d filetype=x -d owner=x.
Examples:
  bench/collectionacceptance.py --name signature-base --git-dir /work/.mirror/Neo23x0+signature-base/repo
  bench/collectionacceptance.py --name mine rules/ extra.yar
Always exits 0 unless the script itself fails.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_DEFINES = ["filename=x", "filepath=x", "extension=x", "filetype=x", "owner=x"]
MODULE_REASON = re.compile(r"needs module|entrypoint", re.I)
KEYWORDS = set("""all and any ascii at base64 base64wide condition contains endswith entrypoint false
filesize for fullword global icontains iendswith iequals import in include int16 int16be int32 int32be
int8 int8be iequals istartswith matches meta nocase none not of or private rule startswith strings them
true uint16 uint16be uint32 uint32be uint8 uint8be wide xor defined""".split())


# ---------------------------------------------------------------------------------------------- scanner

def mask(text):
    """Return text of the same length with comments, strings, regexes and hex strings blanked
    (newlines kept, string delimiters kept as '"' so that imports can be found)."""
    out = list(text)
    n = len(text)
    i = 0
    depth = 0

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j, n - 1)
            blank(i + 1, j)
            i = j + 1
        elif c == "/":
            j = i + 1
            while j < n and text[j] != "/" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            while j < n and text[j] in "is":
                j += 1
            blank(i, j)
            out[i] = "/"  # an opaque token
            i = j
        elif c == "{" and depth >= 1:
            # a hex string: up to the next '}', with comments inside
            j = i + 1
            while j < n and text[j] != "}":
                if text.startswith("/*", j):
                    k = text.find("*/", j + 2)
                    j = n if k < 0 else k + 2
                elif text.startswith("//", j):
                    k = text.find("\n", j)
                    j = n if k < 0 else k
                else:
                    j += 1
            j = min(j + 1, n)
            blank(i, j)
            out[i] = "#"  # an opaque token
            i = j
        else:
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(0, depth - 1)
            i += 1
    return "".join(out)


TOKEN = re.compile(r'\s+|[A-Za-z_][A-Za-z0-9_]*|"[^"\n]*"?|[$#@!][A-Za-z0-9_]*\*?|\.[A-Za-z_][A-Za-z0-9_]*|.', re.S)


def split_items(text):
    """Split a rule file's text into top-level items: dicts with kind ('import', 'include', 'rule',
    'junk'), start, end (offsets in text), line (1-based), and for rules name and refs (identifiers
    used in the body that may name other rules)."""
    m = mask(text)
    toks = [(mo.start(), mo.group()) for mo in TOKEN.finditer(m) if not mo.group().isspace()]
    items = []
    i = 0
    pending = None
    line_of = lambda off: text.count("\n", 0, off) + 1
    while i < len(toks):
        off, t = toks[i]
        if t in ("import", "include") and pending is None:
            if i + 1 < len(toks) and toks[i + 1][1].startswith('"'):
                s_off, s = toks[i + 1]
                end = s_off + len(s)
                items.append(dict(kind=t, start=off, end=end, line=line_of(off), value=text[s_off + 1:end - 1]))
                i += 2
                continue
            items.append(dict(kind="junk", start=off, end=off + len(t), line=line_of(off), value=t))
            i += 1
            continue
        if t in ("private", "global"):
            if pending is None:
                pending = off
            i += 1
            continue
        if t == "rule":
            start = pending if pending is not None else off
            pending = None
            name = toks[i + 1][1] if i + 1 < len(toks) else ""
            j = i + 1
            while j < len(toks) and toks[j][1] != "{":
                j += 1
            depth = 0
            refs = []
            k = j
            end = len(text)
            while k < len(toks):
                kt = toks[k][1]
                if kt == "{":
                    depth += 1
                elif kt == "}":
                    depth -= 1
                    if depth == 0:
                        end = toks[k][0] + 1
                        break
                elif re.match(r"[A-Za-z_]", kt) and kt not in KEYWORDS:
                    refs.append(kt)
                k += 1
            items.append(dict(kind="rule", start=start, end=end, line=line_of(start), name=name, refs=refs,
                              private="private" in m[start:off].split(), complete=k < len(toks)))
            i = k + 1
            continue
        pending = None
        items.append(dict(kind="junk", start=off, end=off + len(t), line=line_of(off), value=t))
        i += 1
    return items


# ---------------------------------------------------------------------------------------------- tools

class Tools:
    def __init__(self, args):
        self.yara = args.yara
        self.hitscope = args.hitscope
        self.defines = [] if args.no_default_defines else list(DEFAULT_DEFINES)
        self.defines += args.define
        self.empty = args.empty

    def _run(self, cmd):
        for attempt in range(20):
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
            except FileNotFoundError:
                time.sleep(3)  # the binary is being rebuilt
                continue
            except OSError as e:  # text file busy and the like
                time.sleep(3)
                continue
            except subprocess.TimeoutExpired:
                return None, b"", b"timeout"
            if p.returncode in (126, 127):
                time.sleep(3)
                continue
            return p.returncode, p.stdout, p.stderr
        raise RuntimeError("cannot run " + cmd[0])

    def yara_verdict(self, path):
        cmd = [self.yara, "-w"]
        for d in self.defines:
            cmd += ["-d", d]
        rc, out, err = self._run(cmd + [path, self.empty])
        err = err.decode("utf-8", "replace")
        errors = [l for l in err.splitlines() if "error" in l]
        ok = rc == 0 and not errors
        if rc is None:
            errors = ["timeout"]
        elif not ok and not errors:
            errors = ["exit %d: %s" % (rc, err.strip()[:200])]
        return ok, errors

    def hitscope_verdict(self, path):
        """(rejections: list of (rule name or '', line, reason), rc)."""
        cmd = [self.hitscope, "scan", "--engine", "cpu", "--json"]
        for d in self.defines:
            cmd += ["-d", d]
        rc, out, err = self._run(cmd + ["-r", path, self.empty])
        rej = []
        for l in out.decode("utf-8", "replace").splitlines():
            try:
                r = json.loads(l)
            except ValueError:
                continue
            if isinstance(r, dict) and r.get("type") == "rejection":
                rej.append((r.get("rule", ""), r.get("line", 0), r.get("reason", "")))
        if not rej:  # fall back to stderr lines
            for l in err.decode("utf-8", "replace").splitlines():
                mo = re.match(r"hitscope-cli: rule rejected: .*?:(\d+): (?:rule (\S+): )?(.*)", l)
                if mo:
                    rej.append((mo.group(2) or "", int(mo.group(1)), mo.group(3)))
        if rc is None:
            rej.append(("", 0, "timeout"))
        elif rc not in (0, 1, 2):
            rej.append(("", 0, "crash (exit %d): %s" % (rc, err.decode("utf-8", "replace").strip()[-200:])))
        elif rc == 1 and not rej:
            rej.append(("", 0, "exit 1: " + err.decode("utf-8", "replace").strip()[-200:]))
        return rej, rc


# ---------------------------------------------------------------------------------------------- per file

def deps_of(items, idx):
    """Indices of the earlier rules of the file that rule idx names, transitively, in file order."""
    by_name = {}
    for k in range(idx):
        if items[k]["kind"] == "rule":
            by_name[items[k]["name"]] = k
    seen = set()
    stack = [idx]
    while stack:
        k = stack.pop()
        for r in items[k]["refs"]:
            d = by_name.get(r)
            if d is not None and d < k and d not in seen and d != idx:
                seen.add(d)
                stack.append(d)
    return sorted(seen)


def process_file(tools, work, rel, data):
    text = data.decode("latin-1")
    items = split_items(text)
    rules = [k for k, it in enumerate(items) if it["kind"] == "rule"]
    fdir = tempfile.mkdtemp(dir=work)
    whole = os.path.join(fdir, os.path.basename(rel))
    with open(whole, "wb") as f:
        f.write(data)
    y_ok, y_err = tools.yara_verdict(whole)
    h_rej, _ = tools.hitscope_verdict(whole)
    results = {}
    todo = rules
    if y_ok:
        if not h_rej:
            todo = []
        elif all(r[0] for r in h_rej):
            names = {r[0] for r in h_rej}
            todo = [k for k in rules if items[k]["name"] in names]
        for k in rules:
            if k not in todo:
                results[k] = dict(yara=True, yara_err=[], hs=True, hs_reason=[], deps=[])
    imports = "".join('import "%s"\n' % it["value"] for it in items if it["kind"] == "import")
    for k in todo:
        it = items[k]
        deps = deps_of(items, k)
        body = imports + "".join(text[items[d]["start"]:items[d]["end"]] + "\n\n" for d in deps)
        lineno = body.count("\n") + 1
        body += text[it["start"]:it["end"]] + "\n"
        path = os.path.join(fdir, "r%d.yar" % k)
        with open(path, "w", encoding="latin-1") as f:
            f.write(body)
        yok, yerr = tools.yara_verdict(path)
        rej, _ = tools.hitscope_verdict(path)
        mine = [r[2] for r in rej if r[0] == it["name"] or r[0] == ""]
        results[k] = dict(yara=yok, yara_err=yerr, hs=not mine, hs_reason=mine, deps=deps)
    shutil.rmtree(fdir, ignore_errors=True)
    out = []
    for k in rules:
        it = items[k]
        r = results[k]
        r.update(file=rel, line=it["line"], name=it["name"], text=text[it["start"]:it["end"]],
                 deps=[items[d]["name"] for d in r["deps"]], dep_idx=r["deps"], idx=k)
        out.append(r)
    # classification needs the verdicts of the dependencies
    by_idx = {r["idx"]: r for r in out}
    for r in out:
        dep_rs = [by_idx[d] for d in r["dep_idx"]]
        if any(not d["yara"] for d in dep_rs):
            r["cls"] = "skipped"
        elif r["yara"] and r["hs"]:
            r["cls"] = "both-accept"
        elif not r["yara"] and not r["hs"]:
            r["cls"] = "both-refuse"
        elif not r["yara"]:
            r["cls"] = "b"
        else:
            own_module = r["hs_reason"] and all(MODULE_REASON.search(x) for x in r["hs_reason"])
            bad_deps = [d for d in dep_rs if not d["hs"]]
            if own_module:
                r["cls"] = "module"
            elif bad_deps and all(d["hs_reason"] and all(MODULE_REASON.search(x) for x in d["hs_reason"])
                                  for d in bad_deps):
                r["cls"] = "module"  # through a dependency
            elif bad_deps:
                r["cls"] = "a-dep"
            else:
                r["cls"] = "a"
        del r["dep_idx"], r["idx"]
    junk = [it for it in items if it["kind"] == "junk"]
    return out, dict(includes=sum(it["kind"] == "include" for it in items), junk=len(junk),
                     file_yara=y_ok, incomplete=sum(1 for k in rules if not items[k]["complete"]))


# ---------------------------------------------------------------------------------------------- report

def normalise(reason):
    s = re.sub(r'"[^"]*"', '"…"', reason)
    s = re.sub(r"'[^']*'", "'…'", s)
    s = re.sub(r"\$[A-Za-z0-9_]*\*?", "$X", s)
    s = re.sub(r"\b0x[0-9a-fA-F]+\b|\b\d+(\.\d+)?\b", "N", s)
    return s


def yara_message(e):
    e = re.sub(r'^error: rule "[^"]*" in .*?\(\d+\): ', "", e)
    e = re.sub(r"^.*?\(\d+\): error: ", "", e)
    return e


def trim(text, n=15):
    lines = text.splitlines()
    return "\n".join(lines[:n] + (["    [... %d more lines]" % (len(lines) - n)] if len(lines) > n else []))


def report(name, results, stats, nfiles, out_dir, elapsed):
    c = collections.Counter(r["cls"] for r in results)
    ya = sum(r["yara"] for r in results)
    ha = sum(r["hs"] for r in results)
    lines = []
    lines.append("Collection %s: %d files, %d rules (%.0f s)" % (name, nfiles, len(results), elapsed))
    lines.append("  include lines not followed: %d; unparsed top-level tokens: %d; unterminated rules: %d"
                 % (stats["includes"], stats["junk"], stats["incomplete"]))
    lines.append("")
    hdr = "%-22s %7s %7s %7s %5s %5s %5s %7s %7s %7s" % ("collection", "rules", "yara-ok", "hs-ok", "a", "a-dep",
                                                          "b", "module", "skipped", "both-no")
    lines.append(hdr)
    lines.append("%-22s %7d %7d %7d %5d %5d %5d %7d %7d %7d" % (name, len(results), ya, ha, c["a"], c["a-dep"], c["b"],
                                                               c["module"], c["skipped"], c["both-refuse"]))
    lines.append("")

    def groups(cls, key):
        g = collections.defaultdict(list)
        for r in results:
            if r["cls"] == cls:
                for k in sorted(set(key(r))):
                    g[k].append(r)
        return sorted(g.items(), key=lambda kv: (-len(kv[1]), kv[0]))

    sections = [
        ("a", "(a) yara accepts, hitscope rejects (not a module)",
         lambda r: [normalise(x) for x in r["hs_reason"] if not MODULE_REASON.search(x)] or ["?"]),
        ("a-dep", "(a-dep) yara accepts, hitscope rejects because a dependency was rejected",
         lambda r: [normalise(x) for x in r["hs_reason"]] or ["?"]),
        ("b", "(b) yara refuses, hitscope accepts (by yara's message)",
         lambda r: [normalise(yara_message(x)) for x in r["yara_err"][:1]] or ["?"]),
    ]
    for cls, title, key in sections:
        lines.append("=" * 100)
        lines.append("%s: %d rules" % (title, c[cls]))
        for reason, rs in groups(cls, key):
            lines.append("-" * 100)
            lines.append("[%d] %s" % (len(rs), reason))
            for r in rs[:3]:
                extra = "yara: %s" % "; ".join(r["yara_err"][:2]) if cls == "b" else \
                        "hitscope: %s" % "; ".join(r["hs_reason"][:2])
                lines.append("  * %s:%d rule %s%s -- %s" % (r["file"], r["line"], r["name"],
                                                          " (deps: %s)" % ", ".join(r["deps"]) if r["deps"] else "",
                                                          extra))
                lines.append("    " + trim(r["text"]).replace("\n", "\n    "))
        lines.append("")
    path = os.path.join(out_dir, name + ".txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out_dir, name + ".jsonl"), "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return lines[3:5], path


# ---------------------------------------------------------------------------------------------- main

def collect_inputs(args, work):
    """[(relative name, bytes)]"""
    files = []
    if args.git_dir:
        g = args.git_dir
        if os.path.isdir(os.path.join(g, ".git")):
            g = os.path.join(g, ".git")
        names = subprocess.run(["git", "--git-dir", g, "ls-tree", "-r", "-z", "--name-only", args.git_ref],
                               stdout=subprocess.PIPE, check=True).stdout.decode("utf-8", "replace").split("\0")
        for n in names:
            if not re.search(r"\.(yar|yara)$", n, re.I):
                continue
            if args.inputs and not any(n == p or n.startswith(p.rstrip("/") + "/") for p in args.inputs):
                continue
            data = subprocess.run(["git", "--git-dir", g, "show", "%s:%s" % (args.git_ref, n)],
                                  stdout=subprocess.PIPE, check=True).stdout
            files.append((n, data))
        return files
    for p in args.inputs:
        if os.path.isdir(p):
            for root, dirs, fs in os.walk(p):
                dirs.sort()
                for fn in sorted(fs):
                    if re.search(r"\.(yar|yara)$", fn, re.I):
                        full = os.path.join(root, fn)
                        with open(full, "rb") as f:
                            files.append((os.path.relpath(full, p), f.read()))
        else:
            with open(p, "rb") as f:
                files.append((p, f.read()))
    return files


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="*")
    ap.add_argument("--name", default=None)
    ap.add_argument("--git-dir")
    ap.add_argument("--git-ref", default="HEAD")
    ap.add_argument("--hitscope", default=os.path.join(here, "..", "build", "release", "cli", "hitscope-cli"))
    ap.add_argument("--yara", default=shutil.which("yara") or "/usr/bin/yara")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="/tmp/acceptance")
    ap.add_argument("--define", "-d", action="append", default=[])
    ap.add_argument("--no-default-defines", action="store_true")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if not args.inputs and not args.git_dir:
        ap.error("give INPUT files/folders or --git-dir")
    name = args.name or os.path.basename(os.path.normpath(args.git_dir or args.inputs[0]))
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="collectionacceptance-", dir="/tmp")
    args.empty = os.path.join(work, "empty_file")
    open(args.empty, "wb").close()
    t0 = time.time()
    try:
        files = collect_inputs(args, work)
        tools = Tools(args)
        results = []
        stats = collections.Counter()
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            futs = {ex.submit(process_file, tools, work, rel, data): rel for rel, data in files}
            done = 0
            for fu in concurrent.futures.as_completed(futs):
                rs, st = fu.result()
                results += rs
                stats.update(st)
                done += 1
                if done % 50 == 0 or done == len(files):
                    print("  %s: %d/%d files, %d rules, %.0f s" % (name, done, len(files), len(results),
                                                                  time.time() - t0), file=sys.stderr)
        results.sort(key=lambda r: (r["file"], r["line"]))
        table, path = report(name, results, stats, len(files), args.out, time.time() - t0)
        print("\n".join(table))
        print("report: " + path)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("work files kept in " + work, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
