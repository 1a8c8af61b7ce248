// SPDX-License-Identifier: GPL-3.0-or-later
#include "sequencescreen.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HITSCOPE_SCREEN_X86 1
#endif

namespace Hitscope {

namespace {

using Candidate = SequenceScreen::Candidate;
constexpr int kAnchor = SequenceScreen::kAnchorLength;
constexpr int kBuckets = SequenceScreen::kBuckets;
/// Two anchors per bucket on average: a bucket's tables stay sparse enough that few bytes pass all four.
constexpr int kAnchorsPerPass = 2 * kBuckets;
/// Candidates gathered before they are verified: the candidate loop makes no calls (its vectors stay in
/// registers), and this bounds the memory it writes.
constexpr size_t kRoom = 2048;
/// Bytes per nibble table: its 16 entries four times, one copy per 128-bit lane of a 512-bit register (vector
/// shuffles look up within a lane).
constexpr int kTable = 64;

/// Roughly how often a byte occurs in what analysts scan (executables, libraries, text): what anchors and
/// buckets are chosen by. Only the order of magnitude matters.
double byteShare(int b)
{
    if (b == 0x00)
        return 0.2;
    if (b == 0xff || b == 0x20)
        return 0.03;
    if ((b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z'))
        return 0.006;
    if (b >= 0x21 && b < 0x7f)
        return 0.004;
    return 0.0015;
}

/// byteShare() as a few classes of bytes, each a 256-bit mask: a set's share is then a few popcounts. The bucket
/// assignment weighs every unit against every bucket, and summing byte by byte took a tenth of the CLI's
/// start-up.
struct ShareClasses
{
    static constexpr int kClasses = 8; // at least as many as byteShare() has values (at() checks)
    std::array<std::array<uint64_t, 4>, kClasses> masks {};
    std::array<double, kClasses> shares {};

    ShareClasses()
    {
        int count = 0;
        for (int b = 0; b < 256; ++b) {
            const double share = byteShare(b);
            int c = 0;
            while (c < count && shares[size_t(c)] != share)
                ++c;
            if (c == count) {
                shares.at(size_t(c)) = share;
                ++count;
            }
            masks.at(size_t(c))[size_t(b >> 6)] |= uint64_t(1) << (b & 63);
        }
    }

    double of(const std::array<uint64_t, 4> &set) const
    {
        double s = 0;
        for (int c = 0; c < kClasses; ++c) {
            int n = 0;
            for (int w = 0; w < 4; ++w)
                n += std::popcount(set[size_t(w)] & masks[size_t(c)][size_t(w)]);
            s += n * shares[size_t(c)];
        }
        return s;
    }
};

const ShareClasses &shareClasses()
{
    static const ShareClasses classes;
    return classes;
}

/// What a byte that repeats the one before it counts for in an anchor.
constexpr double kRepeatShare = 0.5;

double setShare(const ByteSet &set)
{
    double s = 0;
    for (int b = 0; b < 256; ++b)
        if (set.test(size_t(b)))
            s += byteShare(b);
    return s;
}

/// A bucket's nibbles per anchor position, a bit each (16 low, 16 high).
struct BucketNibbles
{
    std::array<uint16_t, kAnchor> lo {};
    std::array<uint16_t, kAnchor> hi {};

    /// The share of input positions that pass all four tables: a candidate rate.
    double passRate() const
    {
        double rate = 1;
        for (int j = 0; j < kAnchor; ++j) {
            // The bytes whose low nibble and high nibble both pass: `lo` repeated in the rows of `hi`'s nibbles.
            std::array<uint64_t, 4> set {};
            for (int h = 0; h < 16; ++h)
                if (hi[size_t(j)] >> h & 1)
                    set[size_t(h >> 2)] |= uint64_t(lo[size_t(j)]) << ((h & 3) * 16);
            rate *= std::min(1.0, shareClasses().of(set));
        }
        return rate;
    }
};

/// An anchor's nibbles: `bits` per sequence position (SequenceScreen's entries), the anchor from `anchor`.
BucketNibbles nibblesOf(const std::vector<std::array<uint64_t, 4>> &bits, int anchor)
{
    BucketNibbles n;
    for (int j = 0; j < kAnchor; ++j) {
        if (anchor + j >= int(bits.size())) {
            n.lo[size_t(j)] = n.hi[size_t(j)] = 0xffff; // past a short sequence: any byte
            continue;
        }
        for (int b = 0; b < 256; ++b)
            if (bits[size_t(anchor + j)][size_t(b >> 6)] >> (b & 63) & 1) {
                n.lo[size_t(j)] |= uint16_t(1u << (b & 15));
                n.hi[size_t(j)] |= uint16_t(1u << (b >> 4));
            }
    }
    return n;
}

BucketNibbles merged(BucketNibbles a, const BucketNibbles &b)
{
    for (int j = 0; j < kAnchor; ++j) {
        a.lo[size_t(j)] |= b.lo[size_t(j)];
        a.hi[size_t(j)] |= b.hi[size_t(j)];
    }
    return a;
}

/// A bucket's bytes per anchor position, exactly: the buckets of the VBMI loop's gate (candidatesVbmi). Exact
/// tables let through only each anchor's own bytes per position, where nibble tables of a bucket let through
/// every low nibble of one anchor with every high nibble of another.
struct BucketBytes
{
    std::array<std::array<uint64_t, 4>, kAnchor> sets {};

    double passRate() const
    {
        double rate = 1;
        for (int j = 0; j < kAnchor; ++j)
            rate *= std::min(1.0, shareClasses().of(sets[size_t(j)]));
        return rate;
    }
};

BucketBytes bytesOf(const std::vector<std::array<uint64_t, 4>> &bits, int anchor)
{
    BucketBytes n;
    for (int j = 0; j < kAnchor; ++j)
        n.sets[size_t(j)] = anchor + j < int(bits.size()) ? bits[size_t(anchor + j)]
                                                          : std::array<uint64_t, 4> { ~0ull, ~0ull, ~0ull, ~0ull };
    return n;
}

BucketBytes merged(BucketBytes a, const BucketBytes &b)
{
    for (int j = 0; j < kAnchor; ++j)
        for (int w = 0; w < 4; ++w)
            a.sets[size_t(j)][size_t(w)] |= b.sets[size_t(j)][size_t(w)];
    return a;
}

/// Units (sequences sharing an anchor) into `passes` passes of kBuckets buckets: weakest anchors first, each into
/// the bucket it makes least worse, so that strong anchors share buckets with each other, not with a weak one
/// that would let most bytes through. Returns the units (indices into `units`) per bucket and each bucket's sets.
template<typename Sets, typename SetsOf>
std::vector<std::vector<size_t>> assignBuckets(const std::vector<std::vector<int>> &units, int passes,
                                               SetsOf setsOf, std::vector<Sets> &sets)
{
    std::vector<std::vector<size_t>> buckets(size_t(passes * kBuckets));
    sets.assign(buckets.size(), {});
    std::vector<double> rate(buckets.size(), 0);
    std::vector<std::pair<double, size_t>> order;
    for (size_t u = 0; u < units.size(); ++u)
        order.emplace_back(setsOf(units[u].front()).passRate(), u);
    std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    for (const auto &[own, u] : order) {
        const Sets n = setsOf(units[u].front());
        size_t best = 0;
        double bestCost = 2;
        for (size_t b = 0; b < buckets.size(); ++b) {
            const double cost = buckets[b].empty() ? own : merged(sets[b], n).passRate() - rate[b];
            if (cost < bestCost) {
                bestCost = cost;
                best = b;
            }
        }
        sets[best] = buckets[best].empty() ? n : merged(sets[best], n);
        rate[best] = sets[best].passRate();
        buckets[best].push_back(u);
    }
    return buckets;
}

/// The candidate loop without vectors, also for what the vector loops leave at the end: positions [i, end),
/// reading bytes past n as matching anything (a short sequence's anchor is shorter than four).
int64_t candidatesScalar(const uint8_t *data, int64_t n, int64_t i, int64_t end, const uint8_t *lo,
                         const uint8_t *hi, int passes, Candidate *out, size_t &count)
{
    for (; i < end && count + size_t(passes) <= kRoom; ++i) {
        for (int p = 0; p < passes; ++p) {
            uint8_t m = 0xff;
            for (int j = 0; j < kAnchor && m; ++j) {
                if (i + j >= n)
                    continue;
                const uint8_t b = data[i + j];
                m &= lo[(p * kAnchor + j) * kTable + (b & 15)] & hi[(p * kAnchor + j) * kTable + (b >> 4)];
            }
            if (m)
                out[count++] = { i, uint16_t(p), m };
        }
    }
    return i;
}

#ifdef HITSCOPE_SCREEN_X86
// Positions [i, end) 32 at a time; loads reach 34 bytes past a position: the caller keeps end <= n - 34.
__attribute__((target("avx2"))) int64_t candidatesAvx2(const uint8_t *data, int64_t i, int64_t end,
                                                       const uint8_t *lo, const uint8_t *hi, int passes,
                                                       Candidate *out, size_t &count)
{
    const __m256i low = _mm256_set1_epi8(0x0f);
    const __m256i zero = _mm256_setzero_si256();
    for (; i < end && count + size_t(32 * passes) <= kRoom; i += 32) {
        __m256i l[kAnchor], h[kAnchor];
        for (int j = 0; j < kAnchor; ++j) {
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(data + i + j));
            l[j] = _mm256_and_si256(v, low);
            h[j] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
        }
        for (int p = 0; p < passes; ++p) {
            __m256i m = _mm256_set1_epi8(char(0xff));
            for (int j = 0; j < kAnchor; ++j) {
                const size_t table = size_t((p * kAnchor + j) * kTable);
                const __m256i tl = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(lo + table));
                const __m256i th = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(hi + table));
                m = _mm256_and_si256(m, _mm256_and_si256(_mm256_shuffle_epi8(tl, l[j]), _mm256_shuffle_epi8(th, h[j])));
            }
            const uint32_t hit = ~uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, zero)));
            if (hit) [[unlikely]] {
                alignas(32) uint8_t bytes[32];
                _mm256_store_si256(reinterpret_cast<__m256i *>(bytes), m);
                for (uint32_t bits = hit; bits; bits &= bits - 1) {
                    const int k = std::countr_zero(bits);
                    out[count++] = { i + k, uint16_t(p), bytes[k] };
                }
            }
        }
    }
    return i;
}

