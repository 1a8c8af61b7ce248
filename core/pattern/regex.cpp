// SPDX-License-Identifier: GPL-3.0-or-later
#include "regex.h"

#include <algorithm>
#include <array>

#include "util/hash.h"

namespace Hitscope {

bool isWordByte(uint8_t b)
{
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_';
}

int Regex::add(Node node)
{
    nodes.push_back(std::move(node));
    return int(nodes.size()) - 1;
}

int Regex::addBytes(const ByteSet &bytes)
{
    Node n;
    n.type = Node::Type::Bytes;
    n.bytes = bytes;
    return add(std::move(n));
}

int Regex::addConcat(std::vector<int> children)
{
    if (children.size() == 1)
        return children.front();
    Node n;
    n.type = children.empty() ? Node::Type::Empty : Node::Type::Concat;
    n.children = std::move(children);
    return add(std::move(n));
}

int Regex::addAlternate(std::vector<int> children)
{
    if (children.size() == 1)
        return children.front();
    Node n;
    n.type = Node::Type::Alternate;
    n.children = std::move(children);
    return add(std::move(n));
}

int Regex::addRepeat(int child, int min, int max)
{
    Node n;
    n.type = Node::Type::Repeat;
    n.children = { child };
    n.min = min;
    n.max = max;
    return add(std::move(n));
}

int Regex::addAssert(Assertion a)
{
    Node n;
    n.type = Node::Type::Assert;
    n.assertion = a;
    return add(std::move(n));
}

Regex Regex::fromLiteral(const char *data, int size, bool caseless)
{
    Regex r;
    std::vector<int> seq;
    seq.reserve(size_t(size));
    for (int i = 0; i < size; ++i) {
        const auto b = uint8_t(data[i]);
        ByteSet set;
        set.set(b);
        if (caseless && ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')))
            set.set(b ^ 0x20);
        seq.push_back(r.addBytes(set));
    }
    r.root = r.addConcat(std::move(seq));
    return r;
}

namespace {
constexpr int kUnbounded = -1;
}

int Regex::minLength() const
{
    return root < 0 ? 0 : minLength(root);
}

int Regex::maxLength() const
{
    return root < 0 ? 0 : maxLength(root);
}

int Regex::minLength(int node) const
{
    const Node &n = nodes[size_t(node)];
    switch (n.type) {
    case Node::Type::Empty:
    case Node::Type::Assert:
        return 0;
    case Node::Type::Bytes:
        return 1;
    case Node::Type::Concat: {
        int sum = 0;
        for (int c : n.children)
            sum = std::min(sum + minLength(c), kLengthCap);
        return sum;
    }
    case Node::Type::Alternate: {
        int best = kLengthCap;
        for (int c : n.children)
            best = std::min(best, minLength(c));
        return n.children.empty() ? 0 : best;
    }
    case Node::Type::Repeat:
        return int(std::min<int64_t>(int64_t(n.min) * minLength(n.children.front()), kLengthCap));
    }
    return 0;
}

int Regex::maxLength(int node) const
{
    const Node &n = nodes[size_t(node)];
    switch (n.type) {
    case Node::Type::Empty:
    case Node::Type::Assert:
        return 0;
    case Node::Type::Bytes:
        return 1;
    case Node::Type::Concat: {
        int sum = 0;
        for (int c : n.children) {
            const int l = maxLength(c);
            if (l == kUnbounded)
                return kUnbounded;
            sum = std::min(sum + l, kLengthCap);
        }
        return sum;
    }
    case Node::Type::Alternate: {
        int best = 0;
        for (int c : n.children) {
            const int l = maxLength(c);
            if (l == kUnbounded)
                return kUnbounded;
            best = std::max(best, l);
        }
        return best;
    }
    case Node::Type::Repeat: {
        const int l = maxLength(n.children.front());
        if (l == 0)
            return 0;
        if (l == kUnbounded || n.max < 0)
            return kUnbounded;
        return int(std::min<int64_t>(int64_t(l) * n.max, kLengthCap));
    }
    }
    return 0;
}

namespace {

/// A set as a 256-bit number, words[3] the highest: comparing them from the top gives to_string()'s order, which
/// took two 256-character strings per comparison (the largest part of sorting a rule set's atoms at start-up).
std::array<uint64_t, 4> wordsOf(const ByteSet &set)
{
    std::array<uint64_t, 4> words {};
    for (size_t w = 0; w < words.size(); ++w)
        words[w] = ((set >> (64 * w)) & ByteSet(~uint64_t(0))).to_ullong();
    return words;
}

} // namespace

bool byteSequenceLess(const std::vector<ByteSet> &a, const std::vector<ByteSet> &b)
{
    if (a.size() != b.size())
        return a.size() < b.size();
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) {
            const std::array<uint64_t, 4> x = wordsOf(a[i]), y = wordsOf(b[i]);
            return std::lexicographical_compare(x.rbegin(), x.rend(), y.rbegin(), y.rend());
        }
    return false;
}

void sortUniqueByteSequences(std::vector<std::vector<ByteSet>> &sequences)
{
    std::sort(sequences.begin(), sequences.end(), byteSequenceLess);
    sequences.erase(std::unique(sequences.begin(), sequences.end()), sequences.end());
}

uint64_t Regex::hash(uint64_t h) const
{
    const int32_t rootId = root;
    h = hashBytes(h, &rootId, sizeof rootId);
    for (const Node &n : nodes) {
        const int32_t fields[] = { int32_t(n.type), int32_t(n.assertion), n.min, n.max, n.greedy ? 1 : 0,
                                   int32_t(n.children.size()) };
        h = hashBytes(h, fields, sizeof fields);
        h = hashVector(h, n.children);
        for (const uint64_t word : wordsOf(n.bytes))
            h = hashBytes(h, &word, sizeof word);
    }
    return h;
}

bool Regex::usesAssertion(Assertion a) const
{
    return std::any_of(nodes.begin(), nodes.end(),
                       [a](const Node &n) { return n.type == Node::Type::Assert && n.assertion == a; });
}

Regex Regex::reversed() const
{
    Regex r = *this;
    for (Node &n : r.nodes) {
        if (n.type == Node::Type::Concat)
            std::reverse(n.children.begin(), n.children.end());
        else if (n.type == Node::Type::Assert && n.assertion == Assertion::FileStart)
            n.assertion = Assertion::FileEnd;
        else if (n.type == Node::Type::Assert && n.assertion == Assertion::FileEnd)
            n.assertion = Assertion::FileStart;
    }
    return r;
}

} // namespace Hitscope
