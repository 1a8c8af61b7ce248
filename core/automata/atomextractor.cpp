// SPDX-License-Identifier: GPL-3.0-or-later
#include "atomextractor.h"

#include <algorithm>
#include <cmath>

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
        for (int common : { 0x00, 0xff, 0x20, 0x0a, 0x90, 0xcc })
            if (set.test(size_t(common)))
                bits -= 4;
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
        } else if (n.type == Regex::Node::Type::Empty) {
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
            for (int c : n.children) {
                Result r = extract(c, depth + 1);
                if (r.atoms.empty() || int(all.atoms.size() + r.atoms.size()) > m_maxAtoms)
                    return none;
                all.quality = std::min(all.quality, r.quality);
                all.atoms.insert(all.atoms.end(), r.atoms.begin(), r.atoms.end());
            }
            return all;
        }
        case Regex::Node::Type::Bytes:
        case Regex::Node::Type::Concat: {
            std::vector<Element> elements;
            flatten(node, elements, depth);
            Result best;
            // Runs of byte positions: their best window of up to kMaxAtomLength.
            for (size_t i = 0; i < elements.size();) {
                if (!elements[i].set) {
                    Result r = extract(elements[i].node, depth + 1);
                    if (!r.atoms.empty() && r.quality > best.quality)
                        best = std::move(r);
                    ++i;
                    continue;
                }
                size_t j = i;
                while (j < elements.size() && elements[j].set)
                    ++j;
                for (size_t w = i; w < j; ++w) {
                    const size_t len = std::min<size_t>(AtomExtractor::kMaxAtomLength, j - w);
                    int q = 0;
                    for (size_t k = w; k < w + len; ++k)
                        q += k > w && *elements[k].set == *elements[k - 1].set && elements[k].set->count() == 1
                            ? kRepeatedByteBits
                            : positionBits(*elements[k].set);
                    if (q > best.quality) {
                        Atom atom;
                        for (size_t k = w; k < w + len; ++k)
                            atom.push_back(*elements[k].set);
                        best.atoms = { std::move(atom) };
                        best.quality = q;
                    }
                }
                i = j;
            }
            return best;
        }
        }
        return none;
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
    std::sort(r.atoms.begin(), r.atoms.end(), [](const Atom &a, const Atom &b) {
        if (a.size() != b.size())
            return a.size() < b.size();
        for (size_t i = 0; i < a.size(); ++i)
            if (a[i] != b[i])
                return a[i].to_string() < b[i].to_string();
        return false;
    });
    r.atoms.erase(std::unique(r.atoms.begin(), r.atoms.end()), r.atoms.end());
    return r;
}

} // namespace Hitscope