// One nibble pass over the 64 positions from i (their nibbles in l and h): its candidates into out.
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void
nibblePassAvx512(const __m512i *l, const __m512i *h, const uint8_t *lo, const uint8_t *hi, int p, int64_t i,
                 Candidate *out, size_t &count)
{
    __m512i m = _mm512_set1_epi8(char(0xff));
    for (int j = 0; j < kAnchor; ++j) {
        const __m512i tl = _mm512_loadu_si512(lo + (p * kAnchor + j) * kTable);
        const __m512i th = _mm512_loadu_si512(hi + (p * kAnchor + j) * kTable);
        m = _mm512_and_si512(m, _mm512_and_si512(_mm512_shuffle_epi8(tl, l[j]), _mm512_shuffle_epi8(th, h[j])));
    }
    const uint64_t hit = _mm512_test_epi8_mask(m, m);
    if (hit) [[unlikely]] {
        alignas(64) uint8_t bytes[64];
        _mm512_store_si512(bytes, m);
        for (uint64_t bits = hit; bits; bits &= bits - 1) {
            const int k = std::countr_zero(bits);
            out[count++] = { i + k, uint16_t(p), bytes[k] };
        }
    }
}

// As candidatesAvx2, 64 at a time; loads reach 66 bytes past a position: the caller keeps end <= n - 66.
__attribute__((target("avx512f,avx512bw"))) int64_t candidatesAvx512(const uint8_t *data, int64_t i, int64_t end,
                                                                     const uint8_t *lo, const uint8_t *hi,
                                                                     int passes, Candidate *out, size_t &count)
{
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (; i < end && count + size_t(64 * passes) <= kRoom; i += 64) {
        __m512i l[kAnchor], h[kAnchor];
        for (int j = 0; j < kAnchor; ++j) {
            const __m512i v = _mm512_loadu_si512(data + i + j);
            l[j] = _mm512_and_si512(v, low);
            h[j] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
        }
        for (int p = 0; p < passes; ++p)
            nibblePassAvx512(l, h, lo, hi, p, i, out, count);
    }
    return i;
}

