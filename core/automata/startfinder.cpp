// SPDX-License-Identifier: GPL-3.0-or-later
#include "startfinder.h"

#include <algorithm>
#include <array>
#include <map>

#include "automata/dfabuilder.h"
#include "pattern/nfa.h"

namespace Hitscope {

namespace {

/// Anchored reversed DFAs stay small for any pattern the catalog accepts; past this, simulate the NFA.
constexpr int kMaxReversedStates = 100000;
/// Shorter chains are stepped byte by byte: a skip costs a run-length query.
constexpr uint32_t kMinChain = 4;
/// Memo slots per batch at most, two nodes each; also caps the nodes a walk records.
constexpr size_t kMaxMemoSlots = size_t(1) << 16;
/// Nodes are remembered at offsets divisible by this only: two walks that meet still meet there a few
/// bytes later, and the memo costs an eighth.
constexpr int64_t kSample = 8;
/// ByteReader's blocks: 64 bytes, so that the bytes from an offset down to the sampled one share a block.
constexpr int kBlockShift = 6;
static_assert((int64_t(1) << kBlockShift) % kSample == 0);

enum StateFact : uint8_t { ReportsNow = 1, ReportsPrev = 2, ReportsEof = 4 };

/// The smaller of two starts, -1 meaning none.
int64_t earlier(int64_t a, int64_t b)
{
    return a < 0 ? b : b < 0 ? a : std::min(a, b);
}

/// Caches ByteAt in small blocks: a batch walks the same bytes from many ends, and std::function calls
/// per byte would cost more than the walk itself.
class ByteReader
{
public:
    ByteReader(const StartFinder::ByteAt &at, int64_t fileSize, size_t ends)
        : m_at(at)
        , m_fileSize(fileSize)
    {
        size_t slots = 8;
        while (slots < ends && slots < 1024)
            slots *= 2;
        m_mask = slots - 1;
        m_tags.assign(slots, -1);
        m_data.reset(new uint8_t[slots * kBlock]);
    }

    uint8_t operator()(int64_t pos) { return *at(pos); }

    /// The byte at `pos` in its cached block, which also holds the bytes down to pos & ~63.
    const uint8_t *at(int64_t pos)
    {
        const int64_t block = pos >> kShift;
        const size_t slot = size_t(block) & m_mask;
        if (m_tags[slot] != block) [[unlikely]]
            fill(slot, block);
        return m_data.get() + slot * kBlock + size_t(pos & (kBlock - 1));
    }

private:
    static constexpr int kShift = kBlockShift;
    static constexpr int64_t kBlock = int64_t(1) << kShift;

    void fill(size_t slot, int64_t block)
    {
        const int64_t begin = block << kShift;
        const int64_t end = std::min(begin + kBlock, m_fileSize);
        uint8_t *out = m_data.get() + slot * kBlock;
        for (int64_t p = begin; p < end; ++p)
            out[p - begin] = m_at(p);
        m_tags[slot] = block;
    }

