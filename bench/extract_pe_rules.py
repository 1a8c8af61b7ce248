#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Gather the rules of a public YARA collection that import a module (default "pe") into one rule
file that yara compiles, for benchmarks.

Usage:
  bench/extract_pe_rules.py -o OUT.yar [--git-dir GITDIR [--git-ref REF]] [INPUT ...]
                            [--module NAME] [--exclude PREFIX ...] [--yara PATH]
                            [--define NAME=VALUE ...] [--no-default-defines] [--drop-externals]
  INPUT: .yar/.yara files or folders (searched recursively). With --git-dir, the .yar/.yara files of
  REF (default HEAD) of a git directory without a work tree are read (git ls-tree / git cat-file),
  optionally only those under the INPUT paths (relative to the repository).
  --exclude PREFIX: skip input paths starting with PREFIX (repeatable; e.g. deprecated/).
Examples:
  bench/extract_pe_rules.py --git-dir /work/.mirror/Neo23x0+signature-base/repo \\
      -o /work/perules/signature-base-pe.yar
  bench/extract_pe_rules.py --git-dir /work/.mirror/Yara-Rules+rules/repo --exclude deprecated/ \\
      -o /work/perules/yararules-pe.yar
Licences of public collections often forbid redistributing their rules: write OUT outside the
repository.

What it does:
 1. Each file is split into top-level items by a small YARA-aware scanner (the approach of
    bench/collectionacceptance.py): // and /* */ comments, "strings", /regexes/ (in YARA a '/' outside
    a comment or a string always starts one) and {hex strings} are blanked out, then import/include
    lines and rules ([private] [global] rule NAME [: tags] { ... } up to the matching brace) are found.
 2. Only files with an import line for --module are kept. Files with include lines (index files) or
    global rules (a global rule would constrain every other rule of the merged namespace) are dropped.
 3. Each file is compiled alone: yara -w FILE /dev/null. A file yara refuses is tried again with the
    externals -d filename=x -d filepath=x -d extension=x -d filetype=x -d owner=x (plus --define; none
    with --no-default-defines); a file that compiles only then "needs externals": it is kept (and
    OUT's header and the summary say which -d to pass) unless --drop-externals. Files yara still
    refuses (exit status != 0 or "error" on stderr) are dropped.
 4. The kept files are merged in path order into one namespace: the union of their import lines
    first, then each file's rules verbatim under a "// source: PATH" comment. A rule whose name an
    earlier file already used is renamed NAME__dupN (the smallest N free), along with every reference
    to it inside its own file (a rule can only refer to rules of its own file, no file having
    includes). Other text between rules (comments) is left out.
 5. The merged file is compiled by yara (with the -d needed); a file that breaks it is dropped and the
    merge is tried again.
 6. Summary (stdout and OUT's header): files read / importing the module / kept / dropped by reason,
    rules written (private ones), renamed rules, and how many rules' conditions use (directly, not
    through other rules) the module's fields at all, its functions (NAME(...) calls, listed by name),
    and the modules pe, dotnet, hash, math, elf, magic, cuckoo.
Always exits 0 unless the script itself fails or nothing is kept.
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

DEFAULT_DEFINES = ["filename=x", "filepath=x", "extension=x", "filetype=x", "owner=x"]
STAT_MODULES = ["pe", "dotnet", "hash", "math", "elf", "magic", "cuckoo", "time", "console"]


# ---------------------------------------------------------------------------------------------- scanner

def mask(text):
    """Text of the same length with comments, strings, regexes and hex strings blanked (newlines
    kept). String delimiters stay (so that import "x" is still seen, as '"  "'); a regex becomes '/'
    and a hex string '#' followed by blanks."""
    out = list(text)
    n = len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    i, depth = 0, 0
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
        elif c == "/" and nxt == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
        elif c == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            j = min(j, n - 1)
            blank(i + 1, j)
            j += 1
        elif c == "/":
            j = i + 1
            while j < n and text[j] not in "/\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            while j < n and text[j] in "is":
                j += 1
            blank(i, j)
            out[i] = "/"
        elif c == "{" and depth >= 1:
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
            out[i] = "#"
        else:
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(0, depth - 1)
            j = i + 1
        i = j
    return "".join(out)


TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*|"[^"\n]*"?|[$#@!][A-Za-z0-9_]*\*?|\.[A-Za-z_][A-Za-z0-9_]*|\S')