// As candidatesAvx512 (SequenceScreen::m_gated): passes [0, ungated) over every 64 bytes, the others only where
// the gate finds a candidate. The gate is one pass of exact tables over the gated passes' anchors: 256 bytes per
// anchor position, looked up as two halves of 128 by a byte's low seven bits, the half chosen by its top bit. What
// it lets through is a superset of what they do; nibble tables could not be that selective over so many anchors
// (a bucket's tables let through every low nibble of one anchor with every high nibble of another).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int64_t candidatesVbmi(const uint8_t *data, int64_t i,
                                                                               int64_t end, const uint8_t *gate,
                                                                               const uint8_t *lo, const uint8_t *hi,
                                                                               int passes, int ungated,
                                                                               const uint8_t *passGate,
                                                                               Candidate *out, size_t &count)
{
    const __m512i low = _mm512_set1_epi8(0x0f);
    __m512i t[kAnchor][4];
    for (int j = 0; j < kAnchor; ++j)
        for (int q = 0; q < 4; ++q)
            t[j][q] = _mm512_loadu_si512(gate + j * 256 + q * 64);
    for (; i < end && count + size_t(64 * passes) <= kRoom; i += 64) {
        __m512i v[kAnchor], l[kAnchor], h[kAnchor];
        __m512i open = _mm512_set1_epi8(char(0xff));
        for (int j = 0; j < kAnchor; ++j) {
            v[j] = _mm512_loadu_si512(data + i + j);
            l[j] = _mm512_and_si512(v[j], low);
            h[j] = _mm512_and_si512(_mm512_srli_epi16(v[j], 4), low);
            if (ungated < passes) {
                const __mmask64 high = _mm512_movepi8_mask(v[j]);
                const __m512i a = _mm512_maskz_permutex2var_epi8(_knot_mask64(high), t[j][0], v[j], t[j][1]);
                const __m512i b = _mm512_maskz_permutex2var_epi8(high, t[j][2], v[j], t[j][3]);
                open = _mm512_ternarylogic_epi32(open, a, b, 0xe0); // open & (a | b)
            }
        }
        const bool any = ungated < passes && _mm512_test_epi8_mask(open, open);
        for (int p = 0; p < (any ? passes : ungated); ++p) {
            if (p >= ungated && !_mm512_test_epi8_mask(open, _mm512_set1_epi8(char(passGate[p]))))
                continue;
            nibblePassAvx512(l, h, lo, hi, p, i, out, count);
        }
    }
    return i;
}

