// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <cstdlib>

namespace Hitscope {

/// A size as the CLI and the bench take it: "4096", "256k", "64M", "1G", "1GiB" (binary multiples). False
/// for anything else, negative numbers included.
inline bool parseByteSize(const char *text, int64_t *out)
{
    char *end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (end == text || v < 0)
        return false;
    int64_t mul = 1;
    if (*end) {
        switch (*end | 0x20) {
        case 'k':
            mul = int64_t(1) << 10;
            break;
        case 'm':
            mul = int64_t(1) << 20;
            break;
        case 'g':
            mul = int64_t(1) << 30;
            break;
        default:
            return false;
        }
        ++end;
        if (*end == 'i' || *end == 'I')
            ++end;
        if (*end == 'b' || *end == 'B')
            ++end;
        if (*end)
            return false;
    }
    *out = v * mul;
    return true;
}

} // namespace Hitscope