    const StartFinder::ByteAt &m_at;
    const int64_t m_fileSize;
    size_t m_mask = 0;
    std::vector<int64_t> m_tags;
    std::unique_ptr<uint8_t[]> m_data;
};

/// The context before a backwards scan that starts at `end`: the byte after the match, or the end of the
/// file (which is the start of the reversed text).
template<typename Bytes>
int reversedContext(int64_t end, int64_t fileSize, Bytes &bytes)
{
    if (end + 1 >= fileSize)
        return Dfa::AtFileStart;
    return isWordByte(bytes(end + 1)) ? Dfa::AfterWord : Dfa::AfterNonWord;
}

/// The same search without a DFA: the reversed pattern's NFA, stepped one state set at a time.
template<typename Bytes>
int64_t simulateNfa(const Nfa &nfa, int64_t end, int64_t fileSize, Bytes &bytes)
{
    Nfa::Closure closure;
    std::vector<uint32_t> kernel;
    int ctx = reversedContext(end, fileSize, bytes);
    int64_t best = -1;
    for (int64_t j = end; j >= 0; --j) {
        const uint8_t byte = bytes(j);
        // Matches of the kernel here end at j + 1, now that the byte after them is known.
        nfa.closure(kernel.data(), kernel.size(), j == end, ctx,
                    isWordByte(byte) ? Nfa::Next::Word : Nfa::Next::NonWord, closure);
        if (!closure.matches.empty())
            best = j + 1;
        kernel.clear();
        const uint32_t cls = nfa.byteClass[byte];
        for (uint32_t s : closure.consuming)
            if (nfa.classSets[nfa.states[s].arg].test(cls))
                kernel.push_back(nfa.states[s].out);
        std::sort(kernel.begin(), kernel.end());
        kernel.erase(std::unique(kernel.begin(), kernel.end()), kernel.end());
        ctx = isWordByte(byte) ? Dfa::AfterWord : Dfa::AfterNonWord;
        if (kernel.empty())
            return best;
    }
    nfa.closure(kernel.data(), kernel.size(), false, ctx, Nfa::Next::Eof, closure);
    return closure.matches.empty() ? best : 0;
}

} // namespace

/**
 * A pattern's anchored reversed DFA and what the walks need to know about it. A chain is a run of states
 * that each leave the dead state on exactly one set of bytes, the same set for all, through states that
 * report nothing: counted repeats such as [A-Za-z0-9+/]{80,} read backwards. chainLength[s] bytes of
 * runSets[chainSet[s]] lead from s to chainEnd[s], and any other byte on the way to the dead state, so a
 * walk checks the length of the run instead of stepping through it.
 */
struct StartFinder::Reversed
{
    Dfa dfa; ///< numStates == 0: too large, `nfa` is simulated instead
    Nfa nfa;
    bool nfaBuilt = false;
    /// dfa.transitions with kAcceptFlag also set towards chain heads and the dead state: the flag means
    /// "look at the target".
    BigTable transitions;
    std::vector<uint8_t> facts; ///< StateFact bits per state
    std::vector<uint8_t> look;  ///< per state: reports Now/Prev entries, starts a chain, or is dead
    std::vector<uint32_t> chainLength;
    std::vector<uint32_t> chainEnd; ///< premultiplied
    std::vector<uint16_t> chainSet;
    std::vector<std::array<uint8_t, 256>> runSets;