/// The first offset from `at` (a multiple of 8) on where an 8-byte word at a multiple of 8 is `all`, four
/// words at a time; or where fewer than 32 bytes are left.
/// The first offset from `at` where two bytes `c` follow each other (where a shorter run may start), or
/// where fewer than 33 bytes are left: what lies before it holds no run of two.
__attribute__((target("avx2"))) int64_t nextPairAvx2(const uint8_t *data, int64_t at, int64_t n, uint8_t c)
{
    const __m256i pattern = _mm256_set1_epi8(char(c));
    for (; at + 33 <= n; at += 32) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(data + at));
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(data + at + 1));
        const unsigned m = unsigned(_mm256_movemask_epi8(
            _mm256_and_si256(_mm256_cmpeq_epi8(v, pattern), _mm256_cmpeq_epi8(w, pattern))));
        if (m)
            return at + std::countr_zero(m);
    }
    return at;
}

__attribute__((target("avx2"))) int64_t nextWordAvx2(const uint8_t *data, int64_t at, int64_t n, uint64_t all)
{
    const __m256i pattern = _mm256_set1_epi64x(int64_t(all));
    for (; at + 32 <= n; at += 32) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(data + at));
        const int m = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(v, pattern)));
        if (m)
            return at + 8 * std::countr_zero(unsigned(m));
    }
    return at;
}
#endif

/// The sequences of the subtree at `node` into `out`; false when it has none within the limits.
bool expandNode(const Regex &regex, int node, size_t maxSequences, size_t maxLength, std::vector<SequenceScreen::Sequence> &out,
                int depth)
{
    using Type = Regex::Node::Type;
    using Sequence = SequenceScreen::Sequence;
    if (depth > 64)
        return false;
    const Regex::Node &n = regex.nodes[size_t(node)];
    out.clear();
    // Concatenates `tail` to each of `out`.
    auto product = [&](const std::vector<Sequence> &tail) {
        if (out.size() * tail.size() > maxSequences)
            return false;
        std::vector<Sequence> next;
        for (const Sequence &a : out)
            for (const Sequence &b : tail) {
                if (a.size() + b.size() > maxLength)
                    return false;
                Sequence s = a;
                s.insert(s.end(), b.begin(), b.end());
                next.push_back(std::move(s));
            }
        out = std::move(next);
        return true;
    };
    std::vector<Sequence> sub;
    switch (n.type) {
    case Type::Empty:
        out.emplace_back();
        return true;
    case Type::Bytes:
        out.push_back({ n.bytes });
        return !n.bytes.none();
    case Type::Assert:
        return false;
    case Type::Concat:
        out.emplace_back();
        for (int c : n.children)
            if (!expandNode(regex, c, maxSequences, maxLength, sub, depth + 1) || !product(sub))
                return false;
        return true;
    case Type::Alternate:
        for (int c : n.children) {
            if (!expandNode(regex, c, maxSequences, maxLength, sub, depth + 1) || out.size() + sub.size() > maxSequences)
                return false;
            out.insert(out.end(), sub.begin(), sub.end());
        }
        return true;
    case Type::Repeat: {
        if (n.max < 0 || size_t(n.max) > maxLength
            || !expandNode(regex, n.children.front(), maxSequences, maxLength, sub, depth + 1))
            return false;
        std::vector<Sequence> all;
        out.assign(1, Sequence());
        for (int k = 0; k <= n.max; ++k) {
            if (k >= n.min) {
                if (all.size() + out.size() > maxSequences)
                    return false;
                all.insert(all.end(), out.begin(), out.end());
            }
            if (k < n.max && !product(sub))
                return false;
        }
        out = std::move(all);
        return true;
    }
    }
    return false;
}

} // namespace