def parse(text):
    """Return (masked text, items). Items: dicts with kind 'import'/'include' (value) or 'rule'
    (start, end, name, name_pos, body (offset of '{'), cond (offset of 'condition' or None),
    modifiers, idents: [(offset, identifier)] inside the braces)."""
    m = mask(text)
    toks = [(mo.start(), mo.group()) for mo in TOKEN.finditer(m)]
    items = []
    i, pending, mods = 0, None, []
    while i < len(toks):
        off, t = toks[i]
        if t in ("import", "include") and pending is None and i + 1 < len(toks) and toks[i + 1][1][0] == '"':
            s_off, s = toks[i + 1]
            items.append(dict(kind=t, value=text[s_off + 1:s_off + len(s) - 1]))
            i += 2
            continue
        if t in ("private", "global"):
            pending = off if pending is None else pending
            mods.append(t)
            i += 1
            continue
        if t == "rule" and i + 1 < len(toks):
            start = off if pending is None else pending
            name_pos, name = toks[i + 1]
            j = i + 2
            while j < len(toks) and toks[j][1] != "{":
                j += 1
            depth, k, idents, cond = 0, j, [], None
            end = None
            while k < len(toks):
                kt = toks[k][1]
                if kt == "{":
                    depth += 1
                elif kt == "}":
                    depth -= 1
                    if depth == 0:
                        end = toks[k][0] + 1
                        break
                elif kt == "condition" and k + 1 < len(toks) and toks[k + 1][1] == ":":
                    cond = toks[k][0]
                elif kt[0].isalpha() or kt[0] == "_":
                    idents.append(toks[k])
                k += 1
            if end is None:
                items.append(dict(kind="junk"))
                break
            items.append(dict(kind="rule", start=start, end=end, name=name, name_pos=name_pos,
                              body=toks[j][0], cond=cond, modifiers=mods, idents=idents))
            pending, mods = None, []
            i = k + 1
            continue
        pending, mods = None, []
        i += 1
    return m, items


def module_use(cond_masked, module):
    """(uses module at all, set of functions called) for a masked condition text. A function of an
    array element is named with [] (e.g. signatures[].valid_on)."""
    uses = re.search(r"(?<![\w.$#@!])%s\s*\." % re.escape(module), cond_masked) is not None
    funcs = set()
    for mo in re.finditer(r"(?<![\w.$#@!])%s\s*((?:\.\s*[A-Za-z_]\w*\s*(?:\[[^\]]*\]\s*)?)*\.\s*[A-Za-z_]\w*)\s*\("
                          % re.escape(module), cond_masked):
        funcs.add(re.sub(r"\[[^\]]*\]", "[]", re.sub(r"\s+", "", mo.group(1)))[1:])
    return uses, funcs


# ---------------------------------------------------------------------------------------------- inputs

