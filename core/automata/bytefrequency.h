// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "pattern/regex.h"

namespace Hitscope {

/// How often a byte occurs in what analysts scan, relative to 1/256: the most common bytes of x86-64 ELF
/// executables and libraries with their text (measured over 110 MB of Debian 12's /usr/bin and
/// /usr/lib/x86_64-linux-gnu); the other bytes at 0.5. Only the order of magnitude matters: it steers keys
/// away from zero bytes, padding and the opcode bytes of code (48 8B 44 24 is mov rax, [rsp+...]).
inline double byteFrequency(int b)
{
    switch (b) {
    case 0x00: return 69;
    case 0x48: return 11.6;
    case 0xff: return 10.6;
    case 0x89: return 5.7;
    case 0x24: case 0x8b: case 0x0f: return 4.5;
    case 0x01: case 0xe8: case 0x74: return 3.5;
    case 0x8d: case 0x08: case 0x4c: case 0x41: case 0x65: case 0x20: case 0x44: return 2.5;
    case 0x10: case 0x85: case 0x83: case 0x49: case 0x66: case 0x45: case 0x84: case 0xc0: case 0x02:
    case 0x04: case 0x0e: case 0xcc: case 0x90: return 1.8;
    default:
        return (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '_' ? 1.4 : 0.5;
    }
}

/// How much a position of a sequence tells, for choosing keys (HashScreen, KeyFilter): -log2 of the share of
/// input bytes it allows (its `count` bytes' frequencies summed), less when it repeats the byte before it (runs
/// of one byte fill data).
inline double positionBits(const ByteSet &set, size_t count, const ByteSet *before)
{
    double share = 0;
    if (count <= 16)
        for (size_t b = set._Find_first(); b < 256; b = set._Find_next(b))
            share += byteFrequency(int(b)) / 256;
    else
        share = double(count) / 256;
    double bits = -std::log2(std::min(1.0, share));
    if (count == 1 && before && *before == set)
        bits -= 4;
    return bits;
}

} // namespace Hitscope
