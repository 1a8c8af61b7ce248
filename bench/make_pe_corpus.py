#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fill a folder with real PE files (Windows executables, DLLs, EFI images, .NET assemblies) found on
this machine, for benchmarks of YARA rules that use the pe module.

Usage:
  bench/make_pe_corpus.py DEST SIZE [--root DIR ...] [--no-default-roots] [--manifest FILE]
  DEST: a folder that does not exist yet or is empty.
  SIZE: bytes to reach, with an optional binary suffix: 1G = 1 GiB, 512M, 64K (GiB/MiB/KiB, GB/MB
        and plain numbers are accepted too; all suffixes are powers of 1024).
  --root DIR: also search DIR (after the default roots; repeatable).
  --no-default-roots: search only the --root folders.
  --manifest FILE: where the list of copied files goes (default: DEST with ".manifest.tsv" appended,
        next to DEST, not in it, so that scans of DEST see PE files only).

A file is taken when it starts with "MZ", its e_lfanew points inside the file at "PE\\0\\0", it has at
least one section and its optional header's magic is 0x10b (PE32) or 0x20b (PE32+). Symbolic links are
not followed. Files are deduplicated by SHA-256 of their content (the first path met wins).

Order (deterministic for a given set of files): each root's files are listed sorted by path; then the
next file is always taken from the root that has contributed the fewest bytes so far (ties: the root
listed first), so small roots end up fully in the corpus and large ones share the rest evenly. Files
are copied as NNNNN_<basename> until the total reaches SIZE (the last file may overshoot it).

When the distinct files run out before SIZE, the distinct files are copied again in the same order,
each with a short overlay appended ("HITSCOPE-PAD" and the copy number, 20 bytes): bytes after the
last section are the PE overlay, so the copies are still valid PE files with the same headers, but
their content (and hash) differ. An appended overlay invalidates an Authenticode signature (it is no
longer the last thing in the file) but changes nothing that pe.is_pe, imports, exports, sections or
the rich header depend on; pe.overlay.size and hashes of the whole file do change. Such copies are
named NNNNN_padK_<basename>. The summary says how many files are distinct.

Default roots (searched in this order; missing ones are skipped):
  /usr/lib/x86_64-linux-gnu/wine /usr/lib/i386-linux-gnu/wine /usr/lib/wine /usr/share/wine
  /usr/lib/mono /usr/lib/cli /usr/share/cli-common /usr/share/mono /usr/lib/xsp
  /usr/x86_64-w64-mingw32 /usr/i686-w64-mingw32 /usr/lib/gcc/x86_64-w64-mingw32
  /usr/lib/gcc/i686-w64-mingw32 /usr/lib/grub /usr/lib/shim

Debian 12 (bookworm, amd64) packages that provide the files (how /work/pecorpus was made):
  apt-get install -y --no-install-recommends wine64 libwine mingw-w64-x86-64-dev \\
      mingw-w64-i686-dev gcc-mingw-w64-x86-64-win32 grub-efi-amd64-bin grub-efi-ia32-bin \\
      shim-unsigned mono-complete ovmf ovmf-ia32
  (wine 8.0~repack-4: libwine puts about 695 distinct PE files, 637 MiB, under
  /usr/lib/x86_64-linux-gnu/wine/x86_64-windows; mono-complete brings about 1500 .NET assemblies,
  124 MiB, under /usr/lib/mono; gcc-mingw-w64-x86-64-win32 10 PE files, 54 MiB, under
  /usr/lib/gcc/x86_64-w64-mingw32; grub-efi-*-bin 8 EFI images, 28 MiB; shim-unsigned 3; the
  mingw-w64 -dev packages 4 DLLs; ovmf/ovmf-ia32 give no PE file, they were part of the try.)
  Together these hold about 846 MiB of distinct PE files, short of 1 GiB. The 32-bit wine DLLs
  were added without installing any i386 package: the .deb was only downloaded and unpacked:
      dpkg --add-architecture i386 && apt-get update
      apt-get download libwine:i386            # libwine_8.0~repack-4_i386.deb, 95 MB
      dpkg-deb -x libwine_8.0~repack-4_i386.deb /work/pe-extra/root
      dpkg --remove-architecture i386 && apt-get update
  which adds about 545 MiB of distinct 32-bit PE files (under usr/lib/i386-linux-gnu/wine/i386-windows),
  about 1391 MiB in all. Then:
      bench/make_pe_corpus.py /work/pecorpus 1G --root /work/pe-extra/root

