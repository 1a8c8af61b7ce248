#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run YARA 4.2.3's own rule test cases through yara (the oracle) and hitscope-cli, report disagreements.

The cases are extracted at run time from YARA's tests/test-rules.c (the assert_* calls of tests/util.h),
with the macros of tests/util.h, the byte arrays of tests/blob.h and the files of tests/data taken from a
git directory of VirusTotal/yara (no work tree needed). Nothing is copied into this repository: every case
is written to a temporary folder.

Each case is a rule file and a data file, reproducing what tests/util.c feeds libyara:
  - assert_true_rule / assert_false_rule / assert_match_count / *_regexp: the data string up to its first
    NUL (strlen); NULL scans "dummy" (5 bytes), as matches_blob() does;
  - *_rule_blob: sizeof(blob): a byte array as it is, a string literal (or a char array initialised
    from one) with its terminating NUL;
  - *_rule_file: the file of tests/data;
  - assert_error / assert_warning / assert_no_warnings / assert_regexp_syntax_error: compile-only, the rule
    is run on "dummy";
  - regexp asserts become "rule test { strings: $a = /RE/ condition: $a }", as util.h builds them.
Both tools get the same -d for the externals util.c's compile_rule() defines (var_zero=0, var_one=1,
var_true=true, var_false=false) and the same rule and data paths; their accept/reject verdicts and their
sorted stdout lines (RULE PATH and -s lines) are compared. yara's own result is also checked against the
test's expectation.

Usage: bench/yaraconformance.py [TEST_RULES_C] [--engine cpu|gpu] [--hitscope PATH] [--filter SUBSTR]
                               [--jobs N] [--out DIR] [--verbose] [--yara-only] [--list]
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

ASSERTS = {
    # name: (number of args, kind)
    "assert_true_rule": (2, "string"),
    "assert_false_rule": (2, "string"),
    "assert_true_rule_blob": (2, "blob"),
    "assert_false_rule_blob": (2, "blob"),
    "assert_true_rule_blob_size": (3, "blobsize"),
    "assert_false_rule_blob_size": (3, "blobsize"),
    "assert_true_rule_file": (2, "file"),
    "assert_false_rule_file": (2, "file"),
    "assert_true_rule_module_data_file": (2, "module_data"),
    "assert_match_count": (3, "string"),
    "assert_error": (2, "compile"),
    "assert_warning": (1, "compile"),
    "assert_warnings": (2, "compile"),
    "assert_no_warnings": (1, "compile"),
    "assert_true_regexp": (3, "regexp"),
    "assert_false_regexp": (2, "regexp"),
    "assert_regexp_syntax_error": (1, "regexp_compile"),
}

EXTERNALS = [("var_zero", "0"), ("var_one", "1"), ("var_true", "true"), ("var_false", "false")]
DUMMY = b"dummy"


# ----------------------------------------------------------------------------------------------------------
# C source handling
# ----------------------------------------------------------------------------------------------------------

class Tok:
    __slots__ = ("kind", "val", "line", "guards")

    def __init__(self, kind, val, line, guards=()):
        self.kind = kind      # 'str', 'chr', 'id', 'num', 'pp', 'p'
        self.val = val        # bytes for str, text otherwise
        self.line = line
        self.guards = guards  # tuple of enclosing #if conditions

    def __repr__(self):
        return "Tok(%s,%r,%d)" % (self.kind, self.val, self.line)


class CError(Exception):
    pass


def splice(text):
    """Translation phase 2: remove backslash-newline, keeping the original line of every character."""
    out, lines = [], []
    line, i, n = 1, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if c == "\\" and text.startswith("\r\n", i + 1):
            i += 3
            line += 1
            continue
        out.append(c)
        lines.append(line)
        if c == "\n":
            line += 1
        i += 1
    return "".join(out), lines


SIMPLE_ESC = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34,
              "?": 63, "e": 27}
HEX = "0123456789abcdefABCDEF"


def c_unescape(body):
    """C string literal body (between the quotes) to bytes (source is read as latin-1)."""
    out = bytearray()
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out.append(ord(c) & 0xFF)
            i += 1
            continue
        i += 1
        if i >= n:
            raise CError("dangling backslash")
        e = body[i]
        if e in SIMPLE_ESC:
            out.append(SIMPLE_ESC[e])
            i += 1
        elif e == "x":
            j = i + 1
            while j < n and body[j] in HEX:
                j += 1
            if j == i + 1:
                raise CError("\\x without digits")
            v = int(body[i + 1:j], 16)
            if v > 0xFF:
                raise CError("hex escape out of range")
            out.append(v)
            i = j
        elif e in "01234567":
            j = i
            while j < n and j < i + 3 and body[j] in "01234567":
                j += 1
            out.append(int(body[i:j], 8) & 0xFF)
            i = j
        else:
            out.append(ord(e) & 0xFF)  # GCC: an unknown escape is the character itself (with a warning)
            i += 1
    return bytes(out)


ID_START = re.compile(r"[A-Za-z_]")
ID_RE = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
NUM_RE = re.compile(r"[0-9][A-Za-z0-9_.]*|\.[0-9][A-Za-z0-9_.]*")


