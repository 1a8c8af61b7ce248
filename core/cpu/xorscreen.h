// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

namespace Hitscope {

/**
 * Finds where a YARA xor string may start by the XORs of its neighbouring bytes, which no key changes: the
 * starts i in data[0, n) with data[i + k] ^ data[i + k + 1] == d[k] for k = 0..3 (and i + 4 < n). Only a screen:
 * every start it gives is then checked whole. Vector code per instruction set, each tested against Scalar.
 */
class XorScreen
{
public:
    enum class Isa { Scalar, Sse2, Avx2, Avx512 };

    /// Whether this CPU (and build) runs `isa`.
    static bool supported(Isa isa);
    /// The widest supported.
    static Isa best();

    /// Writes the starts to `out` (room for n), in order, and returns how many there are.
    static int64_t screen(const uint8_t *data, int64_t n, const uint8_t *d, int64_t *out, Isa isa);
};

} // namespace Hitscope