    void prepare();
};

void StartFinder::Reversed::prepare()
{
    const uint32_t n = dfa.numStates;
    const uint32_t nc = dfa.numClasses;
    facts.assign(n, 0);
    for (uint32_t s = 0; s < n; ++s) {
        for (uint32_t i = dfa.acceptIndex[s]; i < dfa.acceptIndex[s + 1]; ++i) {
            const Dfa::AcceptKind kind = Dfa::entryKind(dfa.acceptEntries[i]);
            facts[s] |= kind == Dfa::Now ? ReportsNow : kind == Dfa::Prev ? ReportsPrev : ReportsEof;
        }
    }
    chainLength.assign(n, 0);
    chainEnd.assign(n, 0);
    chainSet.assign(n, 0);

    constexpr uint32_t kNone = UINT32_MAX;
    if (dfa.dead != Dfa::kNoDeadState) {
        const uint32_t dead = dfa.dead / nc;
        // The one state each state leaves the dead state for, and on which classes.
        std::vector<uint32_t> next(n, kNone);
        std::vector<int> setOf(n, -1);
        std::map<std::array<uint64_t, 4>, int> setIds;
        for (uint32_t s = 0; s < n; ++s) {
            if (s == dead)
                continue;
            uint32_t target = kNone;
            std::array<uint64_t, 4> mask {};
            bool single = true;
            for (uint32_t c = 0; c < nc && single; ++c) {
                const uint32_t t = (dfa.transitions[size_t(s) * nc + c] & Dfa::kStateMask) / nc;
                if (t == dead)
                    continue;
                single = target == kNone || target == t;
                target = t;
                mask[c >> 6] |= uint64_t(1) << (c & 63);
            }
            if (!single || target == kNone)
                continue;
            auto [it, inserted] = setIds.emplace(mask, int(setIds.size()));
            if (inserted) {
                std::array<uint8_t, 256> bytes {};
                for (int b = 0; b < 256; ++b)
                    bytes[size_t(b)] = (mask[dfa.byteClass[size_t(b)] >> 6] >> (dfa.byteClass[size_t(b)] & 63)) & 1;
                runSets.push_back(bytes);
            }
            next[s] = target;
            setOf[s] = it->second;
        }
        // A chain may go on through t when t reports nothing and steps on the same bytes.
        auto continues = [&](uint32_t s, uint32_t t) {
            return !(facts[t] & (ReportsNow | ReportsPrev)) && next[t] != kNone && setOf[t] == setOf[s];
        };
        std::vector<uint8_t> mark(n, 0); // 1 on the current path, 2 done
        std::vector<uint32_t> path;
        for (uint32_t s0 = 0; s0 < n; ++s0) {
            if (mark[s0] || next[s0] == kNone)
                continue;
            path.clear();
            for (uint32_t u = s0;;) {
                path.push_back(u);
                mark[u] = 1;
                const uint32_t t = next[u];
                if (!continues(u, t) || mark[t])
                    break;
                u = t;
            }
            for (auto it = path.rbegin(); it != path.rend(); ++it) {
                const uint32_t u = *it;
                const uint32_t t = next[u];
                chainSet[u] = uint16_t(setOf[u]);
                if (continues(u, t) && mark[t] == 2) {
                    chainLength[u] = chainLength[t] + 1;
                    chainEnd[u] = chainEnd[t];
                } else {
                    chainLength[u] = 1;
                    chainEnd[u] = t * nc;
                }
                mark[u] = 2;
            }
        }
        if (setIds.size() > UINT16_MAX)
            std::fill(chainLength.begin(), chainLength.end(), 0);
    }

    look.assign(n, 0);
    for (uint32_t s = 0; s < n; ++s)
        look[s] = (facts[s] & (ReportsNow | ReportsPrev)) || chainLength[s] >= kMinChain;
    if (dfa.dead != Dfa::kNoDeadState)
        look[dfa.dead / nc] = 1;
    transitions = dfa.transitions;
    for (uint32_t &e : transitions)
        if (look[(e & Dfa::kStateMask) / nc])
            e |= Dfa::kAcceptFlag;
}

namespace {

/**
 * Walks the reversed DFA from ends of one file. Nodes (offset, state after reading the byte there) of
 * earlier walks are remembered with the leftmost start found at or below them; a walk that reaches a
 * remembered node stops, as the rest is the same. Memory is bounded: two nodes per slot, offset modulo the
 * slot count, and a walk records at most that many nodes (past them it still walks, without recording).
 * A template only because StartFinder::Reversed is private.
 */
template<typename Reversed>
class Walker
{
public:
    Walker(const Reversed &r, int64_t fileSize, ByteReader &bytes, size_t ends)
        : m_r(r)
        , m_dfa(r.dfa)
        , m_nc(r.dfa.numClasses)
        , m_reciprocal((uint64_t(1) << 32) / m_nc + 1)
        , m_fileSize(fileSize)
        , m_bytes(bytes)
        , m_runs(r.runSets.size())
    {
        if (ends > 1) {
            size_t slots = 256;
            while (slots < ends * 4 && slots < kMaxMemoSlots)
                slots *= 2;
            m_memo.resize(slots * 2);
            m_mask = slots - 1;
            m_pathCap = slots;
        }
    }