std::vector<SequenceScreen::Sequence> SequenceScreen::expand(const Regex &regex, size_t maxSequences, size_t maxLength)
{
    std::vector<Sequence> out;
    if (!regex.isValid() || !expandNode(regex, regex.root, maxSequences, maxLength, out, 0))
        return {};
    sortUniqueByteSequences(out);
    // Sequences that differ in one position only are one sequence with the union there, exactly: (84|85) in
    // a hex string is one position of two bytes, not two sequences to verify.
    for (bool merged = true; merged;) {
        merged = false;
        for (size_t a = 0; a < out.size() && !merged; ++a)
            for (size_t b = a + 1; b < out.size() && !merged; ++b) {
                if (out[a].size() != out[b].size())
                    continue;
                size_t differ = 0, at = 0;
                for (size_t k = 0; k < out[a].size() && differ < 2; ++k)
                    if (out[a][k] != out[b][k]) {
                        ++differ;
                        at = k;
                    }
                if (differ == 1) {
                    out[a][at] |= out[b][at];
                    out.erase(out.begin() + ptrdiff_t(b));
                    merged = true;
                }
            }
    }
    if (out.empty() || out.front().empty())
        return {};
    return out;
}

SequenceScreen::Isa SequenceScreen::best()
{
    if (supported(Isa::Avx512Vbmi))
        return Isa::Avx512Vbmi;
    if (supported(Isa::Avx512))
        return Isa::Avx512;
    if (supported(Isa::Avx2))
        return Isa::Avx2;
    return Isa::Scalar;
}

bool SequenceScreen::supported(Isa isa)
{
#ifdef HITSCOPE_SCREEN_X86
    switch (isa) {
    case Isa::Scalar:
        return true;
    case Isa::Avx2:
        return __builtin_cpu_supports("avx2");
    case Isa::Avx512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    case Isa::Avx512Vbmi:
        return supported(Isa::Avx512) && __builtin_cpu_supports("avx512vbmi");
    }
    return false;
#else
    return isa == Isa::Scalar;
#endif
}

bool SequenceScreen::isRun(const Sequence &sequence)
{
    return sequence.size() >= 4 && sequence.front().count() == 1
        && std::all_of(sequence.begin(), sequence.end(), [&](const ByteSet &s) { return s == sequence.front(); });
}

void SequenceScreen::add(const Sequence &sequence, uint32_t tag)
{
    Entry e;
    e.tag = tag;
    e.length = int(sequence.size());
    for (const ByteSet &set : sequence) {
        std::array<uint64_t, 4> w {};
        for (int b = 0; b < 256; ++b)
            if (set.test(size_t(b)))
                w[size_t(b >> 6)] |= uint64_t(1) << (b & 63);
        e.bits.push_back(w);
    }
    if (isRun(sequence))
        e.runByte = int(sequence.front()._Find_first());
    // The anchor: the four neighbouring positions whose bytes are rarest together. A byte that repeats the one
    // before it adds little: runs (dashes, zeros) fill text and binaries alike.
    double best = 2;
    for (int a = 0; a + std::min(kAnchor, e.length) <= e.length; ++a) {
        double share = 1;
        for (int j = 0; j < kAnchor && a + j < e.length; ++j) {
            const ByteSet &set = sequence[size_t(a + j)];
            share *= j > 0 && set.count() == 1 && set == sequence[size_t(a + j - 1)] ? kRepeatShare : setShare(set);
        }
        if (share < best) {
            best = share;
            e.anchor = a;
        }
    }
    for (int j = 0; j < kAnchor && e.anchor + j < e.length; ++j) {
        const ByteSet &set = sequence[size_t(e.anchor + j)];
        if (set.count() != 1)
            continue;
        for (int b = 0; b < 256; ++b)
            if (set.test(size_t(b))) {
                e.anchorMask |= uint32_t(0xff) << (8 * j);
                e.anchorValue |= uint32_t(b) << (8 * j);
            }
    }
    m_sequences.push_back(std::move(e));
}