Summary printed at the end: files, bytes, distinct files, PE32 / PE32+ counts, DLL / EXE counts
(IMAGE_FILE_DLL in the file header's characteristics), .NET count (a non-empty CLR runtime header
data directory), and the files taken from each root.
"""

import argparse
import collections
import hashlib
import os
import re
import shutil
import struct
import sys

DEFAULT_ROOTS = [
    "/usr/lib/x86_64-linux-gnu/wine", "/usr/lib/i386-linux-gnu/wine", "/usr/lib/wine", "/usr/share/wine",
    "/usr/lib/mono", "/usr/lib/cli", "/usr/share/cli-common", "/usr/share/mono", "/usr/lib/xsp",
    "/usr/x86_64-w64-mingw32", "/usr/i686-w64-mingw32", "/usr/lib/gcc/x86_64-w64-mingw32",
    "/usr/lib/gcc/i686-w64-mingw32", "/usr/lib/grub", "/usr/lib/shim",
]
PAD_MAGIC = b"HITSCOPE-PAD"


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.I)
    if not m:
        raise argparse.ArgumentTypeError("bad size %r (examples: 1G, 512M, 1048576)" % text)
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    return int(float(m.group(1)) * mult)


def pe_info(path):
    """Return a dict (bits, dll, dotnet) when path is a valid PE file, else None."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            dos = f.read(64)
            if len(dos) < 64 or dos[:2] != b"MZ":
                return None
            lfanew = struct.unpack_from("<I", dos, 0x3C)[0]
            if lfanew < 4 or lfanew + 24 + 2 > size:
                return None
            f.seek(lfanew)
            hdr = f.read(24 + 240)
    except OSError:
        return None
    if len(hdr) < 26 or hdr[:4] != b"PE\0\0":
        return None
    machine, nsect, _, _, _, opt_size, chars = struct.unpack_from("<HHIIIHH", hdr, 4)
    magic = struct.unpack_from("<H", hdr, 24)[0]
    if nsect == 0 or magic not in (0x10B, 0x20B) or opt_size < 2:
        return None
    opt = hdr[24:24 + opt_size]
    # data directories start at 96 (PE32) / 112 (PE32+); the CLR header is entry 14
    dd = 96 if magic == 0x10B else 112
    ndirs = struct.unpack_from("<I", opt, dd - 4)[0] if len(opt) >= dd else 0
    dotnet = False
    if ndirs > 14 and len(opt) >= dd + 15 * 8:
        rva, sz = struct.unpack_from("<II", opt, dd + 14 * 8)
        dotnet = rva != 0 and sz != 0
    return dict(bits=32 if magic == 0x10B else 64, dll=bool(chars & 0x2000), dotnet=dotnet, machine=machine)