def tokenize(text, lines=None, track_pp=True):
    """Tokens of spliced C text; preprocessor lines become 'pp' tokens; #if nesting is tracked."""
    toks = []
    guards = []
    i, n = 0, len(text)
    at_line_start = True

    def ln(k):
        return lines[k] if lines is not None and k < len(lines) else 0

    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise CError("unterminated comment at line %d" % ln(i))
            i = j + 2
            continue
        if c == "#" and at_line_start:
            # a directive runs to the end of the (spliced) line; comments in it are dropped
            j = text.find("\n", i)
            j = n if j < 0 else j
            d = re.sub(r"/\*.*?\*/", " ", text[i + 1:j])
            d = re.sub(r"//.*", "", d).strip()
            if track_pp:
                m = re.match(r"(\w+)\s*(.*)", d, re.S)
                word, rest = (m.group(1), m.group(2).strip()) if m else ("", "")
                if word in ("if", "ifdef", "ifndef"):
                    cond = {"ifdef": "defined(%s)" % rest, "ifndef": "!defined(%s)" % rest}.get(word, rest)
                    guards.append(cond)
                elif word in ("elif",):
                    if guards:
                        guards[-1] = "!(%s) && %s" % (guards[-1], rest)
                elif word == "else":
                    if guards:
                        guards[-1] = "!(%s)" % guards[-1]
                elif word == "endif":
                    if guards:
                        guards.pop()
            toks.append(Tok("pp", d, ln(i), tuple(guards)))
            i = j
            continue
        at_line_start = False
        m = ID_RE.match(text, i)
        if m:
            word = m.group(0)
            j = m.end()
            # string / char literal prefixes
            if word in ("L", "u", "U", "u8") and j < n and text[j] in "\"'":
                raise CError("wide literal at line %d" % ln(i))
            toks.append(Tok("id", word, ln(i), tuple(guards)))
            i = j
            continue
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    raise CError("newline in literal at line %d" % ln(i))
                j += 1
            if j >= n:
                raise CError("unterminated literal at line %d" % ln(i))
            body = text[i + 1:j]
            if c == '"':
                toks.append(Tok("str", c_unescape(body), ln(i), tuple(guards)))
            else:
                toks.append(Tok("chr", body, ln(i), tuple(guards)))
            i = j + 1
            continue
        m = NUM_RE.match(text, i)
        if m:
            toks.append(Tok("num", m.group(0), ln(i), tuple(guards)))
            i = m.end()
            continue
        for p in ("...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||"):
            if text.startswith(p, i):
                toks.append(Tok("p", p, ln(i), tuple(guards)))
                i += len(p)
                break
        else:
            toks.append(Tok("p", c, ln(i), tuple(guards)))
            i += 1
    return toks


def parse_int(s):
    s = s.rstrip("uUlL")
    if s.lower().startswith("0x"):
        return int(s, 16)
    if len(s) > 1 and s.startswith("0"):
        return int(s, 8)
    return int(s)


class Value:
    """An evaluated argument: NULL, bytes (from a literal, array or pointer), a name, or a number."""
    __slots__ = ("kind", "data", "sized")

    def __init__(self, kind, data=None, sized=None):
        self.kind = kind    # 'null', 'bytes', 'name', 'num'
        self.data = data
        self.sized = sized  # for bytes: what sizeof() gives (None: a pointer, sizeof is meaningless)


