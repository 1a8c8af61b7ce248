// SPDX-License-Identifier: GPL-3.0-or-later
#include "keyfilter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <tuple>

#include "automata/bytefrequency.h"
#include "util/hash.h"

namespace Hitscope {

namespace {

constexpr uint32_t kHasBytes = 1, kHasPairs = 2, kHasTriples = 4, kHasQuads = 8;
constexpr size_t kBytesAt = KeyFilter::kHeaderWords;
constexpr size_t kPairsAt = kBytesAt + 8;
constexpr size_t kBitmapAt = kPairsAt + 2048;

/// An open-addressing table of `entries` (each `stride` words, the key first; unique by content) at the end of
/// `words`, probed linearly from slot(key); `empty` marks a free slot. Returns the shift of slot().
/// The most slots a probe of the table at `at` (`size` slots of `stride` words) reads: the longest run of
/// occupied slots, wrapping around, and the free slot after it.
int probeLength(const std::vector<uint32_t> &words, size_t at, size_t size, size_t stride, uint32_t empty)
{
    size_t longest = 0, run = 0;
    for (size_t k = 0; k < 2 * size; ++k) {
        run = words[at + (k % size) * stride] == empty ? 0 : run + 1;
        longest = std::max(longest, std::min(run, size));
    }
    return int(longest) + 1;
}

template<typename Slot>
int placeSlots(const std::vector<std::array<uint32_t, 4>> &entries, size_t stride, uint32_t empty, Slot slot,
               std::vector<uint32_t> &words)
{
    const size_t size = std::bit_ceil(std::max<size_t>(16, entries.size() * 2));
    const int shift = 32 - std::countr_zero(size);
    const size_t at = words.size();
    words.resize(at + size * stride, 0);
    for (size_t i = 0; i < size; ++i)
        words[at + i * stride] = empty;
    for (const auto &e : entries) {
        size_t i = slot(e[0], shift);
        while (words[at + i * stride] != empty)
            i = (i + 1) & (size - 1);
        for (size_t k = 0; k < stride; ++k)
            words[at + i * stride + k] = e[k];
    }
    return shift;
}

/// A key's ends from its start (11 bits each: sequences are at most AtomPrefilter::kMaxLongSequence long) and its
/// sequences' length classes.
uint32_t span(int minEnd, int maxEnd, uint32_t classes)
{
    return uint32_t(minEnd) | uint32_t(maxEnd) << 11 | classes << 22;
}

} // namespace

void KeyFilter::add(const Sequence &seq)
{
    const int len = int(seq.size());
    if (len == 0)
        return;
    // Per position: its bits after the one before (inside a key) and alone (a key's first), summed from the start,
    // and log2 of its bytes summed likewise: a key's bits and variants in O(1).
    std::vector<double> firstBits(seq.size()), bitsBefore(seq.size() + 1, 0), logBefore(seq.size() + 1, 0);
    for (int i = 0; i < len; ++i) {
        const ByteSet &set = seq[size_t(i)];
        firstBits[size_t(i)] = positionBits(set, set.count(), nullptr);
        const bool repeats = i > 0 && set.count() == 1 && set == seq[size_t(i - 1)];
        bitsBefore[size_t(i) + 1] = bitsBefore[size_t(i)] + firstBits[size_t(i)] - (repeats ? 4 : 0);
        logBefore[size_t(i) + 1] = logBefore[size_t(i)] + std::log2(double(set.count()));
    }
    // The most bits, a longer key where it tells as much (each position of a key rules out more). A position of
    // one byte always gives a key: every sequence has one.
    int bestOffset = 0, bestLength = 1;
    double bestScore = -1e9;
    const double maxLog = std::log2(double(kMaxVariants)) + 1e-9;
    for (int length = std::min(kMaxKeyLength, len); length >= 1; --length) {
        for (int o = 0; o + length <= len; ++o) {
            const double logVariants = logBefore[size_t(o + length)] - logBefore[size_t(o)];
            const double sum = firstBits[size_t(o)] + bitsBefore[size_t(o + length)] - bitsBefore[size_t(o) + 1];
            if ((length >= 3 && logVariants > maxLog) || (length == 2 && logVariants > 12 + 1e-9))
                continue;
            const double score = sum + 2 * (length - 2);
            if (score > bestScore) {
                bestScore = score;
                bestOffset = o;
                bestLength = length;
            }
        }
    }
    // Every exact string of the key's positions, little-endian (the first byte lowest); its sequence ends from
    // len - offset - 1 bytes after the key's start.
    std::vector<Key> keys(1);
    keys[0].length = bestLength;
    keys[0].minEnd = keys[0].maxEnd = len - bestOffset - 1;
    keys[0].classes = classOf(len);
    for (int j = 0; j < bestLength; ++j) {
        const ByteSet &set = seq[size_t(bestOffset + j)];
        std::vector<Key> next;
        next.reserve(keys.size() * set.count());
        for (const Key &k : keys)
            for (size_t b = set._Find_first(); b < 256; b = set._Find_next(b)) {
                Key e = k;
                (j < 4 ? e.first : e.rest) |= uint32_t(b) << (8 * (j % 4));
                next.push_back(e);
            }
        keys = std::move(next);
    }
    m_keys.insert(m_keys.end(), keys.begin(), keys.end());
    m_longest = std::max(m_longest, len);
    ++m_sequences;
}

void KeyFilter::build()
{
    // One entry per exact key, with the span of ends of all its sequences.
    std::sort(m_keys.begin(), m_keys.end(), [](const Key &a, const Key &b) {
        return std::tie(a.length, a.first, a.rest) < std::tie(b.length, b.first, b.rest);
    });
    std::vector<Key> keys;
    for (const Key &k : m_keys) {
        const bool same = !keys.empty() && keys.back().length == k.length && keys.back().first == k.first
            && keys.back().rest == k.rest;
        if (same) {
            keys.back().minEnd = std::min(keys.back().minEnd, k.minEnd);
            keys.back().maxEnd = std::max(keys.back().maxEnd, k.maxEnd);
            keys.back().classes |= k.classes;
        } else {
            keys.push_back(k);
        }
    }
    std::vector<Key>().swap(m_keys);
    m_keyCount = {};
    m_words.assign(kHeaderWords + kSharedWords, 0);
    int byteMin = INT32_MAX, byteMax = 0, pairMin = INT32_MAX, pairMax = 0;
    uint32_t byteClasses = 0, pairClasses = 0;
    std::vector<std::array<uint32_t, 4>> triples, quads;
    for (const Key &k : keys) {
        ++m_keyCount[size_t(k.length - 1)];
        if (k.length == 1) {
            m_words[kBytesAt + k.first / 32] |= 1u << (k.first % 32);
            byteMin = std::min(byteMin, k.minEnd);
            byteMax = std::max(byteMax, k.maxEnd);
            byteClasses |= k.classes;
        } else if (k.length == 2) {
            m_words[kPairsAt + k.first / 32] |= 1u << (k.first % 32);
            pairMin = std::min(pairMin, k.minEnd);
            pairMax = std::max(pairMax, k.maxEnd);
            pairClasses |= k.classes;
        } else if (k.length == 3) {
            for (const uint32_t bit : { tripleBit(k.first), tripleBit2(k.first) })
                m_words[kBitmapAt + bit / 32] |= 1u << (bit % 32);
            triples.push_back({ k.first, span(k.minEnd, k.maxEnd, k.classes), 0, 0 });
        } else {
            for (const uint32_t bit : { quadBit(k.first), quadBit2(k.first) })
                m_words[kBitmapAt + bit / 32] |= 1u << (bit % 32);
            const uint32_t restMask = k.length == 8 ? 0xffffffffu : (1u << (8 * (k.length - 4))) - 1;
            quads.push_back({ k.first, k.rest, restMask, span(k.minEnd, k.maxEnd, k.classes) });
        }
    }
    uint32_t flags = 0;
    flags |= byteMin <= byteMax ? kHasBytes : 0;
    flags |= pairMin <= pairMax ? kHasPairs : 0;
    flags |= triples.empty() ? 0 : kHasTriples;
    flags |= quads.empty() ? 0 : kHasQuads;
    m_words[0] = flags;
    m_words[6] = byteMin <= byteMax ? span(byteMin, byteMax, byteClasses) : 0;
    m_words[7] = pairMin <= pairMax ? span(pairMin, pairMax, pairClasses) : 0;
    if (!quads.empty()) {
        // A free slot's first word is a value that no key starts with.
        std::vector<uint32_t> firsts;
        for (const auto &q : quads)
            firsts.push_back(q[0]);
        std::sort(firsts.begin(), firsts.end());
        uint32_t empty = 0xffffffffu;
        while (std::binary_search(firsts.begin(), firsts.end(), empty))
            --empty;
        m_words[1] = uint32_t(m_words.size());
        m_words[3] = empty;
        m_words[2] = uint32_t(placeSlots(quads, 4, empty, quadSlot, m_words));
        m_longestProbe = probeLength(m_words, m_words[1], (m_words.size() - m_words[1]) / 4, 4, empty);
    }
    if (!triples.empty()) {
        m_words[4] = uint32_t(m_words.size());
        m_words[5] = uint32_t(placeSlots(triples, 2, 0xffffffffu, tripleSlot, m_words));
        m_longestProbe += probeLength(m_words, m_words[4], (m_words.size() - m_words[4]) / 2, 2, 0xffffffffu);
    }
    m_fingerprint = hashBytes(m_words.size(), m_words.data(), m_words.size() * sizeof(uint32_t));
}

bool KeyFilter::keyAt(const uint8_t *data, int64_t available, int *first, int *last, uint32_t *classes) const
{
    if (m_words.empty() || available <= 0)
        return false;
    const uint32_t flags = m_words[0];
    uint8_t bytes[8] = {};
    std::memcpy(bytes, data, size_t(std::min<int64_t>(8, available)));
    uint32_t word = 0, next = 0;
    std::memcpy(&word, bytes, 4);
    std::memcpy(&next, bytes + 4, 4);
    int lo = INT32_MAX, hi = -1;
    uint32_t cls = 0;
    auto take = [&](uint32_t s) {
        lo = std::min(lo, int(s & 0x7ffu));
        hi = std::max(hi, int((s >> 11) & 0x7ffu));
        cls |= s >> 22;
    };
    auto bit = [&](size_t at, uint32_t i) { return (m_words[at + i / 32] >> (i % 32)) & 1u; };
    if ((flags & kHasBytes) && bit(kBytesAt, word & 0xffu))
        take(m_words[6]);
    if ((flags & kHasPairs) && available >= 2 && bit(kPairsAt, word & 0xffffu))
        take(m_words[7]);
    if ((flags & kHasTriples) && available >= 3 && bit(kBitmapAt, tripleBit(word & 0xffffffu))
        && bit(kBitmapAt, tripleBit2(word & 0xffffffu))) {
        const uint32_t t = word & 0xffffffu, at = m_words[4], shift = m_words[5], mask = 0xffffffffu >> shift;
        for (uint32_t i = tripleSlot(t, int(shift));; i = (i + 1) & mask) {
            if (m_words[at + 2 * i] == 0xffffffffu)
                break;
            if (m_words[at + 2 * i] == t)
                take(m_words[at + 2 * i + 1]);
        }
    }
    if ((flags & kHasQuads) && available >= 4 && bit(kBitmapAt, quadBit(word)) && bit(kBitmapAt, quadBit2(word))) {
        const uint32_t at = m_words[1], shift = m_words[2], empty = m_words[3], mask = 0xffffffffu >> shift;
        for (uint32_t i = quadSlot(word, int(shift));; i = (i + 1) & mask) {
            const uint32_t *e = &m_words[at + 4 * i];
            if (e[0] == empty)
                break;
            if (e[0] == word && (next & e[2]) == e[1] && available >= 4 + std::popcount(e[2]) / 8)
                take(e[3]);
        }
    }
    if (hi < 0)
        return false;
    *first = lo;
    *last = hi;
    *classes = cls;
    return true;
}

} // namespace Hitscope