    int64_t start(int64_t end)
    {
        const uint32_t *trans = m_r.transitions.data();
        const uint8_t *classOf = m_dfa.byteClass.data();
        uint32_t s = m_dfa.start[size_t(reversedContext(end, m_fileSize, m_bytes))];
        int64_t j = end; // the next byte to read
        int64_t tail = -1; // the leftmost start below the last node recorded
        int64_t unrecorded = -1;
        int64_t head = -1; // found above the first node recorded
        bool look = true;
        m_path.clear();
        ++m_stamp;
        for (;;) {
            if (j < 0) {
                tail = (m_r.facts[index(s)] & ReportsEof) ? 0 : -1;
                break;
            }
            uint32_t e;
            bool skipped = false;
            if (look) {
                const uint32_t si = index(s);
                const uint32_t m = m_r.chainLength[si];
                if (m >= kMinChain) {
                    const int64_t run = runDown(m_r.chainSet[si], j, m);
                    if (run == m) {
                        s = m_r.chainEnd[si];
                        j -= m;
                        skipped = true;
                    } else if (j - run >= 0) {
                        break; // the byte at j - run leaves the chain for the dead state
                    }
                    // else the run reaches the file start: step, so that Eof entries are seen
                }
            }
            int64_t pos;
            if (skipped) {
                e = s | (m_r.look[index(s)] ? Dfa::kAcceptFlag : 0);
                pos = j + 1;
            } else {
                // Step until a transition to look at or a sampled offset: these bytes share a cached block.
                pos = j;
                const int64_t stop = j & ~(kSample - 1);
                const uint8_t *p = m_bytes.at(j);
                for (;; --p, --pos) {
                    e = trans[s + classOf[*p]];
                    s = e & Dfa::kStateMask;
                    if ((e & Dfa::kAcceptFlag) || pos == stop)
                        break;
                }
                j = pos - 1;
            }
            int64_t found = -1;
            look = e & Dfa::kAcceptFlag;
            if (look) {
                if (s == m_dfa.dead)
                    break;
                const uint8_t f = m_r.facts[index(s)];
                found = (f & ReportsNow) ? pos : (f & ReportsPrev) ? pos + 1 : -1;
            }
            if ((pos & (kSample - 1)) || m_memo.empty()) {
                // Not a sampled offset: what it finds belongs to the node recorded last (it lies below it).
                if (found >= 0) {
                    int64_t &into = m_path.empty()        ? head
                        : m_path.size() < m_pathCap ? m_path.back().best
                                                    : unrecorded;
                    into = earlier(into, found);
                }
                continue;
            }
            const Node *slot = &m_memo[(size_t(pos / kSample) & m_mask) * 2];
            if (slot[0].pos == pos && slot[0].state == s) {
                tail = slot[0].best; // it includes what this node finds
                break;
            }
            if (slot[1].pos == pos && slot[1].state == s) {
                tail = slot[1].best; // it includes what this node finds
                break;
            }
            if (m_path.size() < m_pathCap)
                m_path.push_back({ pos, found, s, 0 });
            else
                unrecorded = earlier(unrecorded, found);
        }
        int64_t best = earlier(tail, unrecorded);
        for (auto it = m_path.rbegin(); it != m_path.rend(); ++it) {
            best = earlier(best, it->best);
            remember(it->pos, it->state, best);
        }
        return earlier(best, head);
    }

private:
    /// s / m_nc for premultiplied states without a division (s < 2^31, so the error stays below one).
    uint32_t index(uint32_t s) const { return uint32_t((uint64_t(s) * m_reciprocal) >> 32); }

    struct Node
    {
        int64_t pos = -1;
        int64_t best = -1;
        uint32_t state = 0;
        uint32_t stamp = 0;
    };

    /// Where the same offset comes up again, newer walks and higher offsets are worth more to the walks
    /// still to come (they start at later ends).
    void remember(int64_t pos, uint32_t state, int64_t best)
    {
        Node *slot = &m_memo[(size_t(pos / kSample) & m_mask) * 2];
        const bool first = slot[0].pos != slot[1].pos ? slot[0].pos < slot[1].pos : slot[0].stamp <= slot[1].stamp;
        slot[first ? 0 : 1] = { pos, best, state, m_stamp };
    }

    /// How many bytes at p, p-1, ... lie in the run set, counting up to `need`. One cached run per set:
    /// ends come in ascending order, so the next query mostly extends it by a byte.
    int64_t runDown(uint16_t set, int64_t p, int64_t need)
    {
        const uint8_t *in = m_r.runSets[set].data();
        Run &c = m_runs[set];
        if (c.hi < c.lo || p < c.lo || p - c.hi > need) {
            int64_t q = p;
            bool exact = false;
            for (int64_t count = 0;; ++count, --q) {
                if (q < 0 || !in[m_bytes(q)]) {
                    exact = true;
                    break;
                }
                if (count == need)
                    break;
            }
            c = { q + 1, p, exact };
            return std::min(p - q, need);
        }
        for (int64_t q = c.hi + 1; q <= p; ++q) {
            if (!in[m_bytes(q)]) {
                c.lo = q + 1;
                c.loExact = true;
            }
        }
        c.hi = std::max(c.hi, p);
        if (c.lo > p)
            return 0;
        int64_t avail = p - c.lo + 1;
        if (avail < need && !c.loExact) {
            int64_t q = c.lo - 1;
            for (;; --q, ++avail) {
                if (q < 0 || !in[m_bytes(q)]) {
                    c.loExact = true;
                    break;
                }
                if (avail == need)
                    break;
            }
            c.lo = q + 1;
        }
        return std::min(avail, need);
    }

