// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

// The scan kernel's data layout (shaders/scan.comp), shared by the units that build, upload and read it.
namespace Hitscope::ScanLayout {

constexpr int kSegmentWords = 8;
constexpr int kHitWords = 4;
constexpr int kGroupWords = 12;
constexpr uint32_t kNone = 0xffffffffu;
// Accept entries of counted patterns carry kCountedBit (free below the kind bits: pattern ids stay under
// kMaxPatterns); the kernel writes their sums as ring entries with kCountFlag in the pattern word and the
// number in the end word, per pattern or, with kStateFlag, per visited state.
constexpr uint32_t kCountedBit = 0x20000000u;
constexpr uint32_t kMaxPatterns = kCountedBit;
constexpr uint32_t kCountFlag = 0x80000000u;
constexpr uint32_t kStateFlag = 0x40000000u;
// In an accept index: every end of that state before the end of the file is counted and at the byte itself.
constexpr uint32_t kCountedState = 0x80000000u;

// Word 4 of a segment.
constexpr uint32_t kEndsFile = 1;
constexpr uint32_t kChunkStart = 32;
constexpr uint32_t kFirstChunk = 64;
constexpr int kBoundedContextShift = 1;
constexpr int kUnboundedContextShift = 3;

// The kernel's Params block, one per phase at a dynamic offset.
struct ParamsBlock
{
    uint32_t mode;
    uint32_t round;
    uint32_t headSlot;
    uint32_t counterSlot;
    uint32_t numItems;
    uint32_t budget;
    uint32_t pieceBytes;
    uint32_t hitCapacity;
    uint32_t numGroups;
    uint32_t numSegments;
    uint32_t numUnbounded;
    uint32_t unboundedBase;
    uint32_t carryBase;
    uint32_t generation;
    uint32_t pad[2];
};
constexpr int kParamsWords = int(sizeof(ParamsBlock) / 4);

inline int64_t roundUp4(int64_t v)
{
    return (v + 3) & ~int64_t(3);
}

// The kernel reads the haystack 16 bytes at a time.
inline int64_t roundUp16(int64_t v)
{
    return (v + 15) & ~int64_t(15);
}

} // namespace Hitscope::ScanLayout