void SequenceScreen::addPasses(Layout &layout, const std::vector<std::vector<int>> &units,
                               size_t unitsPerPass) const
{
    const int passes = int((units.size() + unitsPerPass - 1) / unitsPerPass);
    std::vector<BucketNibbles> nibbles;
    const std::vector<std::vector<size_t>> buckets = assignBuckets(units, passes, [&](int i) {
        return nibblesOf(m_sequences[size_t(i)].bits, m_sequences[size_t(i)].anchor);
    }, nibbles);
    layout.lo.resize(size_t((layout.passes + passes) * kAnchor * kTable), 0);
    layout.hi.resize(layout.lo.size(), 0);
    for (size_t b = 0; b < buckets.size(); ++b) {
        const size_t pass = size_t(layout.passes) + b / kBuckets;
        const uint8_t bit = uint8_t(1u << (b % kBuckets));
        for (int j = 0; j < kAnchor && !buckets[b].empty(); ++j)
            for (int v = 0; v < kTable; ++v) {
                if (nibbles[b].lo[size_t(j)] >> (v % 16) & 1)
                    layout.lo[(pass * kAnchor + size_t(j)) * kTable + size_t(v)] |= bit;
                if (nibbles[b].hi[size_t(j)] >> (v % 16) & 1)
                    layout.hi[(pass * kAnchor + size_t(j)) * kTable + size_t(v)] |= bit;
            }
        layout.buckets.emplace_back();
        for (size_t u : buckets[b])
            layout.buckets.back().insert(layout.buckets.back().end(), units[u].begin(), units[u].end());
    }
    layout.passes += passes;
}