def list_root(root):
    """Regular files under root (symlinks not followed), sorted by path."""
    out = []
    for dp, dn, fn in os.walk(root):
        dn.sort()
        for name in fn:
            p = os.path.join(dp, name)
            if not os.path.islink(p) and os.path.isfile(p):
                out.append(p)
    out.sort()
    return out


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dest")
    ap.add_argument("size", type=parse_size)
    ap.add_argument("--root", action="append", default=[], help="extra root to search (repeatable)")
    ap.add_argument("--no-default-roots", action="store_true")
    ap.add_argument("--manifest")
    args = ap.parse_args()

    dest = os.path.abspath(args.dest)
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        sys.exit("make_pe_corpus: %s exists and is not an empty folder" % dest)
    os.makedirs(dest, exist_ok=True)
    manifest = args.manifest or dest.rstrip("/") + ".manifest.tsv"

    roots = ([] if args.no_default_roots else DEFAULT_ROOTS) + args.root
    seen_roots = []
    for r in roots:
        r = os.path.realpath(r)
        if os.path.isdir(r) and r not in seen_roots:
            seen_roots.append(r)
    if not seen_roots:
        sys.exit("make_pe_corpus: none of the roots exists")

    queues = [collections.deque(list_root(r)) for r in seen_roots]
    given = [0] * len(seen_roots)          # bytes contributed per root
    taken = [0] * len(seen_roots)          # files contributed per root
    hashes = set()
    real_seen = set()
    chosen = []                            # (path, info, size)
    total = 0

    # pick distinct PE files, fair share by bytes across roots
    while total < args.size:
        live = [i for i, q in enumerate(queues) if q]
        if not live:
            break
        i = min(live, key=lambda k: (given[k], k))
        path = queues[i].popleft()
        rp = os.path.realpath(path)
        if rp in real_seen:
            continue
        real_seen.add(rp)
        info = pe_info(path)
        if info is None:
            continue
        digest = sha256_of(path)
        if digest in hashes:
            continue
        hashes.add(digest)
        size = os.path.getsize(path)
        chosen.append((path, info, size, seen_roots[i]))
        given[i] += size
        taken[i] += 1
        total += size

    distinct = len(chosen)
    if distinct == 0:
        sys.exit("make_pe_corpus: no PE file found under %s" % ", ".join(seen_roots))

    rows = []
    counts = collections.Counter()
    written = 0
    seq = 0

    def account(info):
        counts["pe32" if info["bits"] == 32 else "pe32+"] += 1
        counts["dll" if info["dll"] else "exe"] += 1
        if info["dotnet"]:
            counts["dotnet"] += 1

    for path, info, size, root in chosen:
        name = "%05d_%s" % (seq, os.path.basename(path))
        shutil.copyfile(path, os.path.join(dest, name))
        rows.append((name, size, "distinct", path))
        account(info)
        written += size
        seq += 1

    pad_round = 0
    while written < args.size:
        pad_round += 1
        for path, info, size, root in chosen:
            if written >= args.size:
                break
            name = "%05d_pad%d_%s" % (seq, pad_round, os.path.basename(path))
            overlay = PAD_MAGIC + struct.pack("<Q", pad_round)
            with open(path, "rb") as src, open(os.path.join(dest, name), "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
                out.write(overlay)
            rows.append((name, size + len(overlay), "pad%d" % pad_round, path))
            account(info)
            written += size + len(overlay)
            seq += 1

    with open(manifest, "w") as f:
        f.write("# file\tbytes\tkind\tsource\n")
        for r in rows:
            f.write("%s\t%d\t%s\t%s\n" % r)

    print("corpus:      %s" % dest)
    print("manifest:    %s" % manifest)
    print("files:       %d" % len(rows))
    print("bytes:       %d (%.1f MiB; asked %d)" % (written, written / 2**20, args.size))
    print("distinct:    %d%s" % (distinct, "" if pad_round == 0 else
                                 " (distinct PE files ran out: %d copies with an appended overlay)"
                                 % (len(rows) - distinct)))
    print("PE32:        %d" % counts["pe32"])
    print("PE32+:       %d" % counts["pe32+"])
    print("DLL:         %d" % counts["dll"])
    print("EXE/other:   %d" % counts["exe"])
    print(".NET:        %d" % counts["dotnet"])
    print("per root (distinct files, bytes):")
    for r, n, b in zip(seen_roots, taken, given):
        if n:
            print("  %-50s %5d %12d" % (r, n, b))


if __name__ == "__main__":
    main()
