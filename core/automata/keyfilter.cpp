// SPDX-License-Identifier: GPL-3.0-or-later
#include "keyfilter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "automata/bytefrequency.h"

namespace Hitscope {

namespace {

constexpr uint32_t kHasBytes = 1, kHasPairs = 2, kHasTriples = 4, kHasQuads = 8;
constexpr size_t kBytesAt = KeyFilter::kHeaderWords;
constexpr size_t kPairsAt = kBytesAt + 8;
constexpr size_t kBitmapAt = kPairsAt + 2048;

/// -log2 of the share of input bytes a position allows, less for a byte that repeats the one before it (runs of
/// one byte fill data): the order HashScreen and the screen choose their keys by.
double positionBits(const ByteSet &set, const ByteSet *before)
{
    const size_t count = set.count();
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

/// Every exact key of positions [offset, offset + length) of `seq`, little-endian (the first byte lowest).
void expand(const KeyFilter::Sequence &seq, int offset, int length, std::vector<uint32_t> &out)
{
    std::vector<uint32_t> keys { 0 };
    for (int j = 0; j < length; ++j) {
        const ByteSet &set = seq[size_t(offset + j)];
        std::vector<uint32_t> next;
        next.reserve(keys.size() * set.count());
        for (uint32_t k : keys)
            for (size_t b = set._Find_first(); b < 256; b = set._Find_next(b))
                next.push_back(k | uint32_t(b) << (8 * j));
        keys = std::move(next);
    }
    out.insert(out.end(), keys.begin(), keys.end());
}

/// An open-addressing table of `keys` (unique) at `at` of `words`, probed linearly from slot(key); `empty` marks a
/// free slot. Returns the shift of slot().
template<typename Slot>
int placeSlots(const std::vector<uint32_t> &keys, uint32_t empty, Slot slot, std::vector<uint32_t> &words)
{
    const size_t size = std::bit_ceil(std::max<size_t>(16, keys.size() * 2));
    const int shift = 32 - std::countr_zero(size);
    const size_t at = words.size();
    words.resize(at + size, empty);
    for (uint32_t k : keys) {
        size_t i = slot(k, shift);
        while (words[at + i] != empty)
            i = (i + 1) & (size - 1);
        words[at + i] = k;
    }
    return shift;
}

} // namespace

void KeyFilter::add(const Sequence &seq)
{
    const int len = int(seq.size());
    if (len == 0)
        return;
    std::vector<double> bits(seq.size());
    for (int i = 0; i < len; ++i)
        bits[size_t(i)] = positionBits(seq[size_t(i)], i > 0 ? &seq[size_t(i - 1)] : nullptr);
    // The most bits, a longer key where it tells as much (each look-up of a longer key rules out more). A
    // position of one byte always gives a key: some key exists for every sequence.
    int bestOffset = 0, bestLength = 1;
    double bestScore = -1e9;
    for (int length = std::min(4, len); length >= 1; --length) {
        for (int o = 0; o + length <= len; ++o) {
            double variants = 1, sum = 0;
            for (int j = 0; j < length; ++j) {
                variants *= double(seq[size_t(o + j)].count());
                sum += j == 0 ? positionBits(seq[size_t(o)], nullptr) : bits[size_t(o + j)];
            }
            if ((length >= 3 && variants > double(kMaxVariants)) || (length == 2 && variants > 4096))
                continue;
            const double score = sum + 2 * (length - 2);
            if (score > bestScore) {
                bestScore = score;
                bestOffset = o;
                bestLength = length;
            }
        }
    }
    std::vector<uint32_t> &to = bestLength == 4 ? m_quads : bestLength == 3 ? m_triples : bestLength == 2 ? m_pairs : m_bytes;
    expand(seq, bestOffset, bestLength, to);
    m_longest = std::max(m_longest, len);
    ++m_sequences;
}

void KeyFilter::build()
{
    for (std::vector<uint32_t> *v : { &m_bytes, &m_pairs, &m_triples, &m_quads }) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    m_keyCount = { m_bytes.size(), m_pairs.size(), m_triples.size(), m_quads.size() };
    m_words.assign(kHeaderWords + kSharedWords, 0);
    uint32_t flags = 0;
    for (uint32_t b : m_bytes)
        m_words[kBytesAt + b / 32] |= 1u << (b % 32);
    for (uint32_t p : m_pairs)
        m_words[kPairsAt + p / 32] |= 1u << (p % 32);
    for (uint32_t t : m_triples) {
        const uint32_t bit = tripleBit(t);
        m_words[kBitmapAt + bit / 32] |= 1u << (bit % 32);
    }
    for (uint32_t q : m_quads) {
        const uint32_t bit = quadBit(q);
        m_words[kBitmapAt + bit / 32] |= 1u << (bit % 32);
    }
    flags |= m_bytes.empty() ? 0 : kHasBytes;
    flags |= m_pairs.empty() ? 0 : kHasPairs;
    flags |= m_triples.empty() ? 0 : kHasTriples;
    flags |= m_quads.empty() ? 0 : kHasQuads;
    m_words[0] = flags;
    if (!m_quads.empty()) {
        // A free slot holds a value that is no key (the keys are sorted: the first gap from the top).
        uint32_t empty = 0xffffffffu;
        for (auto it = m_quads.rbegin(); it != m_quads.rend() && *it == empty; ++it)
            --empty;
        m_words[1] = uint32_t(m_words.size());
        m_words[3] = empty;
        m_words[2] = uint32_t(placeSlots(m_quads, empty, quadSlot, m_words));
    }
    if (!m_triples.empty()) {
        m_words[4] = uint32_t(m_words.size());
        m_words[5] = uint32_t(placeSlots(m_triples, 0xffffffffu, tripleSlot, m_words));
    }
    std::vector<uint32_t>().swap(m_bytes);
    std::vector<uint32_t>().swap(m_pairs);
    std::vector<uint32_t>().swap(m_triples);
    std::vector<uint32_t>().swap(m_quads);
}

bool KeyFilter::keyAt(const uint8_t *data, int64_t available) const
{
    if (m_words.empty() || available <= 0)
        return false;
    const uint32_t flags = m_words[0];
    uint32_t word = 0;
    std::memcpy(&word, data, size_t(std::min<int64_t>(4, available)));
    auto bit = [&](size_t at, uint32_t i) { return (m_words[at + i / 32] >> (i % 32)) & 1u; };
    if ((flags & kHasBytes) && bit(kBytesAt, word & 0xffu))
        return true;
    if ((flags & kHasPairs) && available >= 2 && bit(kPairsAt, word & 0xffffu))
        return true;
    auto probe = [&](uint32_t key, uint32_t at, uint32_t shift, uint32_t empty, uint32_t slot) {
        const uint32_t mask = (0xffffffffu >> shift);
        for (uint32_t i = slot;; i = (i + 1) & mask) {
            const uint32_t v = m_words[at + i];
            if (v == key)
                return true;
            if (v == empty)
                return false;
        }
    };
    if ((flags & kHasTriples) && available >= 3) {
        const uint32_t t = word & 0xffffffu;
        if (bit(kBitmapAt, tripleBit(t)) && probe(t, m_words[4], m_words[5], 0xffffffffu, tripleSlot(t, int(m_words[5]))))
            return true;
    }
    if ((flags & kHasQuads) && available >= 4) {
        if (bit(kBitmapAt, quadBit(word)) && probe(word, m_words[1], m_words[2], m_words[3], quadSlot(word, int(m_words[2]))))
            return true;
    }
    return false;
}

} // namespace Hitscope
