// SPDX-License-Identifier: GPL-3.0-or-later
#include "atomextractor.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "automata/bytefrequency.h"

namespace Hitscope {

namespace {

using Result = AtomExtractor::Result;
using Atom = AtomExtractor::Atom;

/// Bits a position contributes: rare, exact bytes filter best; zeros, spaces and the like are everywhere.
int positionBits(const ByteSet &set)
{
    const size_t n = set.count();
    if (n == 0 || n >= 64)
        return 0;
    int bits = 8 - int(std::ceil(std::log2(double(n))));
    if (n == 1) {
        const int b = int(set._Find_first());
        for (int common : { 0x00, 0xff, 0x20, 0x0a, 0x90, 0xcc })
            if (b == common)
                bits -= 4;
        // The opcode bytes of code are common too (8B 44 24 fills executables): no more than they tell. Letters
        // and digits keep their 8 bits (text atoms are chosen among them anyway).
        const bool alnum = (b >= '0' && b <= '9') || ((b | 0x20) >= 'a' && (b | 0x20) <= 'z');
        if (!alnum)
            bits = std::min(bits, int(std::floor(-std::log2(byteFrequency(b) / 256))));
    }
    return std::max(bits, 0);
}

/// A byte that repeats the one before it adds little: runs (`----`, `====`, zeros) fill text and binaries alike.
constexpr int kRepeatedByteBits = 2;

class Extractor
{
public:
    Extractor(const Regex &regex, int maxAtoms)
        : m_regex(regex)
        , m_maxAtoms(maxAtoms)
    {
    }

    Result run(int node) { return extract(node, 0); }

private:
    // One element of a concatenation: a byte position (set) or a sub-pattern with its own atoms.
    struct Element
    {
        const ByteSet *set = nullptr;
        int node = -1;
    };

    void flatten(int node, std::vector<Element> &out, int depth)
    {
        const Regex::Node &n = m_regex.nodes[size_t(node)];
        if (n.type == Regex::Node::Type::Bytes) {
            out.push_back({ &n.bytes, -1 });
        } else if (n.type == Regex::Node::Type::Concat && depth < 64) {
            for (int c : n.children)
                flatten(c, out, depth + 1);
        } else if (n.type == Regex::Node::Type::Repeat && n.min == n.max && n.min <= 16
                   && m_regex.nodes[size_t(n.children.front())].type == Regex::Node::Type::Bytes) {
            for (int i = 0; i < n.min; ++i)
                out.push_back({ &m_regex.nodes[size_t(n.children.front())].bytes, -1 });
        } else if (n.type == Regex::Node::Type::Empty || n.type == Regex::Node::Type::Assert) {
            // Zero-width: the positions either side are neighbours in every match.
        } else {
            out.push_back({ nullptr, node });
        }
    }

    Result extract(int node, int depth)
    {
        Result none;
        if (depth > 64)
            return none;
        const Regex::Node &n = m_regex.nodes[size_t(node)];
        switch (n.type) {
        case Regex::Node::Type::Empty:
        case Regex::Node::Type::Assert:
            return none;
        case Regex::Node::Type::Repeat:
            return n.min >= 1 ? extract(n.children.front(), depth + 1) : none;
        case Regex::Node::Type::Alternate: {
            Result all;
            all.quality = 1 << 20;
            all.maxBefore = 0;
            for (int c : n.children) {
                Result r = extract(c, depth + 1);
                if (r.atoms.empty() || int(all.atoms.size() + r.atoms.size()) > m_maxAtoms)
                    return none;
                all.quality = std::min(all.quality, r.quality);
                all.maxBefore = all.maxBefore < 0 || r.maxBefore < 0 ? -1 : std::max(all.maxBefore, r.maxBefore);
                all.atoms.insert(all.atoms.end(), r.atoms.begin(), r.atoms.end());
            }
            return all;
        }
        case Regex::Node::Type::Bytes:
        case Regex::Node::Type::Concat: {
            std::vector<Element> elements;
            flatten(node, elements, depth);
            Result best;
            // before[k]: the most bytes elements [0, k) match (-1: unbounded).
            std::vector<int> before(elements.size() + 1, 0);
            for (size_t k = 0; k < elements.size(); ++k) {
                const int len = elements[k].set ? 1 : m_regex.maxLength(elements[k].node);
                before[k + 1] = before[k] < 0 || len < 0 ? -1 : std::min(before[k] + len, 1 << 24);
            }
            auto plus = [](int a, int b) { return a < 0 || b < 0 ? -1 : a + b; };
            for (size_t k = 0; k < elements.size(); ++k) {
                if (elements[k].set)
                    continue;
                Result r = extract(elements[k].node, depth + 1);
                r.maxBefore = plus(before[k], r.maxBefore);
                if (!r.atoms.empty() && r.quality > best.quality)
                    best = std::move(r);
            }
            // Runs of byte positions, widened by the positions every match of the sub-patterns either side ends
            // or starts with (the digit around the dot of an IP address regex): their best window of up to
            // kMaxAtomLength.
            for (size_t i = 0; i <= elements.size();) {
                size_t j = i;
                while (j < elements.size() && elements[j].set)
                    ++j;
                std::vector<ByteSet> run;
                if (i > 0)
                    run = edge(elements[i - 1].node, true, depth + 1);
                std::reverse(run.begin(), run.end());
                // An atom in the left edge starts inside element i - 1, so before the end of elements [0, i).
                const int leftEdge = int(run.size());
                for (size_t k = i; k < j; ++k)
                    run.push_back(*elements[k].set);
                if (j < elements.size()) {
                    const std::vector<ByteSet> head = edge(elements[j].node, false, depth + 1);
                    run.insert(run.end(), head.begin(), head.end());
                }
                // Each position's bits once: runs of hex strings are hundreds of positions, windows 16.
                std::vector<int> bits(run.size()), repeated(run.size());
                for (size_t k = 0; k < run.size(); ++k) {
                    bits[k] = positionBits(run[k]);
                    repeated[k] = k > 0 && run[k] == run[k - 1] && run[k].count() == 1 ? kRepeatedByteBits : bits[k];
                }
                for (size_t w = 0; w < run.size(); ++w) {
                    const size_t len = std::min<size_t>(AtomExtractor::kMaxAtomLength, run.size() - w);
                    int q = bits[w];
                    for (size_t k = w + 1; k < w + len; ++k)
                        q += repeated[k];
                    if (q > best.quality) {
                        best.atoms = { Atom(run.begin() + std::ptrdiff_t(w), run.begin() + std::ptrdiff_t(w + len)) };
                        best.quality = q;
                        best.maxBefore = plus(before[i], std::max(0, int(w) - leftEdge));
                    }
                }
                i = j + 1;
            }
            return best;
        }
        }
        return none;
    }