class Extractor:
    def __init__(self, source_text, util_h_text, blob_h_text):
        self.macros = {}       # object-like macros: name -> tokens
        self.fmacros = set()   # function-like macros (not expanded)
        self.globals = {}      # name -> Value (blob.h arrays)
        self.failures = collections.Counter()
        self.failure_examples = {}
        self.cases = []
        for t in (util_h_text, blob_h_text):
            self._scan_defines(t)
        self._scan_blobs(blob_h_text)
        self.text, self.lines = splice(source_text)
        self.toks = tokenize(self.text, self.lines)

    # -- headers ---------------------------------------------------------------------------------------
    def _scan_defines(self, text):
        sp, _ = splice(text)
        for t in tokenize(sp, None):
            if t.kind == "pp":
                self._define(t.val)

    def _define(self, d):
        m = re.match(r"define\s+([A-Za-z_]\w*)(\(?)(.*)", d, re.S)
        if not m:
            return
        name, paren, body = m.group(1), m.group(2), m.group(3)
        if paren:
            self.fmacros.add(name)
            return
        try:
            self.macros[name] = tokenize(body, None, track_pp=False)
        except CError:
            pass

    def _scan_blobs(self, text):
        sp, _ = splice(text)
        toks = tokenize(sp, None)
        for k, t in enumerate(toks):
            if t.kind == "id" and k + 4 < len(toks) and toks[k + 1].val == "[" and toks[k + 2].val == "]" \
                    and toks[k + 3].val == "=":
                try:
                    v, _ = self._initializer(toks, k + 4)
                    self.globals[t.val] = v
                except CError:
                    pass

    # -- expressions ------------------------------------------------------------------------------------
    def _expand(self, toks, depth=0):
        if depth > 20:
            raise CError("macro recursion")
        out = []
        for t in toks:
            if t.kind == "id" and t.val in self.macros:
                out.extend(self._expand(self.macros[t.val], depth + 1))
            else:
                out.append(t)
        return out

    def _initializer(self, toks, k):
        """Array initializer at toks[k]: a brace list of integers or a string expression; returns (Value,
        index after the terminating ';')."""
        end = k
        depth = 0
        while end < len(toks):
            v = toks[end].val
            if v in ("{", "("):
                depth += 1
            elif v in ("}", ")"):
                depth -= 1
            elif v == ";" and depth == 0:
                break
            end += 1
        part = toks[k:end]
        if part and part[0].val == "{":
            out = bytearray()
            for t in part[1:-1]:
                if t.kind == "num":
                    out.append(parse_int(t.val) & 0xFF)
                elif t.kind == "chr":
                    out.extend(c_unescape(t.val)[:1])
                elif t.val in (",",):
                    pass
                else:
                    raise CError("unsupported array initializer element %r" % t.val)
            return Value("bytes", bytes(out), len(out)), end + 1
        v = self.eval(part, {})
        if v.kind != "bytes":
            raise CError("array initializer is not a string")
        return Value("bytes", v.data, len(v.data) + 1), end + 1

    def eval(self, toks, local):
        toks = self._expand(toks)
        # strip casts like (uint8_t*) and redundant parentheses
        while len(toks) >= 3 and toks[0].val == "(" and toks[1].kind == "id" and \
                toks[1].val in ("uint8_t", "char", "unsigned", "const", "void"):
            j = 1
            while j < len(toks) and toks[j].val != ")":
                j += 1
            toks = toks[j + 1:]
        if not toks:
            raise CError("empty argument")
        if len(toks) == 1:
            t = toks[0]
            if t.kind == "id" and t.val == "NULL":
                return Value("null")
            if t.kind == "num":
                return Value("num", parse_int(t.val))
            if t.kind == "id":
                if t.val in local:
                    v = local[t.val]
                    if v is None:
                        raise CError("local buffer '%s' is not a literal" % t.val)
                    return v
                if t.val in self.globals:
                    return self.globals[t.val]
                if t.val.startswith("ERROR_"):
                    return Value("name", t.val)
                raise CError("unknown identifier '%s'" % t.val)
        if all(t.kind == "str" for t in toks):
            data = b"".join(t.val for t in toks)
            return Value("bytes", data, len(data) + 1)
        if len(toks) == 4 and toks[0].val == "sizeof" and toks[1].val == "(" and toks[3].val == ")":
            v = self.eval([toks[2]], local)
            if v.kind != "bytes" or v.sized is None:
                raise CError("sizeof of a pointer")
            return Value("num", v.sized)
        bad = next((t for t in toks if t.kind != "str"), toks[0])
        if bad.kind == "id" and bad.val in self.fmacros:
            raise CError("function-like macro %s" % bad.val)
        raise CError("unsupported expression (%s %r)" % (bad.kind, bad.val))

    @staticmethod
    def _split_args(toks, k):
        """toks[k] is '('; returns (list of argument token lists, index after ')')."""
        args, cur, depth = [], [], 0
        j = k + 1
        while j < len(toks):
            t = toks[j]
            if t.val in ("(", "[", "{"):
                depth += 1
            elif t.val in (")", "]", "}"):
                if depth == 0:
                    args.append(cur)
                    return args, j + 1
                depth -= 1
            elif t.val == "," and depth == 0:
                args.append(cur)
                cur = []
                j += 1
                continue
            cur.append(t)
            j += 1
        raise CError("unterminated call")

    def _fail(self, reason, func, line):
        self.failures[reason] += 1
        self.failure_examples.setdefault(reason, "%s:%d" % (func, line))

    def _snprintf(self, args, local, top_srcdir):
        fmt = self.eval(args[2], local)
        if fmt.kind != "bytes":
            raise CError("snprintf format is not a literal")
        vals = []
        for a in args[3:]:
            if len(a) == 1 and a[0].kind == "id" and a[0].val == "top_srcdir":
                vals.append(Value("bytes", top_srcdir.encode(), None))
            else:
                vals.append(self.eval(a, local))
        out = bytearray()
        f = fmt.data
        i = 0
        while i < len(f):
            if f[i:i + 1] != b"%":
                out.append(f[i])
                i += 1
                continue
            m = re.match(rb"%([-0-9]*)(z|l|ll|h)?([sdiuxX%])", f[i:])
            if not m:
                raise CError("unsupported snprintf conversion")
            conv = m.group(3)
            if conv == b"%":
                out.append(37)
            else:
                if not vals:
                    raise CError("snprintf: too few arguments")
                v = vals.pop(0)
                if conv == b"s":
                    if v.kind != "bytes":
                        raise CError("snprintf %s of a non-string")
                    out.extend(v.data)
                else:
                    if v.kind != "num":
                        raise CError("snprintf %d of a non-number")
                    out.extend((("%x" if conv == b"x" else "%X" if conv == b"X" else "%d") % v.data).encode())
            i += m.end()
        return Value("bytes", bytes(out), None)

    # -- walking the test file ----------------------------------------------------------------------------
    def extract(self, top_srcdir):
        toks = self.toks
        for t in toks:
            if t.kind == "pp":
                self._define(t.val)
        depth = 0
        func = None
        func_guards = ()
        local = {}
        counters = collections.Counter()
        k = 0
        n = len(toks)
        while k < n:
            t = toks[k]
            if t.kind == "pp":
                k += 1
                continue
            if t.val == "{":
                depth += 1
                k += 1
                continue
            if t.val == "}":
                depth -= 1
                if depth == 0:
                    func = None
                k += 1
                continue
            if depth == 0:
                # a function definition: IDENT ( ... ) {
                if t.kind == "id" and k + 1 < n and toks[k + 1].val == "(":
                    try:
                        _, after = self._split_args(toks, k + 1)
                    except CError:
                        k += 1
                        continue
                    if after < n and toks[after].val == "{":
                        func = t.val
                        func_guards = t.guards
                        local = {}
                        k = after
                        continue
                k += 1
                continue
            # inside a function
            if t.kind == "id" and t.val in ("char", "uint8_t", "unsigned"):
                # declarations: char* NAME = ...; uint8_t NAME[] = ...; char NAME[N];
                j = k + 1
                while j < n and toks[j].kind == "id" and toks[j].val in ("char", "const"):
                    j += 1
                ptr = False
                while j < n and toks[j].val == "*":
                    ptr = True
                    j += 1
                if j < n and toks[j].kind == "id":
                    name = toks[j].val
                    j += 1
                    is_array = False
                    if j < n and toks[j].val == "[":
                        is_array = True
                        while j < n and toks[j].val != "]":
                            j += 1
                        j += 1
                    if j < n and toks[j].val == "=":
                        try:
                            v, after = self._initializer(toks, j + 1)
                            if ptr and not is_array:
                                v = Value(v.kind, v.data, None)
                            local[name] = v
                            k = after
                            continue
                        except CError:
                            local[name] = None
                    elif j < n and toks[j].val == ";":
                        local[name] = None
                k += 1
                continue
            if t.kind == "id" and t.val == "snprintf" and k + 1 < n and toks[k + 1].val == "(":
                try:
                    args, after = self._split_args(toks, k + 1)
                    if args and len(args[0]) == 1 and args[0][0].kind == "id":
                        try:
                            local[args[0][0].val] = self._snprintf(args, local, top_srcdir)
                        except CError:
                            local[args[0][0].val] = None
                    k = after
                    continue
                except CError:
                    pass
                k += 1
                continue
            if t.kind == "id" and t.val in ASSERTS and k + 1 < n and toks[k + 1].val == "(":
                name = t.val
                try:
                    args, after = self._split_args(toks, k + 1)
                except CError as e:
                    self._fail("unparsable call: %s" % e, func, t.line)
                    k += 2
                    continue
                counters[func] += 1
                idx = counters[func]
                guards = tuple(g for g in func_guards) + tuple(g for g in t.guards if g not in func_guards)
                try:
                    case = self._make_case(name, args, local, top_srcdir)
                except CError as e:
                    self._fail("%s: %s" % (name, re.sub(r"'[^']*'", "'...'", str(e))
                                           if "unknown identifier" not in str(e) else str(e)), func, t.line)
                    k = after
                    continue
                case.update(func=func, index=idx, line=t.line, guards=list(guards), assert_name=name)
                case["id"] = "%s#%d@L%d" % (func, idx, t.line)
                self.cases.append(case)
                k = after
                continue
            k += 1
        return self.cases

    def _make_case(self, name, args, local, top_srcdir):
        nargs, kind = ASSERTS[name]
        if len(args) != nargs:
            raise CError("expected %d arguments, got %d" % (nargs, len(args)))
        case = {"expect": None, "expect_count": None, "expect_data": None, "compile_only": False}
        if kind == "regexp" or kind == "regexp_compile":
            re_v = self.eval(args[0], local)
            if re_v.kind != "bytes":
                raise CError("regexp is not a literal")
            rule = b"rule test { strings: $a = /" + re_v.data + b"/ condition: $a }"
        else:
            r = self.eval(args[0], local)
            if r.kind != "bytes":
                raise CError("rule is not a string")
            rule = r.data
            if b"\0" in rule:
                rule = rule[:rule.index(b"\0")]
        data = DUMMY
        data_file = None

        def strlen_data(v):
            if v.kind == "null":
                return DUMMY
            if v.kind != "bytes":
                raise CError("data is not a string")
            d = v.data
            return d[:d.index(b"\0")] if b"\0" in d else d

        if kind == "string":
            data = strlen_data(self.eval(args[1], local))
            if name == "assert_match_count":
                c = self.eval(args[2], local)
                if c.kind != "num":
                    raise CError("match count is not a number")
                case["expect"] = "count"
                case["expect_count"] = c.data
            else:
                case["expect"] = "true" if "true" in name else "false"
        elif kind in ("blob", "blobsize"):
            v = self.eval(args[1], local)
            if v.kind == "null":
                data = DUMMY
            elif v.kind != "bytes":
                raise CError("blob is not a byte array")
            elif kind == "blob":
                if v.sized is None:
                    raise CError("sizeof of a pointer blob")
                data = v.data + b"\0" * (v.sized - len(v.data))
            else:
                s = self.eval(args[2], local)
                if s.kind != "num":
                    raise CError("blob size is not a number")
                data = (v.data + b"\0")[:s.data]
            case["expect"] = "true" if "true" in name else "false"
        elif kind == "file":
            v = self.eval(args[1], local)
            if v.kind != "bytes":
                raise CError("file name is not a literal")
            data_file = os.path.join(top_srcdir, strlen_data(v).decode("latin-1"))
            case["expect"] = "true" if "true" in name else "false"
        elif kind == "module_data":
            raise CError("module data files cannot be passed to the yara CLI")
        elif kind == "compile":
            case["compile_only"] = True
            if name == "assert_error":
                e = self.eval(args[1], local)
                if e.kind != "name":
                    raise CError("error code is not a name")
                case["expect"] = "compiles" if e.data == "ERROR_SUCCESS" else "error"
                case["expect_error"] = e.data
            elif name == "assert_no_warnings":
                case["expect"] = "no_warning"
            else:
                case["expect"] = "warning"
        elif kind == "regexp":
            s = self.eval(args[1], local)
            if s.kind != "bytes":
                raise CError("regexp subject is not a string")
            data = strlen_data(s)
            if name == "assert_true_regexp":
                x = self.eval(args[2], local)
                if x.kind != "bytes":
                    raise CError("expected match is not a string")
                case["expect"] = "regexp_match"
                case["expect_data"] = strlen_data(x).decode("latin-1")
            else:
                case["expect"] = "false"
        elif kind == "regexp_compile":
            case["compile_only"] = True
            case["expect"] = "error"
            case["expect_error"] = "ERROR_INVALID_REGULAR_EXPRESSION"
        case["rule"] = rule.decode("latin-1")
        case["data"] = data
        case["data_file"] = data_file
        return case