def read_inputs(args):
    """List of (path, text), sorted by path."""
    out = []
    if args.git_dir:
        ls = subprocess.run(["git", "--git-dir", args.git_dir, "ls-tree", "-r", "-z", args.git_ref],
                            capture_output=True, check=True).stdout.decode("utf-8", "replace")
        entries = []
        for e in ls.split("\0"):
            if not e:
                continue
            meta, path = e.split("\t", 1)
            mode, typ, sha = meta.split()
            if typ != "blob" or not re.search(r"\.yara?$", path, re.I):
                continue
            if args.inputs and not any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/")
                                       for p in args.inputs):
                continue
            entries.append((path, sha))
        if entries:
            proc = subprocess.Popen(["git", "--git-dir", args.git_dir, "cat-file", "--batch"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            for path, sha in entries:
                proc.stdin.write(sha.encode() + b"\n")
                proc.stdin.flush()
                header = proc.stdout.readline().split()
                size = int(header[2])
                data = proc.stdout.read(size)
                proc.stdout.read(1)
                out.append((path, data.decode("utf-8", "replace")))
            proc.stdin.close()
            proc.wait()
    else:
        for inp in args.inputs:
            if os.path.isdir(inp):
                for dp, dn, fn in os.walk(inp):
                    for f in fn:
                        if re.search(r"\.yara?$", f, re.I):
                            p = os.path.join(dp, f)
                            with open(p, encoding="utf-8", errors="replace") as fh:
                                out.append((p, fh.read()))
            else:
                with open(inp, encoding="utf-8", errors="replace") as fh:
                    out.append((inp, fh.read()))
    out = [(p, t) for p, t in out if not any(p.startswith(x) for x in args.exclude)]
    out.sort()
    return out


# ---------------------------------------------------------------------------------------------- yara

def yara_compiles(yara, path, defines):
    """(ok, first error line)"""
    cmd = [yara, "-w"]
    for d in defines:
        cmd += ["-d", d]
    cmd += [path, "/dev/null"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=300)
    except subprocess.TimeoutExpired:
        return False, "timeout"
    err = r.stderr.strip()
    ok = r.returncode == 0 and "error" not in err.lower()
    return ok, ("" if ok else (err.splitlines() or ["exit %d" % r.returncode])[0])


def short_error(err):
    """yara's error line without the work file's name and line."""
    err = re.sub(r"^.*?(?=error)", "", err)
    return re.sub(r'(rule "[^"]*" )?in \S+\(\d+\): ', "", err)[:120]


# ---------------------------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--git-dir")
    ap.add_argument("--git-ref", default="HEAD")
    ap.add_argument("--module", default="pe")
    ap.add_argument("--exclude", action="append", default=[])
    ap.add_argument("--yara", default="yara")
    ap.add_argument("--define", action="append", default=[])
    ap.add_argument("--no-default-defines", action="store_true")
    ap.add_argument("--drop-externals", action="store_true")
    args = ap.parse_args()
    if not args.git_dir and not args.inputs:
        ap.error("give INPUT paths or --git-dir")
    defines = ([] if args.no_default_defines else DEFAULT_DEFINES) + args.define
    yara = shutil.which(args.yara) or args.yara

    files = read_inputs(args)
    dropped = collections.defaultdict(list)   # reason -> [path]
    kept = []                                  # dicts: path, text, masked, items, needs_defines
    n_module = 0
    work = tempfile.mkdtemp(prefix="extract_pe_rules.")
    try:
        for idx, (path, text) in enumerate(files):
            masked, items = parse(text)
            imports = [it["value"] for it in items if it["kind"] == "import"]
            if args.module not in imports:
                continue
            n_module += 1
            if any(it["kind"] == "include" for it in items):
                dropped["has include lines"].append(path)
                continue
            if any(it["kind"] == "rule" and "global" in it["modifiers"] for it in items):
                dropped["has global rules"].append(path)
                continue
            if not any(it["kind"] == "rule" for it in items):
                dropped["no rule"].append(path)
                continue
            tmp = os.path.join(work, "f%05d.yar" % idx)
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            ok, err = yara_compiles(yara, tmp, [])
            needs = False
            if not ok and defines:
                ok2, _ = yara_compiles(yara, tmp, defines)
                if ok2:
                    ok, needs = True, True
            if not ok:
                dropped["yara refuses: " + short_error(err)].append(path)
                continue
            if needs and args.drop_externals:
                dropped["needs externals (--drop-externals)"].append(path)
                continue
            kept.append(dict(path=path, text=text, masked=masked, items=items, needs_defines=needs))

        # merge, dropping files that break the merged compile
        while True:
            body, line_map, renamed, stats = merge(kept, args.module)
            need_d = any(k["needs_defines"] for k in kept)
            header = summary_lines(args, files, n_module, kept, dropped, stats, renamed, need_d, defines)
            text = "".join("// %s\n" % h if h else "//\n" for h in header) + "\n" + body
            tmp = os.path.join(work, "merged.yar")
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            ok, err = yara_compiles(yara, tmp, defines if need_d else [])
            if ok or not kept:
                break
            mo = re.search(r"\((\d+)\)", err)
            culprit = None
            if mo:
                line = int(mo.group(1)) - len(header) - 1
                for first, k in reversed(line_map):
                    if line >= first:
                        culprit = k
                        break
            if culprit is None:
                sys.exit("extract_pe_rules: merged file refused and the culprit is unknown: " + err)
            dropped["breaks the merged file: " + short_error(err)].append(culprit["path"])
            kept.remove(culprit)
        if not kept:
            sys.exit("extract_pe_rules: no file kept")
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        print("\n".join(header))
        print("written: %s" % args.out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def merge(kept, module):
    used = set()
    renamed = []
    imports = []
    for k in kept:
        for it in k["items"]:
            if it["kind"] == "import" and it["value"] not in imports:
                imports.append(it["value"])
    imports.sort(key=lambda v: (v != module, v))
    parts = ['import "%s"\n' % v for v in imports]
    line = len(imports) + 1                    # 1-based line of the next text
    line_map = []                              # (first line, file)
    stats = collections.Counter()
    funcs = collections.Counter()
    for k in kept:
        rules = [it for it in k["items"] if it["kind"] == "rule"]
        rename = {}
        for r in rules:
            if r["name"] in used:
                n = 2
                while "%s__dup%d" % (r["name"], n) in used:
                    n += 1
                rename[r["name"]] = "%s__dup%d" % (r["name"], n)
                renamed.append((k["path"], r["name"], rename[r["name"]]))
            used.add(rename.get(r["name"], r["name"]))
        chunk = ["\n// source: %s\n" % k["path"]]
        for r in rules:
            text = k["text"][r["start"]:r["end"]]
            if rename:
                edits = [(o, t) for o, t in [(r["name_pos"], r["name"])] + r["idents"] if t in rename]
                for off, name in sorted(edits, reverse=True):
                    a = off - r["start"]
                    text = text[:a] + rename[name] + text[a + len(name):]
            chunk.append(text + "\n\n")
            stats["rules"] += 1
            if "private" in r["modifiers"]:
                stats["private"] += 1
            cond = k["masked"][r["cond"]:r["end"]] if r["cond"] is not None else ""
            for mod in STAT_MODULES:
                u, f = module_use(cond, mod)
                if u:
                    stats["use:" + mod] += 1
                if f:
                    stats["func:" + mod] += 1
                if mod == module:
                    for fn in f:
                        funcs[fn] += 1
            if not module_use(cond, module)[0]:
                stats["no-module-use"] += 1
        chunk_text = "".join(chunk)
        line_map.append((line, k))
        line += chunk_text.count("\n")
        parts.append(chunk_text)
    stats["funcs"] = funcs
    return "".join(parts), line_map, renamed, stats


def summary_lines(args, files, n_module, kept, dropped, stats, renamed, need_d, defines):
    src = args.git_dir or " ".join(args.inputs)
    ref = ""
    if args.git_dir:
        r = subprocess.run(["git", "--git-dir", args.git_dir, "log", "-1", "--format=%H %cs", args.git_ref],
                           capture_output=True, text=True)
        ref = " at %s" % r.stdout.strip()
    mod = args.module
    h = ["generated by bench/extract_pe_rules.py from %s%s" % (src, ref),
         "(rules of that collection: see its licence; do not redistribute or commit this file)",
         "inputs: %s%s" % (" ".join(args.inputs) or "all", (" excluding " + " ".join(args.exclude)) if args.exclude else ""),
         "files read: %d; importing \"%s\": %d; kept: %d; dropped: %d"
         % (len(files), mod, n_module, len(kept), sum(len(v) for v in dropped.values()))]
    for reason in sorted(dropped):
        h.append("  dropped (%s): %d: %s" % (reason, len(dropped[reason]), ", ".join(dropped[reason])))
    nd = [k["path"] for k in kept if k["needs_defines"]]
    if need_d:
        h.append("NEEDS EXTERNALS: compile with %s (files: %s)"
                 % (" ".join("-d " + d for d in defines), ", ".join(nd)))
    else:
        h.append("needs no external variable")
    h.append("rules: %d (private: %d); renamed as duplicates: %d%s"
             % (stats["rules"], stats["private"], len(renamed),
                (" (" + ", ".join("%s->%s" % (a, b) for _, a, b in renamed[:10])
                 + (", ..." if len(renamed) > 10 else "") + ")") if renamed else ""))
    h.append("rules whose condition uses (directly) a module: " +
             ", ".join("%s %d" % (m, stats["use:" + m]) for m in STAT_MODULES if stats["use:" + m]))
    h.append("rules whose condition calls a function of a module: " +
             (", ".join("%s %d" % (m, stats["func:" + m]) for m in STAT_MODULES if stats["func:" + m]) or "none"))
    h.append("rules not using %s directly: %d" % (mod, stats["no-module-use"]))
    funcs = stats["funcs"]
    h.append("%s functions (rules calling each): %s" % (mod, ", ".join(
        "%s %d" % (f, n) for f, n in sorted(funcs.items(), key=lambda x: (-x[1], x[0]))) or "none"))
    return h


if __name__ == "__main__":
    main()