    /// The bytes a non-empty match of `node` can start with (`back`: end with).
    ByteSet first(int node, bool back, int depth) const
    {
        const Regex::Node &n = m_regex.nodes[size_t(node)];
        ByteSet out;
        if (depth > 64)
            return out.set();
        switch (n.type) {
        case Regex::Node::Type::Bytes:
            return n.bytes;
        case Regex::Node::Type::Concat:
            for (size_t k = 0; k < n.children.size(); ++k) {
                const int c = n.children[back ? n.children.size() - 1 - k : k];
                out |= first(c, back, depth + 1);
                if (m_regex.minLength(c) > 0)
                    break;
            }
            return out;
        case Regex::Node::Type::Alternate:
            for (int c : n.children)
                out |= first(c, back, depth + 1);
            return out;
        case Regex::Node::Type::Repeat:
            return first(n.children.front(), back, depth + 1);
        default:
            return out;
        }
    }

    /// Positions every match of `node` starts with (`back`: ends with, the last one first), up to
    /// kMaxAtomLength; `whole` when the match is exactly those positions.
    std::vector<ByteSet> edge(int node, bool back, int depth, bool *whole = nullptr) const
    {
        const Regex::Node &n = m_regex.nodes[size_t(node)];
        constexpr size_t kMax = AtomExtractor::kMaxAtomLength;
        bool all = false;
        std::vector<ByteSet> out;
        if (depth > 64) {
        } else if (n.type == Regex::Node::Type::Bytes) {
            out.push_back(n.bytes);
            all = true;
        } else if (n.type == Regex::Node::Type::Empty || n.type == Regex::Node::Type::Assert) {
            all = true;
        } else if (n.type == Regex::Node::Type::Concat) {
            all = true;
            for (size_t k = 0; k < n.children.size() && all; ++k) {
                bool childWhole = false;
                const int c = n.children[back ? n.children.size() - 1 - k : k];
                const std::vector<ByteSet> e = edge(c, back, depth + 1, &childWhole);
                out.insert(out.end(), e.begin(), e.end());
                all = childWhole && out.size() <= kMax;
            }
        } else if (n.type == Regex::Node::Type::Alternate && !n.children.empty()) {
            std::vector<std::vector<ByteSet>> edges;
            size_t length = kMax;
            all = true;
            for (int c : n.children) {
                bool childWhole = false;
                edges.push_back(edge(c, back, depth + 1, &childWhole));
                length = std::min(length, edges.back().size());
                all = all && childWhole && edges.back().size() == edges.front().size();
            }
            out.assign(length, ByteSet());
            for (const auto &e : edges)
                for (size_t k = 0; k < length; ++k)
                    out[k] |= e[k];
            all = all && length == edges.front().size();
        } else if (n.type == Regex::Node::Type::Repeat && n.min >= 1) {
            bool childWhole = false;
            const std::vector<ByteSet> e = edge(n.children.front(), back, depth + 1, &childWhole);
            for (int r = 0; r < n.min && out.size() < kMax; ++r) {
                out.insert(out.end(), e.begin(), e.end());
                if (!childWhole)
                    break;
            }
            all = childWhole && n.min == n.max && out.size() <= kMax;
        }
        if (out.size() > kMax) {
            out.resize(kMax);
            all = false;
        }
        // Where no position is fixed (an optional first byte), the set of bytes a match starts with still is.
        if (out.empty() && !all && m_regex.minLength(node) > 0)
            out.push_back(first(node, back, depth));
        if (whole)
            *whole = all;
        return out;
    }

    const Regex &m_regex;
    const int m_maxAtoms;
};

} // namespace

AtomExtractor::Result AtomExtractor::extract(const Regex &regex, int maxAtoms)
{
    if (!regex.isValid())
        return {};
    Result r = Extractor(regex, maxAtoms).run(regex.root);
    // Identical atoms of several alternatives (case variants of a wide string, say) are scanned once.
    sortUniqueByteSequences(r.atoms);
    return r;
}

} // namespace Hitscope