# ----------------------------------------------------------------------------------------------------------
# running
# ----------------------------------------------------------------------------------------------------------

def yara_render(data):
    """How yara -s prints a text/regexp string's data (print_string in cli/yara.c)."""
    return "".join(c if 32 <= ord(c) <= 126 else "\\x%02X" % ord(c) for c in data)


def run(cmd, cwd, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = e.stdout or b"", (e.stderr or b"") + b"\n[timed out]", -999
    except OSError as e:
        out, err, rc = b"", str(e).encode(), -998
    return {"rc": rc, "out": out.decode("latin-1"), "err": err.decode("latin-1"),
            "secs": time.monotonic() - t0}


def yara_verdict(r):
    errs = [l for l in r["err"].splitlines() if "error" in l.lower() or "timed out" in l]
    accepted = r["rc"] == 0 and not errs
    warns = [l for l in r["err"].splitlines() if "warning" in l]
    return accepted, errs, warns


def hs_verdict(r):
    lines = r["err"].splitlines()
    rejections = [l for l in lines if "rule rejected" in l]
    other = [l for l in lines if l not in rejections]
    accepted = not rejections and r["rc"] in (0, 2) and not any("no usable rule" in l for l in other)
    if r["rc"] not in (0, 2):
        accepted = False
    return accepted, rejections, other


def out_lines(r):
    return sorted(l for l in r["out"].splitlines() if l.strip())


def yara_meets_expectation(case, y):
    accepted, errs, warns = yara_verdict(y)
    rules_matched = [l for l in y["out"].splitlines() if l and not l.startswith("0x")]
    e = case["expect"]
    if e == "error":
        return not accepted
    if not accepted:
        return False
    if e == "compiles":
        return True
    if e == "warning":
        return bool(warns)
    if e == "no_warning":
        return not warns
    if e == "true":
        return len(rules_matched) > 0
    if e == "false":
        return len(rules_matched) == 0
    if e == "count":
        return len(rules_matched) == case["expect_count"]
    if e == "regexp_match":
        want = ": " + yara_render(case["expect_data"])
        return any(l.startswith("0x") and l.endswith(want) and l.split(":", 2)[1] == "$a"
                   for l in y["out"].splitlines())
    return False


REASON_CLASSES = [
    (r"unknown option '-d'", "-d unsupported"),
    (r"needs module|modules are not supported|Unrecognized module", "module"),
    (r"base64", "base64"),
    (r"var_(zero|one|true|false)", "externals"),
    (r"floating-point", "floats"),
    (r"text strings or regular expressions in the condition", "string operators"),
    (r"\\b and \\B in wide", "\\b in wide regex"),
    (r"greedy|lazy|quantifier", "regex quantifiers"),
    (r"explode|state budget", "DFA explosion"),
    (r"empty string", "matches empty"),
    (r"unused|not used|never used", "unused string"),
    (r"rejected rule", "depends on rejected rule"),
]

# What the rule uses, for rejections whose reason is a generic parse error (first match wins).
FEATURE_CLASSES = [
    (r"\bdefined\b", "defined"),
    (r"^\s*import\s+\"", "module"),
    (r"\bvar_(zero|one|true|false)\b", "externals"),
    (r"\bbase64(wide)?\b", "base64"),
    (r"\bi?(contains|startswith|endswith|equals)\b|\bmatches\s*/|condition:.*\"[^\"]*\"\s*[<>=!]=?", "string operators"),
    (r"\bentrypoint\b", "entrypoint"),
    (r"%\s*of\b", "percentage of"),
    (r"\bnone\s+of\b", "none of"),
    (r"\bof\s+(them|\([^)]*\))\s+in\s*\(|#\w*\s+in\s*\(", "of/# ... in range"),
    (r"\bof\s*\(\s*[A-Za-z_]", "rule sets in of"),
    (r"\b0o[0-7]", "octal literal"),
    (r"condition:.*\d\.\d", "floats"),
    (r"\|\)", "empty alternative"),
]


def classify_reason(text, rule=""):
    for pat, name in REASON_CLASSES:
        if re.search(pat, text):
            return name
    for pat, name in FEATURE_CLASSES:
        if re.search(pat, rule, re.S | re.M):
            return name
    if re.search(r"Syntax error|syntax error", text):
        return "parse error"
    if re.search(r"Unrecognized identifier|undefined", text):
        return "identifier"
    return "other"


def normalize_reason(line):
    line = re.sub(r"^hitscope-cli: rule rejected: \S+?:\d+: (rule \S+: )?", "", line)
    line = re.sub(r"line \d+: ", "", line)
    line = re.sub(r"'[^']*'", "'…'", line)
    line = re.sub(r"\b\d+\b", "N", line)
    return line[:120]


def oneline(s, limit):
    s = s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return s if len(s) <= limit else s[:limit] + "…"


def run_case(case, args, workdir, hs_defines):
    d = os.path.join(workdir, "c%04d" % case["seq"])
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "case.yar"), "wb") as f:
        f.write(case["rule"].encode("latin-1"))
    data_path = "data"
    if case["data_file"]:
        data_path = case["data_file"]
    else:
        with open(os.path.join(d, "data"), "wb") as f:
            f.write(case["data"])
    defs = []
    for k, v in EXTERNALS:
        defs += ["-d", "%s=%s" % (k, v)]
    y = run([args.yara, "-s"] + defs + ["case.yar", data_path], d, args.timeout)
    res = {"yara": y}
    res["yara_ok_expect"] = yara_meets_expectation(case, y)
    if args.yara_only:
        return res
    use_defs = defs if (hs_defines or re.search(r"\bvar_(zero|one|true|false)\b", case["rule"])) else []
    h = run([args.hitscope, "scan", "--engine", args.engine, "-s"] + use_defs + ["-r", "case.yar", data_path],
            d, args.timeout)
    res["hs"] = h
    ya, yerrs, _ = yara_verdict(y)
    ha, hrej, hother = hs_verdict(h)
    if ya and not ha:
        kind = "hs_rejects"
    elif not ya and ha:
        kind = "hs_accepts"
    elif not ya and not ha:
        kind = "agree"
    elif out_lines(y) != out_lines(h):
        kind = "matches_differ"
    else:
        kind = "agree"
    res["kind"] = kind
    reason_src = "\n".join(hrej + hother)
    res["hs_reason"] = normalize_reason(hrej[0] if hrej else (hother[0] if hother else ""))
    res["hs_class"] = ""
    if kind == "hs_rejects":
        res["hs_class"] = classify_reason(reason_src, case["rule"])
    elif kind == "hs_accepts":
        # what yara refused it for
        e = yerrs[0] if yerrs else y["err"].strip()
        res["hs_class"] = re.sub(r'^error: rule "[^"]*" in \S+: |"[^"]*"', "", e)[:60]
    return res


