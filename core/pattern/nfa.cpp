// SPDX-License-Identifier: GPL-3.0-or-later
#include "nfa.h"

#include <algorithm>
#include <unordered_map>

#include "pattern/bytecontext.h"

namespace Hitscope {

namespace {

using Type = Regex::Node::Type;

uint64_t saturatingAdd(uint64_t a, uint64_t b)
{
    const uint64_t s = a + b;
    return s < a ? UINT64_MAX : s;
}

uint64_t saturatingMul(uint64_t a, uint64_t b)
{
    if (a != 0 && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

uint64_t estimateNode(const Regex &r, int i)
{
    const Regex::Node &n = r.nodes[size_t(i)];
    switch (n.type) {
    case Type::Empty:
        return 0;
    case Type::Bytes:
        return 2; // the trie may add a node per byte
    case Type::Assert:
        return 1;
    case Type::Concat:
    case Type::Alternate: {
        uint64_t sum = 1;
        for (int c : n.children)
            sum = saturatingAdd(sum, estimateNode(r, c));
        return sum;
    }
    case Type::Repeat: {
        const uint64_t child = saturatingAdd(estimateNode(r, n.children.front()), 1);
        const uint64_t copies = n.max < 0 ? uint64_t(std::max(n.min, 1)) : uint64_t(std::max(n.max, 0));
        return saturatingAdd(saturatingMul(copies, child), 1);
    }
    }
    return 1;
}

/// Flattens nested concatenations (and fixed repeats) at the head of a pattern into a list of items.
void flatten(const Regex &r, int i, std::vector<int> &items)
{
    const Regex::Node &n = r.nodes[size_t(i)];
    if (n.type == Type::Concat) {
        for (int c : n.children)
            flatten(r, c, items);
    } else if (n.type == Type::Repeat && n.min == n.max && n.min <= 64) {
        for (int k = 0; k < n.min; ++k)
            flatten(r, n.children.front(), items);
    } else if (n.type != Type::Empty) {
        items.push_back(i);
    }
}

struct ByteSetHash
{
    size_t operator()(const ByteSet &s) const { return std::hash<ByteSet>()(s); }
};

class Builder
{
public:
    explicit Builder(Nfa &nfa)
        : m_nfa(nfa)
    {
    }

    uint32_t setId(const ByteSet &s)
    {
        auto [it, inserted] = m_setIds.emplace(s, uint32_t(m_sets.size()));
        if (inserted)
            m_sets.push_back(s);
        return it->second;
    }

    void collectSets(const Regex &r)
    {
        std::vector<int> stack { r.root };
        std::vector<uint8_t> seen(r.nodes.size(), 0);
        while (!stack.empty()) {
            const int i = stack.back();
            stack.pop_back();
            if (seen[size_t(i)])
                continue;
            seen[size_t(i)] = 1;
            const Regex::Node &n = r.nodes[size_t(i)];
            if (n.type == Type::Bytes)
                setId(n.bytes);
            else if (n.type == Type::Assert)
                m_nfa.usedAssertions |= n.assertion == Assertion::FileStart ? Nfa::MaskFileStart
                    : n.assertion == Assertion::FileEnd                    ? Nfa::MaskFileEnd
                                                                           : Nfa::MaskWord;
            for (int c : n.children)
                stack.push_back(c);
        }
    }

    void computeClasses()
    {
        std::array<int, 256> cls {};
        int count = 1;
        auto refine = [&](auto inSet) {
            std::vector<int> remap(size_t(count) * 2, -1);
            int next = 0;
            for (int b = 0; b < 256; ++b) {
                int &slot = remap[size_t(cls[size_t(b)]) * 2 + (inSet(b) ? 1 : 0)];
                if (slot < 0)
                    slot = next++;
                cls[size_t(b)] = slot;
            }
            count = next;
        };
        for (const ByteSet &s : m_sets)
            refine([&](int b) { return s.test(size_t(b)); });
        if (m_nfa.usedAssertions & Nfa::MaskWord)
            refine([](int b) { return isWordByte(uint8_t(b)); });
        m_nfa.numClasses = uint32_t(count);
        m_nfa.classIsWord.assign(size_t(count), 0);
        for (int b = 255; b >= 0; --b) {
            m_nfa.byteClass[size_t(b)] = uint8_t(cls[size_t(b)]);
            m_nfa.classIsWord[size_t(cls[size_t(b)])] = isWordByte(uint8_t(b)) ? 1 : 0;
        }
        m_nfa.classSets.resize(m_sets.size());
        for (size_t i = 0; i < m_sets.size(); ++i)
            for (int b = 0; b < 256; ++b)
                if (m_sets[i].test(size_t(b)))
                    m_nfa.classSets[i].set(uint32_t(cls[size_t(b)]));
    }

    uint32_t newState(Nfa::Kind kind)
    {
        Nfa::State s;
        s.kind = kind;
        m_nfa.states.push_back(s);
        return uint32_t(m_nfa.states.size() - 1);
    }

    void setEdges(uint32_t state, const std::vector<uint32_t> &outs)
    {
        Nfa::State &s = m_nfa.states[state];
        s.edgeBegin = uint32_t(m_nfa.edges.size());
        s.edgeCount = uint32_t(outs.size());
        m_nfa.edges.insert(m_nfa.edges.end(), outs.begin(), outs.end());
    }

    uint32_t consume(const ByteSet &set, uint32_t next)
    {
        const uint32_t id = setId(set);
        const uint32_t s = newState(Nfa::Kind::Consume);
        m_nfa.states[s].arg = id;
        m_nfa.states[s].out = next;
        return s;
    }

    uint32_t epsilon(const std::vector<uint32_t> &outs)
    {
        const uint32_t s = newState(Nfa::Kind::Epsilon);
        setEdges(s, outs);
        return s;
    }

    /// Thompson construction, continuation style: returns the entry of `node` leading to `next`.
    uint32_t compile(const Regex &r, int node, uint32_t next)
    {
        const Regex::Node &n = r.nodes[size_t(node)];
        switch (n.type) {
        case Type::Empty:
            return next;
        case Type::Bytes:
            return consume(n.bytes, next);
        case Type::Assert: {
            const uint32_t s = newState(Nfa::Kind::Assert);
            m_nfa.states[s].assertion = n.assertion;
            m_nfa.states[s].out = next;
            return s;
        }
        case Type::Concat:
            for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
                next = compile(r, *it, next);
            return next;
        case Type::Alternate: {
            if (n.children.empty())
                return next;
            std::vector<uint32_t> outs;
            outs.reserve(n.children.size());
            for (int c : n.children)
                outs.push_back(compile(r, c, next));
            return epsilon(outs);
        }
        case Type::Repeat: {
            const int child = n.children.front();
            uint32_t cur = next;
            int copies = n.min;
            if (n.max < 0) {
                // x{n,} = x^(n-1) x+, where x+ loops back through a split after the body.
                const uint32_t loop = newState(Nfa::Kind::Epsilon);
                const uint32_t body = compile(r, child, loop);
                setEdges(loop, { body, next });
                cur = n.min == 0 ? loop : body;
                copies = std::max(n.min - 1, 0);
            } else {
                // x{n,m} = x^n (x (x ...)?)?
                for (int k = 0; k < n.max - n.min; ++k) {
                    const uint32_t body = compile(r, child, cur);
                    cur = epsilon({ body, next });
                }
            }
            for (int k = 0; k < copies; ++k)
                cur = compile(r, child, cur);
            return cur;
        }
        }
        return next;
    }

    Nfa &m_nfa;
    std::vector<ByteSet> m_sets;
    std::unordered_map<ByteSet, uint32_t, ByteSetHash> m_setIds;
};

struct TrieNode
{
    std::vector<std::pair<uint32_t, uint32_t>> children; ///< (byte set id, node)
    std::vector<std::pair<uint32_t, std::vector<int>>> ends; ///< (pattern, remaining items)
};

} // namespace

uint64_t Nfa::estimateStates(const Regex &regex)
{
    return regex.root < 0 ? 0 : saturatingAdd(estimateNode(regex, regex.root), 2);
}

bool Nfa::build(const std::vector<const Regex *> &patterns, uint32_t maxStates, std::string *error)
{
    *this = Nfa();
    numPatterns = uint32_t(patterns.size());

    uint64_t estimate = 1;
    for (const Regex *r : patterns)
        estimate = saturatingAdd(estimate, estimateStates(*r));
    if (estimate > maxStates) {
        if (error)
            *error = "automaton too large (" + std::to_string(estimate) + " NFA states, at most "
                + std::to_string(maxStates) + ")";
        return false;
    }

    Builder b(*this);
    for (const Regex *r : patterns)
        if (r->root >= 0)
            b.collectSets(*r);

    // Trie of the patterns' literal heads, keyed by byte-set id.
    std::vector<TrieNode> trie(1);
    std::unordered_map<uint64_t, uint32_t> childOf;
    for (size_t p = 0; p < patterns.size(); ++p) {
        const Regex &r = *patterns[p];
        if (r.root < 0)
            continue; // an invalid pattern never matches
        std::vector<int> items;
        flatten(r, r.root, items);
        uint32_t node = 0;
        size_t i = 0;
        for (; i < items.size() && r.nodes[size_t(items[i])].type == Type::Bytes; ++i) {
            const uint32_t set = b.setId(r.nodes[size_t(items[i])].bytes);
            const uint64_t key = (uint64_t(node) << 32) | set;
            auto [it, inserted] = childOf.emplace(key, uint32_t(trie.size()));
            if (inserted) {
                trie[node].children.emplace_back(set, uint32_t(trie.size()));
                trie.emplace_back();
            }
            node = it->second;
        }
        trie[node].ends.emplace_back(uint32_t(p), std::vector<int>(items.begin() + long(i), items.end()));
    }
    b.computeClasses();

    states.reserve(size_t(std::min<uint64_t>(estimate, 1u << 20)));
    for (size_t i = 0; i < trie.size(); ++i)
        b.newState(Kind::Epsilon);
    start = 0;
    std::vector<uint32_t> outs;
    for (size_t t = 0; t < trie.size(); ++t) {
        outs.clear();
        for (const auto &[set, child] : trie[t].children) {
            const uint32_t s = b.newState(Kind::Consume);
            states[s].arg = set;
            states[s].out = child;
            outs.push_back(s);
        }
        for (const auto &[pattern, rest] : trie[t].ends) {
            const Regex &r = *patterns[pattern];
            uint32_t cur = b.newState(Kind::Match);
            states[cur].arg = pattern;
            for (auto it = rest.rbegin(); it != rest.rend(); ++it)
                cur = b.compile(r, *it, cur);
            outs.push_back(cur);
        }
        b.setEdges(uint32_t(t), outs);
    }
    // collectSets saw every Bytes node reachable from the roots, so compiling added no byte set.

    if (usedAssertions) {
        // mask[s] = assertion kinds reachable from s without consuming: a fixpoint over the zero-width
        // edges, propagated backwards from the assertion states.
        std::vector<uint32_t> predBegin(states.size() + 1, 0);
        auto forEachZeroWidth = [&](uint32_t s, auto f) {
            const State &st = states[s];
            if (st.kind == Kind::Epsilon)
                for (uint32_t e = 0; e < st.edgeCount; ++e)
                    f(edges[st.edgeBegin + e]);
            else if (st.kind == Kind::Assert)
                f(st.out);
        };
        for (uint32_t s = 0; s < states.size(); ++s)
            forEachZeroWidth(s, [&](uint32_t t) { ++predBegin[t + 1]; });
        for (size_t i = 1; i < predBegin.size(); ++i)
            predBegin[i] += predBegin[i - 1];
        std::vector<uint32_t> preds(predBegin.back());
        std::vector<uint32_t> fill(predBegin.begin(), predBegin.end() - 1);
        for (uint32_t s = 0; s < states.size(); ++s)
            forEachZeroWidth(s, [&](uint32_t t) { preds[fill[t]++] = s; });
        std::vector<uint32_t> work;
        for (uint32_t s = 0; s < states.size(); ++s) {
            State &st = states[s];
            if (st.kind == Kind::Assert) {
                st.mask = st.assertion == Assertion::FileStart ? MaskFileStart
                    : st.assertion == Assertion::FileEnd       ? MaskFileEnd
                                                               : MaskWord;
                work.push_back(s);
            }
        }
        while (!work.empty()) {
            const uint32_t s = work.back();
            work.pop_back();
            for (uint32_t i = predBegin[s]; i < predBegin[s + 1]; ++i) {
                State &p = states[preds[i]];
                if ((p.mask | states[s].mask) != p.mask) {
                    p.mask |= states[s].mask;
                    work.push_back(preds[i]);
                }
            }
        }
    }
    return true;
}

bool Nfa::assertionHolds(Assertion a, int ctx, Next next) const
{
    switch (a) {
    case Assertion::FileStart:
        return ctx == ByteContext::AtFileStart;
    case Assertion::FileEnd:
        return next == Next::Eof;
    case Assertion::WordBoundary:
    case Assertion::NotWordBoundary: {
        if (next == Next::Unknown)
            return false;
        const bool boundary = (ctx == ByteContext::AfterWord) != (next == Next::Word);
        return boundary == (a == Assertion::WordBoundary);
    }
    case Assertion::WideWordBoundary:
    case Assertion::WideNotWordBoundary:
        return true; // the automata see a superset; PriorityMatcher decides (YaraStringCompiler relaxes them away)
    }
    return false;
}

void Nfa::closure(const uint32_t *kernel, size_t size, bool withStart, int ctx, Next next, Closure &out) const
{
    out.consuming.clear();
    out.matches.clear();
    if (out.stamp.size() != states.size()) {
        out.stamp.assign(states.size(), 0);
        out.epoch = 0;
    }
    if (++out.epoch == 0) {
        std::fill(out.stamp.begin(), out.stamp.end(), 0);
        out.epoch = 1;
    }
    const uint32_t epoch = out.epoch;
    auto run = [&](bool recordMatches) {
        while (!out.stack.empty()) {
            const uint32_t s = out.stack.back();
            out.stack.pop_back();
            const State &st = states[s];
            switch (st.kind) {
            case Kind::Epsilon:
                for (uint32_t e = 0; e < st.edgeCount; ++e) {
                    const uint32_t t = edges[st.edgeBegin + e];
                    if (out.stamp[t] != epoch) {
                        out.stamp[t] = epoch;
                        out.stack.push_back(t);
                    }
                }
                break;
            case Kind::Consume:
                out.consuming.push_back(s);
                break;
            case Kind::Assert:
                if (assertionHolds(st.assertion, ctx, next) && out.stamp[st.out] != epoch) {
                    out.stamp[st.out] = epoch;
                    out.stack.push_back(st.out);
                }
                break;
            case Kind::Match:
                if (recordMatches)
                    out.matches.push_back(st.arg);
                break;
            }
        }
    };
    // The kernel first: whatever the start state reaches afterwards is not reachable from the kernel, so
    // skipping its matches keeps every match non-empty without losing one.
    for (size_t i = 0; i < size; ++i) {
        if (out.stamp[kernel[i]] != epoch) {
            out.stamp[kernel[i]] = epoch;
            out.stack.push_back(kernel[i]);
        }
    }
    run(true);
    if (withStart && out.stamp[start] != epoch) {
        out.stamp[start] = epoch;
        out.stack.push_back(start);
        run(false);
    }
    std::sort(out.matches.begin(), out.matches.end());
    out.matches.erase(std::unique(out.matches.begin(), out.matches.end()), out.matches.end());
}

} // namespace Hitscope