void SequenceScreen::build()
{
    m_runs.clear();
    std::vector<int> anchored;
    for (int i = 0; i < int(m_sequences.size()); ++i)
        (m_sequences[size_t(i)].runByte >= 0 ? m_runs : anchored).push_back(i);
    // Runs of one byte together, the shortest first: findRuns makes one pass per byte, not per sequence.
    std::stable_sort(m_runs.begin(), m_runs.end(), [&](int a, int b) {
        const Entry &x = m_sequences[size_t(a)], &y = m_sequences[size_t(b)];
        return std::pair(x.runByte, x.length) < std::pair(y.runByte, y.length);
    });
    // Sequences with the same anchor (a hex string's jump made into several lengths, say) take one place.
    auto anchorOf = [&](int i) {
        const Entry &e = m_sequences[size_t(i)];
        std::pair<int, std::array<std::array<uint64_t, 4>, kAnchor>> key { std::min(kAnchor, e.length - e.anchor), {} };
        for (int j = 0; j < key.first; ++j)
            key.second[size_t(j)] = e.bits[size_t(e.anchor + j)];
        return key;
    };
    std::stable_sort(anchored.begin(), anchored.end(), [&](int a, int b) { return anchorOf(a) < anchorOf(b); });
    std::vector<std::vector<int>> units;
    for (size_t k = 0; k < anchored.size(); ++k) {
        if (k == 0 || anchorOf(anchored[k]) != anchorOf(anchored[k - 1]))
            units.emplace_back();
        units.back().push_back(anchored[k]);
    }
    m_plain = {};
    addPasses(m_plain, units, kAnchorsPerPass);

    // Weakest first: they make the ungated pass, the rest are gated. With no more than kBuckets units, no gate.
    std::vector<std::pair<double, std::vector<int>>> rated;
    for (std::vector<int> &unit : units)
        rated.emplace_back(
            bytesOf(m_sequences[size_t(unit.front())].bits, m_sequences[size_t(unit.front())].anchor).passRate(),
            std::move(unit));
    std::stable_sort(rated.begin(), rated.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    for (size_t u = 0; u < units.size(); ++u)
        units[u] = std::move(rated[u].second);
    const size_t ungated = std::min(units.size(), size_t(kBuckets));
    m_gated = {};
    addPasses(m_gated, std::vector<std::vector<int>>(units.begin(), units.begin() + ptrdiff_t(ungated)), kBuckets);
    m_ungatedPasses = m_gated.passes;
    m_passGate.assign(size_t(m_gated.passes), 0);
    // The gate's buckets two by two: the passes of a pair's anchors run only where the gate found one of them.
    const std::vector<std::vector<int>> gated(units.begin() + ptrdiff_t(ungated), units.end());
    std::vector<BucketBytes> bytes;
    const std::vector<std::vector<size_t>> gateBuckets = assignBuckets(gated, gated.empty() ? 0 : 1, [&](int i) {
        return bytesOf(m_sequences[size_t(i)].bits, m_sequences[size_t(i)].anchor);
    }, bytes);
    m_gate.assign(size_t(kAnchor * 256), 0);
    for (size_t b = 0; b < gateBuckets.size(); ++b)
        for (int j = 0; j < kAnchor && !gateBuckets[b].empty(); ++j)
            for (int v = 0; v < 256; ++v)
                if (bytes[b].sets[size_t(j)][size_t(v >> 6)] >> (v & 63) & 1)
                    m_gate[size_t(j * 256 + v)] |= uint8_t(1u << b);
    for (size_t b = 0; b < gateBuckets.size(); b += 2) {
        std::vector<std::vector<int>> pair;
        for (size_t k = b; k < b + 2 && k < gateBuckets.size(); ++k)
            for (size_t u : gateBuckets[k])
                pair.push_back(gated[u]);
        if (pair.empty())
            continue;
        addPasses(m_gated, pair, kAnchorsPerPass);
        m_passGate.resize(size_t(m_gated.passes), uint8_t(3u << b));
    }
    m_isa = best();
}

bool SequenceScreen::verify(const Entry &e, const uint8_t *p) const
{
    for (int k = 0; k < e.length; ++k)
        if (!(e.bits[size_t(k)][p[k] >> 6] >> (p[k] & 63) & 1))
            return false;
    return true;
}

void SequenceScreen::verifyCandidates(const Layout &layout, const Candidate *c, size_t count, const uint8_t *data,
                                      int64_t n, int64_t from, int64_t to, std::vector<Match> &out) const
{
    for (size_t k = 0; k < count; ++k) {
        for (unsigned bits = c[k].buckets; bits; bits &= bits - 1) {
            const std::vector<int> &bucket
                = layout.buckets[size_t(c[k].pass) * kBuckets + size_t(std::countr_zero(bits))];
            for (int i : bucket) {
                const Entry &e = m_sequences[size_t(i)];
                const int64_t start = int64_t(c[k].pos) - e.anchor;
                const int64_t end = start + e.length - 1;
                if (start < 0 || end >= n || end < from || end >= to)
                    continue;
                // The anchor's exact bytes first: most candidates fail there, in two instructions.
                if (c[k].pos + 4 <= n) {
                    uint32_t word;
                    std::memcpy(&word, data + c[k].pos, 4);
                    if ((word & e.anchorMask) != e.anchorValue)
                        continue;
                }
                if (verify(e, data + start))
                    out.push_back({ e.tag, end });
            }
        }
    }
}

void SequenceScreen::findRuns(const uint8_t *data, int64_t n, int64_t from, int64_t to, std::vector<Run> &runs,
                              Isa isa) const
{
    for (size_t g = 0; g < m_runs.size();) {
        // The sequences of one byte, shortest first (build()): the first decides the words looked at.
        size_t groupEnd = g;
        while (groupEnd < m_runs.size() && m_sequences[size_t(m_runs[groupEnd])].runByte == m_sequences[size_t(m_runs[g])].runByte)
            ++groupEnd;
        const Entry &e = m_sequences[size_t(m_runs[g])];
        const uint8_t c = uint8_t(e.runByte);
        // A run of at least `length` bytes holds a whole word of `word` bytes at an offset divisible by `word`
        // when word <= (length + 1) / 2: only those words are looked at until one is all `c`.
        const int word = e.length >= 15 ? 8 : e.length >= 7 ? 4 : 2;
        const uint64_t all = 0x0101010101010101ull * c;
        const uint64_t mask = word == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * word)) - 1;
        // A run that ends in [from, to) has its shortest sequence's bytes after from - kMaxLength: no word before
        // that is looked at (a range of a segment is screened with all the segment's data after it).
        int64_t at = std::max<int64_t>(0, from - kMaxLength) / word * word;
        while (at + word <= n && at < to) {
#ifdef HITSCOPE_SCREEN_X86
            if (word == 8 && isa != Isa::Scalar) {
                at = nextWordAvx2(data, at, n, all);
                if (at + word > n)
                    break;
            } else if (isa != Isa::Scalar) {
                // Short runs are looked for a word of two or four at a time: first skip to where two bytes c
                // meet, back to the word that holds the first of them.
                at = nextPairAvx2(data, at, n, c) / word * word;
                if (at + word > n)
                    break;
            }
#endif
            uint64_t w = 0;
            if (at + 8 <= n)
                std::memcpy(&w, data + at, 8);
            else
                for (int k = 0; k < word; ++k)
                    w |= uint64_t(data[at + k]) << (8 * k);
            if (((w ^ all) & mask) != 0) {
                at += word;
                continue;
            }
            int64_t begin = at, end = at + word;
            while (begin > 0 && data[begin - 1] == c)
                --begin;
            for (uint64_t x; end + 8 <= n; end += 8) {
                std::memcpy(&x, data + end, 8);
                if (x != all)
                    break;
            }
            while (end < n && data[end] == c)
                ++end;
            for (size_t k = g; k < groupEnd; ++k) {
                const Entry &s = m_sequences[size_t(m_runs[k])];
                if (end - begin < s.length)
                    break; // the others are longer still
                const int64_t first = std::max(begin + s.length - 1, from);
                const int64_t last = std::min(end - 1, to - 1);
                if (first <= last)
                    runs.push_back({ s.tag, first, last });
            }
            at = (end / word + 1) * word;
        }
        g = groupEnd;
    }
}