    /// Bytes [lo, hi] all lie in the set; loExact: the byte before lo does not (or lo is 0).
    struct Run
    {
        int64_t lo = 0;
        int64_t hi = -1;
        bool loExact = false;
    };

    const Reversed &m_r;
    const Dfa &m_dfa;
    const uint32_t m_nc;
    const uint64_t m_reciprocal;
    const int64_t m_fileSize;
    ByteReader &m_bytes;
    std::vector<Run> m_runs;
    std::vector<Node> m_memo;
    size_t m_mask = 0;
    size_t m_pathCap = 0;
    std::vector<Node> m_path; // pos, found start (in `best`), state
    uint32_t m_stamp = 0;
};

} // namespace

StartFinder::StartFinder(const RuleSet &rules)
    : m_rules(rules)
    , m_reversed(rules.patterns.size())
{
    m_fixedLength.reserve(rules.patterns.size());
    for (const Pattern &p : rules.patterns) {
        const int minLength = p.regex.isValid() ? p.regex.minLength() : 0;
        const int maxLength = p.regex.isValid() ? p.regex.maxLength() : 0;
        m_fixedLength.push_back(minLength > 0 && minLength == maxLength ? minLength : -1);
    }
}

StartFinder::~StartFinder() = default;

const StartFinder::Reversed &StartFinder::reversed(int patternId) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    std::unique_ptr<Reversed> &slot = m_reversed[size_t(patternId)];
    if (!slot) {
        auto r = std::make_unique<Reversed>();
        const Regex reversed = m_rules.patterns[size_t(patternId)].regex.reversed();
        DfaBuilder::Result built = DfaBuilder::build({ { &reversed, patternId } }, kMaxReversedStates, true);
        if (built.exceededBudget) {
            r->nfaBuilt = r->nfa.build({ &reversed });
        } else {
            r->dfa = std::move(built.dfa);
            r->prepare();
        }
        slot = std::move(r);
    }
    return *slot;
}

int64_t StartFinder::leftmostStart(int patternId, int64_t end, int64_t fileSize, const ByteAt &byteAt) const
{
    std::vector<int64_t> starts;
    leftmostStarts(patternId, { end }, fileSize, byteAt, starts);
    return starts.front();
}

void StartFinder::leftmostStarts(int patternId, const std::vector<int64_t> &ends, int64_t fileSize,
                                 const ByteAt &byteAt, std::vector<int64_t> &starts, bool verify) const
{
    starts.assign(ends.size(), -1);
    if (patternId < 0 || size_t(patternId) >= m_fixedLength.size() || ends.empty())
        return;
    auto valid = [fileSize](int64_t end) { return end >= 0 && end < fileSize; };
    const int fixed = m_fixedLength[size_t(patternId)];
    if (fixed > 0 && !verify) {
        for (size_t i = 0; i < ends.size(); ++i)
            if (valid(ends[i]) && ends[i] - fixed + 1 >= 0)
                starts[i] = ends[i] - fixed + 1;
        return;
    }

    const Reversed &r = reversed(patternId);
    ByteReader bytes(byteAt, fileSize, ends.size());
    if (r.dfa.numStates == 0) {
        if (!r.nfaBuilt)
            return;
        for (size_t i = 0; i < ends.size(); ++i)
            if (valid(ends[i]))
                starts[i] = simulateNfa(r.nfa, ends[i], fileSize, bytes);
        return;
    }
    Walker<Reversed> walker(r, fileSize, bytes, ends.size());
    for (size_t i = 0; i < ends.size(); ++i) {
        if (!valid(ends[i]))
            continue;
        starts[i] = i > 0 && ends[i] == ends[i - 1] ? starts[i - 1] : walker.start(ends[i]);
    }
}

} // namespace Hitscope