def load_git_file(gitdir, rev, path):
    p = subprocess.run(["git", "--git-dir", gitdir, "show", "%s:%s" % (rev, path)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise SystemExit("cannot read %s:%s from %s: %s" % (rev, path, gitdir, p.stderr.decode().strip()))
    return p.stdout.decode("latin-1")


def find_gitdir(path):
    for cand in (os.path.join(path, ".git"), path):
        if os.path.isdir(cand) and subprocess.run(["git", "--git-dir", cand, "rev-parse", "--git-dir"],
                                                  stdout=subprocess.DEVNULL,
                                                  stderr=subprocess.DEVNULL).returncode == 0:
            return cand
    raise SystemExit("no git directory at %s" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("test_rules", nargs="?", default="/tmp/test-rules.c", help="YARA's tests/test-rules.c")
    ap.add_argument("--engine", default="cpu", choices=["cpu", "gpu", "auto"])
    ap.add_argument("--hitscope", default=None, help="hitscope-cli (default: build/release/cli/hitscope-cli, "
                                                    "else the first build/*/cli/hitscope-cli)")
    ap.add_argument("--yara", default="yara")
    ap.add_argument("--yara-git", default="/work/.mirror/VirusTotal+yara/repo",
                    help="git directory (or repository) of VirusTotal/yara, for tests/util.h, blob.h, data/")
    ap.add_argument("--rev", default="v4.2.3")
    ap.add_argument("--filter", default=None, help="only test functions whose name contains this")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per tool run")
    ap.add_argument("--out", default="/tmp/yaraconf")
    ap.add_argument("--always-define", action="store_true",
                    help="pass -d to hitscope-cli on every case even when it does not support -d "
                         "(default: then only on cases that use the externals)")
    ap.add_argument("--yara-only", action="store_true", help="run only yara (checks the extraction)")
    ap.add_argument("--list", action="store_true", help="print the extracted cases and stop")
    ap.add_argument("--keep", action="store_true", help="keep the temporary case folder")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args()

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if args.hitscope is None:
        cand = os.path.join(here, "build", "release", "cli", "hitscope-cli")
        if not os.path.exists(cand):
            import glob
            found = sorted(glob.glob(os.path.join(here, "build", "*", "cli", "hitscope-cli")))
            cand = found[0] if found else cand
        args.hitscope = cand
    if os.sep in args.hitscope:
        args.hitscope = os.path.abspath(args.hitscope)  # the tools run in each case's folder
    if os.sep in args.yara:
        args.yara = os.path.abspath(args.yara)
    if not args.yara_only and not args.list and shutil.which(args.hitscope) is None:
        raise SystemExit("hitscope-cli not found at %s (use --hitscope or --yara-only)" % args.hitscope)

    gitdir = find_gitdir(args.yara_git)
    with open(args.test_rules, encoding="latin-1") as f:
        src = f.read()
    util_h = load_git_file(gitdir, args.rev, "tests/util.h")
    blob_h = load_git_file(gitdir, args.rev, "tests/blob.h")

    workdir = tempfile.mkdtemp(prefix="yaraconf-")
    try:
        # tests/data for the *_file asserts and the includes (top_srcdir = workdir)
        arch = subprocess.run(["git", "--git-dir", gitdir, "archive", args.rev, "tests/data"],
                              stdout=subprocess.PIPE, check=True).stdout
        subprocess.run(["tar", "-x", "-C", workdir], input=arch, check=True)

        ex = Extractor(src, util_h, blob_h)
        cases = ex.extract(workdir)
        for i, c in enumerate(cases):
            c["seq"] = i
        total_found = len(cases) + sum(ex.failures.values())
        if args.filter:
            cases = [c for c in cases if args.filter in (c["func"] or "")]
        print("extracted %d of %d assert calls (%d not extracted)" %
              (len(ex.cases), total_found, sum(ex.failures.values())))
        for reason, cnt in ex.failures.most_common():
            print("  not extracted: %3d  %s  (e.g. %s)" % (cnt, reason, ex.failure_examples[reason]))
        if args.filter:
            print("filter %r: %d cases" % (args.filter, len(cases)))

        if args.list:
            for c in cases:
                print("%s [%s]%s expect=%s%s data=%s" % (
                    c["id"], c["assert_name"], (" guards=%s" % c["guards"]) if c["guards"] else "",
                    c["expect"], (" count=%d" % c["expect_count"]) if c["expect"] == "count" else "",
                    c["data_file"] or ("%d bytes" % len(c["data"]))))
                print("    " + oneline(c["rule"], 300))
            return 0

        hs_defines = True
        hs_define_note = ""
        if not args.yara_only:
            probe_dir = os.path.join(workdir, "probe")
            os.makedirs(probe_dir)
            with open(os.path.join(probe_dir, "p.yar"), "w") as f:
                f.write("rule p { condition: true }\n")
            with open(os.path.join(probe_dir, "data"), "w") as f:
                f.write("dummy")
            pr = run([args.hitscope, "scan", "--engine", args.engine, "-s", "-d", "var_one=1", "-r", "p.yar",
                      "data"], probe_dir, args.timeout)
            if "unknown option" in pr["err"] and "-d" in pr["err"]:
                hs_defines = args.always_define
                hs_define_note = ("NOTE: hitscope-cli rejects -d (%s); it is passed %s" %
                                  (pr["err"].strip().splitlines()[0],
                                   "on every case (--always-define)" if hs_defines else
                                   "only on cases whose rule uses var_zero/var_one/var_true/var_false"))
                print(hs_define_note)
            elif pr["rc"] < 0:
                raise SystemExit("cannot run %s: %s" % (args.hitscope, pr["err"].strip()))
            elif pr["rc"] != 0 or "p data" not in pr["out"]:
                print("NOTE: hitscope-cli probe: rc=%d out=%r err=%r" % (pr["rc"], pr["out"], pr["err"][:300]))

        t0 = time.monotonic()
        results = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = {pool.submit(run_case, c, args, workdir, hs_defines): c for c in cases}
            done = 0
            for fut in concurrent.futures.as_completed(futs):
                c = futs[fut]
                results[c["seq"]] = fut.result()
                done += 1
                if args.verbose:
                    r = results[c["seq"]]
                    print("[%d/%d] %s yara_expect=%s %s" % (done, len(cases), c["id"],
                                                             "ok" if r["yara_ok_expect"] else "MISMATCH",
                                                             r.get("kind", "")), flush=True)
        wall = time.monotonic() - t0

        os.makedirs(args.out, exist_ok=True)
        per_func = collections.OrderedDict()
        for c in cases:
            per_func.setdefault(c["func"], []).append(c)

        # yara vs the tests' own expectation
        yara_mismatch = [c for c in cases if not results[c["seq"]]["yara_ok_expect"]]
        with open(os.path.join(args.out, "yara_vs_expectation.txt"), "w") as f:
            for c in yara_mismatch:
                y = results[c["seq"]]["yara"]
                f.write("%s\t%s\texpect=%s%s\trule=%s\tyara_rc=%d\tyara_out=%s\tyara_err=%s\n" % (
                    c["id"], c["assert_name"], c["expect"],
                    (":" + oneline(c["expect_data"], 80)) if c["expect_data"] is not None else "",
                    oneline(c["rule"], 300), y["rc"], oneline(y["out"], 300), oneline(y["err"], 300)))

        kinds = ("hs_rejects", "hs_accepts", "matches_differ")
        table = []
        hdr = "%-28s %5s %5s %5s %8s %8s %8s %7s" % ("function", "cases", "agree", "disag", "hsRejct",
                                                       "hsAccpt", "matchDif", "yaraXp!")
        table.append(hdr)
        tot = collections.Counter()
        for func, cs in per_func.items():
            cnt = collections.Counter()
            for c in cs:
                r = results[c["seq"]]
                cnt["cases"] += 1
                if not r["yara_ok_expect"]:
                    cnt["yara_mismatch"] += 1
                if not args.yara_only:
                    cnt[r["kind"]] += 1
            tot.update(cnt)
            guards = sorted({g for c in cs for g in c["guards"]})
            table.append("%-28s %5d %5d %5d %8d %8d %8d %7d%s" % (
                func, cnt["cases"], cnt["agree"], sum(cnt[k] for k in kinds), cnt["hs_rejects"],
                cnt["hs_accepts"], cnt["matches_differ"], cnt["yara_mismatch"],
                ("  [#if %s]" % " ; ".join(guards)) if guards else ""))
        table.append("%-28s %5d %5d %5d %8d %8d %8d %7d" % (
            "TOTAL", tot["cases"], tot["agree"], sum(tot[k] for k in kinds), tot["hs_rejects"],
            tot["hs_accepts"], tot["matches_differ"], tot["yara_mismatch"]))

        lines = []
        lines.append("yaraconformance: %s vs %s (--engine %s), %d cases in %.1f s, %d jobs" % (
            args.yara, "(skipped)" if args.yara_only else args.hitscope, args.engine, len(cases), wall,
            args.jobs))
        if hs_define_note:
            lines.append(hs_define_note)
        lines.append("not extracted: %d (%s)" % (sum(ex.failures.values()), "; ".join(
            "%d %s" % (v, k) for k, v in ex.failures.most_common())))
        lines.extend(table)
        lines.append("yaraXp! = yara itself disagrees with the test's expectation (see yara_vs_expectation.txt)")

        if not args.yara_only:
            reasons = collections.Counter()
            classes = collections.Counter()
            for c in cases:
                r = results[c["seq"]]
                if r["kind"] == "hs_rejects":
                    reasons[r["hs_reason"]] += 1
                    classes[r["hs_class"]] += 1
            accepts = collections.Counter(results[c["seq"]]["hs_class"] for c in cases
                                          if results[c["seq"]]["kind"] == "hs_accepts")
            if classes:
                lines.append("hitscope rejects what yara accepts, by class: " + ", ".join(
                    "%s %d" % kv for kv in classes.most_common()))
            if accepts:
                lines.append("hitscope accepts what yara refuses, by yara's error: " + ", ".join(
                    "%s %d" % kv for kv in accepts.most_common()))
            if classes:
                lines.append("most common rejection reasons:")
                for reason, cnt in reasons.most_common(25):
                    lines.append("  %4d  %s" % (cnt, reason))
            with open(os.path.join(args.out, "disagreements.txt"), "w") as f:
                for c in cases:
                    r = results[c["seq"]]
                    if r["kind"] == "agree":
                        continue
                    y, h = r["yara"], r["hs"]
                    f.write("%s\t%s%s\t%s\trule=%s\tyara[rc=%d]=%s | %s\thitscope[rc=%d]=%s | %s\n" % (
                        c["id"], r["kind"], ("/" + r["hs_class"]) if r["hs_class"] else "",
                        "yara-meets-expectation" if r["yara_ok_expect"] else "yara-FAILS-expectation",
                        oneline(c["rule"], 300), y["rc"], oneline("\n".join(out_lines(y)), 400),
                        oneline(y["err"].strip(), 300), h["rc"], oneline("\n".join(out_lines(h)), 400),
                        oneline(h["err"].strip(), 300)))
            with open(os.path.join(args.out, "cases.jsonl"), "w") as f:
                for c in cases:
                    r = results[c["seq"]]
                    rec = {k: v for k, v in c.items() if k != "data"}
                    rec["data_len"] = len(c["data"]) if not c["data_file"] else None
                    rec["result"] = r
                    f.write(json.dumps(rec) + "\n")
        summary = "\n".join(lines) + "\n"
        with open(os.path.join(args.out, "summary.txt"), "w") as f:
            f.write(summary)
        print(summary, end="")
        print("files: %s/{summary.txt,%syara_vs_expectation.txt}" % (
            args.out, "" if args.yara_only else "disagreements.txt,cases.jsonl,"))
    finally:
        if args.keep:
            print("cases kept in %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