void SequenceScreen::scan(const uint8_t *data, int64_t n, int64_t from, int64_t to, std::vector<Match> &out,
                          std::vector<Run> &runs, Isa isa) const
{
    if (!m_runs.empty())
        findRuns(data, n, from, to, runs, isa);
    if (m_plain.passes == 0 || n <= 0)
        return;
    // On the stack: scan() runs once per segment, and a buffer from the heap of this size is fresh pages from
    // the kernel every time.
    Candidate candidates[kRoom];
    // The vector loops need room for a step's candidates of every pass.
    if (isa == Isa::Avx512Vbmi && size_t(m_gated.passes) * 64 > kRoom)
        isa = Isa::Avx512;
    if (size_t(m_plain.passes) * 64 > kRoom)
        isa = Isa::Scalar;
    const Layout &layout = isa == Isa::Avx512Vbmi ? m_gated : m_plain;
    // A match that ends at `from` or later starts at most kMaxLength - 1 bytes before it, and its anchor lies
    // inside it, before its end.
    int64_t i = std::max<int64_t>(0, from - (kMaxLength - 1));
    const int64_t last = std::min(n, to);
    while (i < last) {
        size_t count = 0;
        // The vector loops stop short of the end (their loads read 3 bytes ahead) or when the room is used up;
        // the scalar loop takes the end only.
        int64_t vectorEnd = i;
#ifdef HITSCOPE_SCREEN_X86
        if (isa == Isa::Avx512Vbmi) {
            vectorEnd = std::min(last, n - 66);
            i = candidatesVbmi(data, i, vectorEnd, m_gate.data(), layout.lo.data(), layout.hi.data(), layout.passes,
                               m_ungatedPasses, m_passGate.data(), candidates, count);
        } else if (isa == Isa::Avx512) {
            vectorEnd = std::min(last, n - 66);
            i = candidatesAvx512(data, i, vectorEnd, layout.lo.data(), layout.hi.data(), layout.passes, candidates,
                                 count);
        } else if (isa == Isa::Avx2) {
            vectorEnd = std::min(last, n - 34);
            i = candidatesAvx2(data, i, vectorEnd, layout.lo.data(), layout.hi.data(), layout.passes, candidates,
                               count);
        }
#else
        (void)isa;
#endif
        if (i >= vectorEnd)
            i = candidatesScalar(data, n, i, last, layout.lo.data(), layout.hi.data(), layout.passes, candidates,
                                 count);
        verifyCandidates(layout, candidates, count, data, n, from, to, out);
    }
}

} // namespace Hitscope
