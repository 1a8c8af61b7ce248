// SPDX-License-Identifier: GPL-3.0-or-later
#include "prioritymatcher.h"

#include "pattern/nfa.h"

#include <algorithm>

namespace Hitscope {

bool PriorityMatcher::fits(const Regex &regex)
{
    // The NFA estimate counts what compile() emits, a copy per counted iteration, within a small factor.
    return Nfa::estimateStates(regex) <= kMaxProgram;
}

PriorityMatcher::PriorityMatcher(const Regex &regex, Choice choice)
    : m_choice(choice)
{
    if (regex.isValid())
        compile(regex, regex.root);
    emit({ Op::Match });
    // What the threads at the start can consume first (assertions taken as holding: a superset).
    std::vector<bool> visited(m_program.size(), false);
    std::vector<int> stack { 0 };
    while (!stack.empty()) {
        const int pc = stack.back();
        stack.pop_back();
        if (pc < 0 || size_t(pc) >= m_program.size() || visited[size_t(pc)])
            continue;
        visited[size_t(pc)] = true;
        const Inst &inst = m_program[size_t(pc)];
        switch (inst.op) {
        case Op::Bytes:
            m_first |= m_sets[size_t(inst.set)];
            break;
        case Op::Split:
            stack.push_back(inst.x);
            stack.push_back(inst.y);
            break;
        case Op::Jump:
            stack.push_back(inst.x);
            break;
        case Op::Assert:
            stack.push_back(pc + 1);
            break;
        case Op::Match:
            m_emptyMatch = true;
            break;
        }
    }
}

int PriorityMatcher::emit(Inst inst)
{
    m_program.push_back(inst);
    return int(m_program.size()) - 1;
}

void PriorityMatcher::compile(const Regex &regex, int node)
{
    const Regex::Node &n = regex.nodes[size_t(node)];
    switch (n.type) {
    case Regex::Node::Type::Empty:
        return;
    case Regex::Node::Type::Bytes: {
        // Hex strings and case folding repeat the same few sets; share them.
        auto it = std::find(m_sets.begin(), m_sets.end(), n.bytes);
        Inst inst { Op::Bytes };
        inst.set = int(it - m_sets.begin());
        if (it == m_sets.end())
            m_sets.push_back(n.bytes);
        emit(inst);
        return;
    }
    case Regex::Node::Type::Concat:
        for (int c : n.children)
            compile(regex, c);
        return;
    case Regex::Node::Type::Alternate: {
        // split L1, next; L1: a; jump end; next: split L2, next2; ...; last alternative inline.
        std::vector<int> jumps;
        for (size_t i = 0; i < n.children.size(); ++i) {
            if (i + 1 == n.children.size()) {
                compile(regex, n.children[i]);
                break;
            }
            const int split = emit({ Op::Split });
            m_program[size_t(split)].x = split + 1;
            compile(regex, n.children[i]);
            jumps.push_back(emit({ Op::Jump }));
            m_program[size_t(split)].y = int(m_program.size());
        }
        for (int j : jumps)
            m_program[size_t(j)].x = int(m_program.size());
        return;
    }
    case Regex::Node::Type::Repeat:
        compileRepeat(regex, n);
        return;
    case Regex::Node::Type::Assert: {
        Inst inst { Op::Assert };
        inst.assertion = n.assertion;
        emit(inst);
        return;
    }
    }
}

void PriorityMatcher::compileRepeat(const Regex &regex, const Regex::Node &n)
{
    const int child = n.children.front();
    for (int i = 0; i < n.min; ++i)
        compile(regex, child);
    // A split's preferred branch is taking one more repetition when greedy, leaving when lazy.
    auto setBranches = [&](int split, int body, int out) {
        m_program[size_t(split)].x = n.greedy ? body : out;
        m_program[size_t(split)].y = n.greedy ? out : body;
    };
    if (n.max < 0) {
        const int split = emit({ Op::Split });
        compile(regex, child);
        Inst back { Op::Jump };
        back.x = split;
        emit(back);
        setBranches(split, split + 1, int(m_program.size()));
        return;
    }
    // x{0,k} as nested optionals: each one may leave to the common end.
    std::vector<int> splits;
    for (int i = n.min; i < n.max; ++i) {
        splits.push_back(emit({ Op::Split }));
        compile(regex, child);
    }
    const int out = int(m_program.size());
    for (int s : splits)
        setBranches(s, s + 1, out);
}

namespace {

struct Scratch
{
    std::vector<int> clist, nlist, stack;
    std::vector<uint32_t> seen;
    uint32_t generation = 0;
};

thread_local Scratch t_scratch;

} // namespace

void PriorityMatcher::addThread(std::vector<int> &list, std::vector<uint32_t> &seen, uint32_t generation, int pc,
                                int64_t pos, int64_t windowEnd, int64_t fileSize, const ByteAt &byteAt) const
{
    // Depth first, preferred branch first, so that `list` stays in priority order; an explicit stack
    // because long counted repeats nest thousands of splits.
    std::vector<int> &stack = t_scratch.stack;
    stack.clear();
    stack.push_back(pc);
    while (!stack.empty()) {
        const int p = stack.back();
        stack.pop_back();
        if (seen[size_t(p)] == generation)
            continue;
        seen[size_t(p)] = generation;
        const Inst &inst = m_program[size_t(p)];
        switch (inst.op) {
        case Op::Jump:
            stack.push_back(inst.x);
            break;
        case Op::Split:
            stack.push_back(inst.y);
            stack.push_back(inst.x);
            break;
        case Op::Assert: {
            bool ok = false;
            switch (inst.assertion) {
            case Assertion::FileStart:
                ok = pos == 0;
                break;
            case Assertion::FileEnd:
                ok = pos == fileSize;
                break;
            case Assertion::WordBoundary:
            case Assertion::NotWordBoundary: {
                // YARA takes a boundary for granted where it cannot look on both sides.
                bool boundary = true;
                if (!(pos == 0) && pos < windowEnd)
                    boundary = isWordByte(byteAt(pos)) != isWordByte(byteAt(pos - 1));
                ok = (inst.assertion == Assertion::WordBoundary) == boundary;
                break;
            }
            case Assertion::WideWordBoundary:
            case Assertion::WideNotWordBoundary: {
                const auto wordChar = [&](int64_t p) {
                    return p >= 0 && p + 1 < fileSize && isWordByte(byteAt(p)) && byteAt(p + 1) == 0;
                };
                bool boundary = true;
                if (pos >= 2 && pos < windowEnd)
                    boundary = wordChar(pos) != wordChar(pos - 2);
                ok = (inst.assertion == Assertion::WideWordBoundary) == boundary;
                break;
            }
            }
            if (ok)
                stack.push_back(p + 1);
            break;
        }
        case Op::Bytes:
        case Op::Match:
            list.push_back(p);
            break;
        }
    }
}

int64_t PriorityMatcher::match(int64_t start, int64_t fileSize, const ByteAt &byteAt) const
{
    Scratch &s = t_scratch;
    if (s.seen.size() < m_program.size()) {
        s.seen.assign(m_program.size(), 0);
        s.generation = 0;
    }
    auto nextGeneration = [&] {
        if (++s.generation == 0) {
            std::fill(s.seen.begin(), s.seen.end(), 0);
            s.generation = 1;
        }
        return s.generation;
    };
    // Chained hex strings are pieces YARA matches separately: their gaps have no limit.
    const int64_t windowEnd = m_choice == Choice::Shortest ? fileSize : std::min(fileSize, start + kScanLimit);
    if (!m_emptyMatch && (start >= windowEnd || !m_first.test(byteAt(start))))
        return -1;
    // clist/nlist are swapped below; addThread uses s.stack, so lists must not alias it.
    std::vector<int> clist = std::move(s.clist);
    std::vector<int> nlist = std::move(s.nlist);
    clist.clear();
    addThread(clist, s.seen, nextGeneration(), 0, start, windowEnd, fileSize, byteAt);
    int64_t best = -1;
    for (int64_t pos = start; !clist.empty(); ++pos) {
        nlist.clear();
        const uint32_t gen = nextGeneration();
        const bool canConsume = pos < windowEnd;
        const uint8_t byte = canConsume ? byteAt(pos) : 0;
        for (int pc : clist) {
            const Inst &inst = m_program[size_t(pc)];
            if (inst.op == Op::Match) {
                best = pos - start;
                if (m_choice == Choice::Shortest)
                    nlist.clear();
                // Threads after this one have lower priority: a backtracking engine never gets to them.
                break;
            }
            if (canConsume && m_sets[size_t(inst.set)].test(byte))
                addThread(nlist, s.seen, gen, pc + 1, pos + 1, windowEnd, fileSize, byteAt);
        }
        if (m_choice == Choice::Shortest && best >= 0)
            break;
        std::swap(clist, nlist);
    }
    s.clist = std::move(clist);
    s.nlist = std::move(nlist);
    // YARA never reports an empty match: a regex whose preferred match at a start is empty has none there.
    return best == 0 ? -1 : best;
}

} // namespace Hitscope
