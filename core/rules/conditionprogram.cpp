// SPDX-License-Identifier: GPL-3.0-or-later
#include "rules/conditionprogram.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <limits>
#include <memory>

#include "modules/moduleaccess.h"

namespace Hitscope {

namespace {

constexpr int64_t U = ConditionProgram::Undefined;
static_assert(U == ModuleAccess::Undefined);

/// A string value at or above this is a string made while evaluating (a module's), not a constant.
constexpr int64_t kDynamicString = int64_t(1) << 40;

// YARA computes in C on int64_t and relies on two's complement wrap-around; we wrap explicitly
// (signed overflow would be undefined behaviour here).
inline int64_t wrapAdd(int64_t x, int64_t y) { return int64_t(uint64_t(x) + uint64_t(y)); }
inline int64_t wrapSub(int64_t x, int64_t y) { return int64_t(uint64_t(x) - uint64_t(y)); }
inline int64_t wrapMul(int64_t x, int64_t y) { return int64_t(uint64_t(x) * uint64_t(y)); }

inline int64_t truth(bool b) { return b ? 1 : 0; }
inline bool isTrue(int64_t v) { return v != U && v != 0; }

const std::vector<StringMatch> &noMatches()
{
    static const std::vector<StringMatch> empty;
    return empty;
}

/// First match at or after `offset` (matches ascend by offset).
inline std::vector<StringMatch>::const_iterator firstAtOrAfter(const std::vector<StringMatch> &m, int64_t offset)
{
    return std::lower_bound(m.begin(), m.end(), offset,
                            [](const StringMatch &s, int64_t o) { return s.offset < o; });
}

using Op = ConditionProgram::Op;

/// `uint32(offset)` and its kin; `format` is the Read node's imm.
int64_t readInteger(const ConditionContext &context, int64_t offset, int64_t format)
{
    const int size = int(format & 0xff);
    // YARA casts the offset to size_t, so negative and undefined offsets are simply outside the data.
    if (offset == U || offset < 0 || offset > context.fileSize - size || !context.read)
        return U;
    uint8_t bytes[4] = {};
    if (!context.read(offset, size, bytes))
        return U;
    uint32_t raw = 0;
    for (int k = 0; k < size; ++k) {
        const int shift = (format & ConditionProgram::ReadBigEndian) ? 8 * (size - 1 - k) : 8 * k;
        raw |= uint32_t(bytes[k]) << shift;
    }
    if (!(format & ConditionProgram::ReadSigned))
        return int64_t(raw);
    if (size == 1)
        return int64_t(int8_t(raw));
    if (size == 2)
        return int64_t(int16_t(raw));
    return int64_t(int32_t(raw));
}

inline int64_t integerOperator(Op op, int64_t l, int64_t r)
{
    switch (op) {
    case Op::Eq:
        return truth(l == r);
    case Op::Ne:
        return truth(l != r);
    case Op::Lt:
        return truth(l < r);
    case Op::Le:
        return truth(l <= r);
    case Op::Gt:
        return truth(l > r);
    case Op::Ge:
        return truth(l >= r);
    case Op::Add:
        return wrapAdd(l, r);
    case Op::Sub:
        return wrapSub(l, r);
    case Op::Mul:
        return wrapMul(l, r);
    case Op::Div:
        if (r == 0)
            return U;
        if (r == -1) // INT64_MIN / -1 traps in YARA; wrap instead
            return wrapSub(0, l);
        return l / r;
    case Op::Mod:
        if (r == 0)
            return U;
        if (r == -1)
            return 0;
        return l % r;
    case Op::BitAnd:
        return l & r;
    case Op::BitOr:
        return l | r;
    case Op::BitXor:
        return l ^ r;
    case Op::Shl:
        if (r < 0)
            return U;
        return r < 64 ? int64_t(uint64_t(l) << r) : 0;
    case Op::Shr:
        if (r < 0)
            return U;
        return r < 64 ? (l >> r) : 0; // arithmetic shift, as YARA's int64_t >>
    default:
        return U;
    }
}

int64_t floatOperator(Op op, double l, double r)
{
    switch (op) {
    case Op::FAdd:
        return std::bit_cast<int64_t>(l + r);
    case Op::FSub:
        return std::bit_cast<int64_t>(l - r);
    case Op::FMul:
        return std::bit_cast<int64_t>(l * r);
    case Op::FDiv:
        return std::bit_cast<int64_t>(l / r);
    case Op::FEq:
        return truth(l == r);
    case Op::FNe:
        return truth(l != r);
    case Op::FLt:
        return truth(l < r);
    case Op::FLe:
        return truth(l <= r);
    case Op::FGt:
        return truth(l > r);
    default:
        return truth(l >= r);
    }
}

int64_t stringOperator(Op op, const QByteArray &l, const QByteArray &r)
{
    const auto lower = [](const QByteArray &x) { return x.toLower(); };
    switch (op) {
    case Op::StrEq:
        return truth(l == r);
    case Op::StrNe:
        return truth(l != r);
    // ss_compare: bytewise as signed char (the C string's char), the shorter first on a tie.
    case Op::StrLt:
    case Op::StrLe:
    case Op::StrGt:
    case Op::StrGe: {
        const qsizetype common = std::min(l.size(), r.size());
        int c = 0;
        for (qsizetype i = 0; i < common && c == 0; ++i)
            if (l[i] != r[i])
                c = l[i] < r[i] ? -1 : 1;
        if (c == 0 && l.size() != r.size())
            c = l.size() < r.size() ? -1 : 1;
        if (op == Op::StrLt)
            return truth(c < 0);
        if (op == Op::StrLe)
            return truth(c <= 0);
        if (op == Op::StrGt)
            return truth(c > 0);
        return truth(c >= 0);
    }
    case Op::Contains:
        return truth(l.contains(r));
    case Op::IContains:
        return truth(lower(l).contains(lower(r)));
    case Op::StartsWith:
        return truth(l.startsWith(r));
    case Op::IStartsWith:
        return truth(lower(l).startsWith(lower(r)));
    case Op::EndsWith:
        return truth(l.endsWith(r));
    case Op::IEndsWith:
        return truth(lower(l).endsWith(lower(r)));
    default:
        return truth(lower(l) == lower(r));
    }
}

/// `text matches /re/`: whether the regex matches anywhere in it.
int64_t regexMatch(const PriorityMatcher &re, const QByteArray &text)
{
    if (text.isEmpty())
        return 0;
    const auto *bytes = reinterpret_cast<const uint8_t *>(text.constData());
    const ByteAt byteAt([bytes](int64_t offset) { return bytes[offset]; });
    for (int64_t start = 0; start < text.size(); ++start)
        if (re.match(start, text.size(), byteAt) >= 0)
            return 1;
    return 0;
}

} // namespace

struct ConditionProgram::State
{
    const ConditionContext &context;
    int64_t slots[2 * MaxLoopDepth] = {};
    /// Strings read from modules (kDynamicString + index), never moved; made on the first (most conditions
    /// read none, and an empty deque still allocates).
    std::unique_ptr<std::deque<QByteArray>> made;

    const ModuleAccess &modules() const { return context.modules ? *context.modules : ModuleAccess::none(); }
    /// Strings made inside a loop's body are not read after it (a body's value is an integer): each iteration
    /// gives them back, so that a loop of a million iterations does not keep a million strings.
    size_t mark() const { return made ? made->size() : 0; }
    void release(size_t mark)
    {
        if (made && made->size() > mark)
            made->resize(mark);
    }
    int64_t keep(QByteArray text)
    {
        if (!made)
            made = std::make_unique<std::deque<QByteArray>>();
        made->push_back(std::move(text));
        return kDynamicString + int64_t(made->size() - 1);
    }

    const std::vector<StringMatch> &matches(int32_t ref) const
    {
        const int64_t index = ref >= 0 ? ref : slots[-ref - 1];
        const auto *all = context.strings;
        if (!all || index < 0 || uint64_t(index) >= all->size())
            return noMatches();
        return (*all)[size_t(index)];
    }

    /// Number of matches: listed, or only counted (ConditionContext::counts).
    int64_t count(int32_t ref) const
    {
        const int64_t index = ref >= 0 ? ref : slots[-ref - 1];
        const auto *counts = context.counts;
        if (counts && index >= 0 && uint64_t(index) < counts->size() && (*counts)[size_t(index)] >= 0)
            return (*counts)[size_t(index)];
        return int64_t(matches(ref).size());
    }
};

ConditionProgram::ConditionProgram(std::vector<Node> nodes, std::vector<int32_t> lists, int32_t root,
                                   std::vector<QByteArray> strings,
                                   std::vector<std::shared_ptr<const PriorityMatcher>> regexes)
    : m_nodes(std::move(nodes))
    , m_strings(std::move(strings))
    , m_regexes(std::move(regexes))
    , m_lists(std::move(lists))
    , m_root(root)
{
}

template<typename Fn>
void ConditionProgram::forStrings(int32_t ref, size_t strings, Fn &&fn) const
{
    auto call = [&](int64_t index) {
        if (index >= 0 && uint64_t(index) < strings)
            fn(size_t(index));
    };
    if (ref >= 0) {
        call(ref);
        return;
    }
    for (const Node &loop : m_nodes)
        if (loop.op == Op::ForOf && loop.imm == -ref - 1)
            for (int32_t k = 0; k < loop.c; ++k)
                call(m_lists[size_t(loop.b + k)]);
}

std::vector<bool> ConditionProgram::stringsNeedingOffsets(size_t strings) const
{
    std::vector<bool> needed(strings, false);
    for (const Node &n : m_nodes)
    {
        if (n.op == Op::FoundAt || n.op == Op::FoundIn || n.op == Op::Offset || n.op == Op::Length
            || n.op == Op::CountIn)
            forStrings(n.b, strings, [&](size_t s) { needed[s] = true; });
        if (n.op == Op::OfIn)
            for (int32_t k = 0; k < n.c; ++k)
                forStrings(m_lists[size_t(n.b + k)], strings, [&](size_t s) { needed[s] = true; });
    }
    return needed;
}

bool ConditionProgram::needsAMatch() const
{
    return falseWithoutMatches(m_root);
}

bool ConditionProgram::falseWithoutMatches(int32_t i) const
{
    if (i < 0 || size_t(i) >= m_nodes.size())
        return false;
    const Node &n = m_nodes[size_t(i)];
    auto isConst = [&](int32_t k, auto &&pred) {
        return k >= 0 && size_t(k) < m_nodes.size() && m_nodes[size_t(k)].op == Op::Const && pred(m_nodes[size_t(k)].imm);
    };
    auto countOf = [&](int32_t k) {
        return k >= 0 && size_t(k) < m_nodes.size() && m_nodes[size_t(k)].op == Op::Count && m_nodes[size_t(k)].b >= 0;
    };
    switch (n.op) {
    case Op::Found:
    case Op::FoundAt:
    case Op::FoundIn:
        return n.b >= 0; // a string of the loop variable's: not known here
    case Op::Of:
        // "all" (an undefined quantifier) of a non-empty set, or at least one; "none" and 0 hold without matches.
        return n.c > 0 && isConst(n.a, [](int64_t q) { return q == U || q >= 1; });
    case Op::Gt: // #a > k, k >= 0
        return countOf(n.a) && isConst(n.b, [](int64_t k) { return k != U && k >= 0; });
    case Op::Ge:
    case Op::Eq: // #a >= k, #a == k, k >= 1
        return countOf(n.a) && isConst(n.b, [](int64_t k) { return k != U && k >= 1; });
    case Op::And:
        return falseWithoutMatches(n.a) || falseWithoutMatches(n.b);
    case Op::Or:
        return falseWithoutMatches(n.a) && falseWithoutMatches(n.b);
    default:
        return false;
    }
}

std::vector<int64_t> ConditionProgram::matchesNeeded(size_t strings) const
{
    // A count compared with a constant c is decided by the first c + 1 matches; used any other way (arithmetic,
    // loop bounds, compared with another count), by all of them. A node used by more than one parent is
    // treated as used any other way.
    std::vector<int> uses(m_nodes.size(), 0);
    auto use = [&](int32_t child) {
        if (child >= 0 && size_t(child) < m_nodes.size())
            ++uses[size_t(child)];
    };
    std::vector<int64_t> comparedWith(m_nodes.size(), Condition::kAllMatches);
    for (const Node &n : m_nodes) {
        switch (n.op) {
        case Op::Const:
        case Op::FileSize:
        case Op::Rule:
        case Op::LoopVar:
        case Op::Found:
        case Op::Count:
            break;
        case Op::FoundAt:
        case Op::Offset:
        case Op::Length:
        case Op::Of:
        case Op::Not:
        case Op::Neg:
        case Op::BitNot:
        case Op::Read:
            use(n.a);
            break;
        case Op::FoundIn:
        case Op::CountIn:
            use(n.a);
            use(n.c);
            break;
        case Op::OfIn:
            use(n.a);
            use(n.d);
            use(int32_t(n.imm));
            break;
        case Op::OfRules:
        case Op::PercentOf:
        case Op::Defined:
        case Op::IntToFloat:
        case Op::FNeg:
        case Op::StrToBool:
        case Op::Matches:
            use(n.a);
            break;
        case Op::StrConst:
        case Op::ModRoot:
        case Op::EntryPoint:
            break;
        case Op::ModField:
        case Op::ModValue:
            use(n.a);
            break;
        case Op::ModCall:
            use(n.a);
            for (int32_t k = 0; k < n.c; ++k)
                use(m_lists[size_t(n.b + k)]);
            break;
        case Op::ForArray:
        case Op::ForDict:
            use(n.a);
            use(n.b);
            use(n.d);
            break;
        case Op::ForOf:
            use(n.a);
            use(n.d);
            break;
        case Op::ForRange:
            use(n.a);
            use(n.b);
            use(n.c);
            use(n.d);
            break;
        case Op::ForEnum:
            use(n.a);
            use(n.d);
            for (int32_t k = 0; k < n.c; ++k)
                use(m_lists[size_t(n.b + k)]);
            break;
        case Op::Eq:
        case Op::Ne:
        case Op::Lt:
        case Op::Le:
        case Op::Gt:
        case Op::Ge: {
            use(n.a);
            use(n.b);
            auto note = [&](int32_t count, int32_t constant) {
                if (count < 0 || constant < 0 || m_nodes[size_t(count)].op != Op::Count
                    || m_nodes[size_t(constant)].op != Op::Const)
                    return;
                // Every count above c compares with c the same way, whatever the operator.
                const int64_t c = m_nodes[size_t(constant)].imm;
                comparedWith[size_t(count)] = c < 0 ? 1 : (c >= Condition::kAllMatches - 1 ? c : c + 1);
            };
            note(n.a, n.b);
            note(n.b, n.a);
            break;
        }
        default: // the other binary operators
            use(n.a);
            use(n.b);
            break;
        }
    }
    std::vector<int64_t> needed(strings, 1);
    auto need = [&](size_t s, int64_t n) { needed[s] = std::max(needed[s], n); };
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        const Node &n = m_nodes[i];
        switch (n.op) {
        case Op::Count:
            forStrings(n.b, strings,
                       [&](size_t s) { need(s, uses[i] == 1 ? comparedWith[i] : Condition::kAllMatches); });
            break;
        case Op::FoundAt:
        case Op::FoundIn:
        case Op::Offset:
        case Op::Length:
        case Op::CountIn:
            forStrings(n.b, strings, [&](size_t s) { need(s, Condition::kAllMatches); });
            break;
        case Op::OfIn:
            for (int32_t k = 0; k < n.c; ++k)
                forStrings(m_lists[size_t(n.b + k)], strings, [&](size_t s) { need(s, Condition::kAllMatches); });
            break;
        default: // $a, `of` and the strings a for-of binds need one match, the minimum
            break;
        }
    }
    return needed;
}

bool ConditionProgram::evaluate(const ConditionContext &context) const
{
    return isTrue(value(context));
}

int64_t ConditionProgram::value(const ConditionContext &context) const
{
    State state{ context, {}, {} };
    return eval(m_root, state);
}

// The end of YARA's integer for loop: no iteration at all is false whatever the quantifier; "all" (an undefined
// quantifier) compares with the number of iterations.
int64_t ConditionProgram::loopResult(int64_t quantifier, int64_t sum, int64_t iterations) const
{
    if (iterations == 0)
        return 0;
    const int64_t needed = quantifier == U ? iterations : quantifier;
    if (sum == U)
        return U;
    return truth(sum >= needed);
}

const QByteArray *ConditionProgram::text(int32_t index, State &state) const
{
    const int64_t v = eval(index, state);
    if (v >= kDynamicString && state.made && uint64_t(v - kDynamicString) < state.made->size())
        return &(*state.made)[size_t(v - kDynamicString)];
    if (v == U || v < 0 || uint64_t(v) >= m_strings.size())
        return nullptr;
    return &m_strings[size_t(v)];
}

int64_t ConditionProgram::eval(int32_t index, State &state) const
{
    const Node &n = m_nodes[size_t(index)];
    switch (n.op) {
    case Op::Const:
        return n.imm;
    case Op::FileSize:
        return state.context.fileSize;
    case Op::Rule:
        return truth(state.context.ruleMatched && state.context.ruleMatched(int(n.imm)));
    case Op::LoopVar:
        return state.slots[n.imm];
    case Op::Found:
        return truth(state.count(n.b) > 0);
    case Op::Count:
        return state.count(n.b);
    case Op::FoundAt:
    case Op::FoundIn:
    case Op::Offset:
    case Op::Length:
    case Op::CountIn:
        return matchQuery(n, state);
    case Op::Of:
        return ofStrings(n, state);
    case Op::OfRules:
    case Op::PercentOf:
    case Op::OfIn:
        return ofSet(n, state);
    case Op::ForOf:
        return stringLoop(n, state);
    case Op::ForRange:
        return rangeLoop(n, state);
    case Op::ForEnum:
        return listLoop(n, state);
    case Op::Not: {
        const int64_t v = eval(n.a, state);
        return v == U ? U : truth(v == 0);
    }
    case Op::And: {
        const int64_t l = eval(n.a, state);
        if (l == 0)
            return 0;
        const int64_t r = eval(n.b, state);
        return truth(isTrue(l) && isTrue(r));
    }
    case Op::Or: {
        // A true left operand is left on YARA's stack as it is: `i or false` is worth i.
        const int64_t l = eval(n.a, state);
        if (isTrue(l))
            return l;
        return truth(isTrue(eval(n.b, state)));
    }
    case Op::Neg: {
        const int64_t v = eval(n.a, state);
        return v == U ? U : wrapSub(0, v);
    }
    case Op::BitNot: {
        const int64_t v = eval(n.a, state);
        return v == U ? U : ~v;
    }
    case Op::Read:
        return readInteger(state.context, eval(n.a, state), n.imm);
    case Op::Defined:
        return truth(eval(n.a, state) != U);
    case Op::IntToFloat: {
        const int64_t v = eval(n.a, state);
        return v == U ? U : std::bit_cast<int64_t>(double(v));
    }
    case Op::FNeg: {
        const int64_t v = eval(n.a, state);
        return v == U ? U : std::bit_cast<int64_t>(-std::bit_cast<double>(v));
    }
    case Op::StrConst:
        return n.imm;
    case Op::ModRoot:
    case Op::ModField:
    case Op::ModItem:
    case Op::ModEntry:
        return moduleObject(n, state);
    case Op::ModValue:
        return moduleValue(eval(n.a, state), n.imm, state);
    case Op::ModCall:
        return moduleCall(n, state);
    case Op::ForArray:
    case Op::ForDict:
        return moduleLoop(n, state);
    case Op::EntryPoint:
        return state.modules().entryPoint();
    case Op::StrToBool: {
        const QByteArray *t = text(n.a, state);
        return t ? truth(!t->isEmpty()) : U;
    }
    case Op::Matches: {
        const QByteArray *t = text(n.a, state);
        return t ? regexMatch(*m_regexes[size_t(n.imm)], *t) : U;
    }
    case Op::FAdd:
    case Op::FSub:
    case Op::FMul:
    case Op::FDiv:
    case Op::FEq:
    case Op::FNe:
    case Op::FLt:
    case Op::FLe:
    case Op::FGt:
    case Op::FGe: {
        const int64_t l = eval(n.a, state);
        const int64_t r = eval(n.b, state);
        return l == U || r == U ? U : floatOperator(n.op, std::bit_cast<double>(l), std::bit_cast<double>(r));
    }
    case Op::StrEq:
    case Op::StrNe:
    case Op::StrLt:
    case Op::StrLe:
    case Op::StrGt:
    case Op::StrGe:
    case Op::Contains:
    case Op::IContains:
    case Op::StartsWith:
    case Op::IStartsWith:
    case Op::EndsWith:
    case Op::IEndsWith:
    case Op::IEquals: {
        const QByteArray *l = text(n.a, state);
        const QByteArray *r = text(n.b, state);
        return l && r ? stringOperator(n.op, *l, *r) : U;
    }
    default:
        break;
    }

    // Binary integer operators: both operands are evaluated, and undefined in gives undefined out.
    const int64_t l = eval(n.a, state);
    const int64_t r = eval(n.b, state);
    if (l == U || r == U)
        return U;
    return integerOperator(n.op, l, r);
}

// What the matches of a string say about given offsets: `$s at`, `$s in`, `@s[i]`, `!s[i]`, `#s in`.
int64_t ConditionProgram::matchQuery(const Node &n, State &state) const
{
    switch (n.op) {
    case Op::FoundAt: {
        const int64_t at = eval(n.a, state);
        if (at == U)
            return 0; // YARA's FOUND_AT answers false, not undefined
        const auto &m = state.matches(n.b);
        const auto it = firstAtOrAfter(m, at);
        return truth(it != m.end() && it->offset == at);
    }
    case Op::FoundIn: {
        const int64_t low = eval(n.a, state);
        const int64_t high = eval(n.c, state);
        if (low == U || high == U)
            return U;
        const auto &m = state.matches(n.b);
        const auto it = firstAtOrAfter(m, low);
        return truth(it != m.end() && it->offset <= high);
    }
    case Op::Offset:
    case Op::Length: {
        const int64_t i = eval(n.a, state);
        if (i == U)
            return U;
        const auto &m = state.matches(n.b);
        if (i < 1 || uint64_t(i) > m.size())
            return U;
        const StringMatch &match = m[size_t(i - 1)];
        return n.op == Op::Offset ? match.offset : match.length;
    }
    default: { // CountIn
        const int64_t low = eval(n.a, state);
        const int64_t high = eval(n.c, state);
        if (low == U || high == U)
            return U;
        const auto &m = state.matches(n.b);
        int64_t count = 0;
        for (auto it = firstAtOrAfter(m, low); it != m.end() && it->offset <= high; ++it)
            ++count;
        return count;
    }
    }
}

int64_t ConditionProgram::ofStrings(const Node &n, State &state) const
{
    const int64_t q = eval(n.a, state);
    // Counting stops once the answer is known; the count is only compared with q below.
    const int64_t enough = q == U ? int64_t(n.c) : (q <= 0 ? 1 : q);
    int64_t found = 0;
    for (int32_t k = 0; k < n.c && found < enough; ++k)
        found += state.count(m_lists[size_t(n.b + k)]) > 0 ? 1 : 0;
    const int64_t count = n.c;
    if (q == U)
        return truth(found >= count);
    if (q == 0) // "none", and a quantifier that evaluates to 0 (YARA issue 1695)
        return truth(found == 0);
    return truth(found >= q);
}

// `of` over rules, as a percentage, or over strings in a range: every item is counted.
int64_t ConditionProgram::ofSet(const Node &n, State &state) const
{
    const int64_t q = eval(n.a, state);
    int64_t low = 0;
    int64_t high = 0;
    if (n.op == Op::OfIn) {
        low = eval(n.d, state);
        high = eval(int32_t(n.imm), state);
        if (low == U || high == U)
            return U;
    }
    const bool rules = n.op == Op::OfRules || (n.op == Op::PercentOf && n.imm == 1);
    int64_t found = 0;
    for (int32_t k = 0; k < n.c; ++k) {
        const int32_t item = m_lists[size_t(n.b + k)];
        if (rules) {
            found += truth(state.context.ruleMatched && state.context.ruleMatched(item));
        } else if (n.op == Op::OfIn) {
            const auto &m = state.matches(item);
            const auto it = firstAtOrAfter(m, low);
            found += truth(it != m.end() && it->offset <= high);
        } else {
            found += truth(state.count(item) > 0);
        }
    }
    const int64_t count = n.c;
    if (n.op == Op::PercentOf) {
        if (q == U || count == 0)
            return U;
        return truth((double(found) / double(count)) * 100 >= double(q));
    }
    if (q == U)
        return truth(found >= count);
    if (q == 0)
        return truth(found == 0);
    return truth(found >= q);
}

int64_t ConditionProgram::stringLoop(const Node &n, State &state) const
{
    // YARA evaluates the body for every string (no early exit) and compares quantifier <= sum.
    const int64_t q = eval(n.a, state);
    int64_t sum = 0;
    const size_t mark = state.mark();
    for (int32_t k = 0; k < n.c; ++k) {
        state.slots[n.imm] = m_lists[size_t(n.b + k)];
        const int64_t v = eval(n.d, state);
        state.release(mark);
        if (v != U)
            sum = wrapAdd(sum, v);
    }
    const int64_t needed = q == U ? int64_t(n.c) : q;
    if (sum == U)
        return U;
    return truth(needed <= sum);
}

int64_t ConditionProgram::rangeLoop(const Node &n, State &state) const
{
    const int64_t q = eval(n.a, state);
    const int64_t low = eval(n.b, state);
    const int64_t high = eval(n.c, state);
    int64_t sum = 0;
    int64_t iterations = 0;
    if (low != U && high != U) {
        const size_t mark = state.mark();
        for (int64_t i = low; i != U && i <= high;) {
            state.slots[n.imm] = i;
            if (endIteration(state, mark, eval(n.d, state), q, sum, iterations))
                break;
            if (i == std::numeric_limits<int64_t>::max())
                break; // YARA would wrap around and never end
            ++i;
        }
    }
    return loopResult(q, sum, iterations);
}

int64_t ConditionProgram::listLoop(const Node &n, State &state) const
{
    const int64_t q = eval(n.a, state);
    int64_t sum = 0;
    int64_t iterations = 0;
    const size_t mark = state.mark();
    for (int32_t k = 0; k < n.c; ++k) {
        // YARA evaluates all items before the first iteration; they cannot depend on the loop, so lazily
        // is the same.
        state.slots[n.imm] = eval(m_lists[size_t(n.b + k)], state);
        if (endIteration(state, mark, eval(n.d, state), q, sum, iterations))
            break;
    }
    return loopResult(q, sum, iterations);
}

// A module's structure, a field of one, an item of an array or an entry of a dictionary.
int64_t ConditionProgram::moduleObject(const Node &n, State &state) const
{
    switch (n.op) {
    case Op::ModRoot:
        return state.modules().root(m_strings[size_t(n.imm)]);
    case Op::ModField: {
        const int64_t o = eval(n.a, state);
        return o == U ? U : state.modules().field(o, n.c, m_strings[size_t(n.imm)]);
    }
    case Op::ModItem: {
        const int64_t o = eval(n.a, state);
        const int64_t i = eval(n.b, state);
        return o == U || i == U ? U : state.modules().item(o, i);
    }
    default: { // ModEntry
        const int64_t o = eval(n.a, state);
        const QByteArray *key = text(n.b, state);
        return o == U || !key ? U : state.modules().entry(o, *key);
    }
    }
}

// OP_OBJ_VALUE: an integer as it is (YR_UNDEFINED included), a NaN float and a missing string undefined.
int64_t ConditionProgram::moduleValue(int64_t object, int64_t kind, State &state) const
{
    if (object == U)
        return U;
    const ModuleAccess &modules = state.modules();
    if (kind == ModInteger)
        return modules.integer(object);
    if (kind == ModFloat)
        return modules.real(object);
    QByteArray text;
    if (!modules.string(object, &text))
        return U;
    return state.keep(std::move(text));
}

// OP_CALL: an undefined function or argument makes the result undefined without a call.
int64_t ConditionProgram::moduleCall(const Node &n, State &state) const
{
    const int64_t function = eval(n.a, state);
    if (function == U)
        return U;
    const QByteArray &format = m_strings[size_t(n.imm)];
    std::vector<ModuleArgument> arguments(size_t(n.c));
    for (int32_t k = 0; k < n.c; ++k) {
        const int32_t node = m_lists[size_t(n.b + k)];
        if (format[k] == 'r') {
            arguments[size_t(k)].regex = int(m_nodes[size_t(node)].imm);
        } else if (format[k] == 's') {
            const QByteArray *t = text(node, state);
            if (!t)
                return U;
            arguments[size_t(k)].text = t;
        } else {
            const int64_t v = eval(node, state);
            if (v == U)
                return U;
            arguments[size_t(k)].value = v;
        }
    }
    return moduleValue(state.modules().call(function, format, arguments.data()), n.d, state);
}

// YARA's iterators over a module's array (each item, undefined where there is none) or dictionary (each key
// and value), with the integer loop's quantifier rules: an early end once enough iterations were true (never
// for "all"), and no iteration at all is false.
int64_t ConditionProgram::moduleLoop(const Node &n, State &state) const
{
    const int64_t q = eval(n.a, state);
    const int64_t container = eval(n.b, state);
    const ModuleAccess &modules = state.modules();
    const int64_t length = container == U ? 0 : modules.length(container);
    int64_t sum = 0;
    int64_t iterations = 0;
    const size_t mark = state.mark();
    for (int64_t i = 0; i < length; ++i) {
        if (n.op == Op::ForArray) {
            state.slots[n.imm] = modules.item(container, i);
        } else {
            QByteArray key;
            const int64_t value = modules.entryAt(container, i, &key);
            state.slots[n.imm] = value == U ? U : state.keep(std::move(key));
            state.slots[n.imm + MaxLoopDepth] = value;
        }
        if (endIteration(state, mark, eval(n.d, state), q, sum, iterations))
            break;
    }
    return loopResult(q, sum, iterations);
}

// The end of one iteration of YARA's integer and iterator loops: the body's value is added (undefined adds
// nothing, as ADD_M), the strings it made are given back, and the loop ends early once the quantifier is reached
// (never for "all").
bool ConditionProgram::endIteration(State &state, size_t mark, int64_t value, int64_t quantifier, int64_t &sum,
                                    int64_t &iterations)
{
    state.release(mark);
    if (value != U)
        sum = wrapAdd(sum, value);
    ++iterations;
    return quantifier != U && !(sum < quantifier);
}

std::vector<QByteArray> ConditionProgram::modulesUsed() const
{
    std::vector<QByteArray> modules;
    for (const Node &n : m_nodes)
        if (n.op == Op::ModRoot && std::find(modules.begin(), modules.end(), m_strings[size_t(n.imm)]) == modules.end())
            modules.push_back(m_strings[size_t(n.imm)]);
    return modules;
}

std::vector<int> ConditionProgram::moduleRegexes() const
{
    std::vector<int> ids;
    for (const Node &n : m_nodes) {
        if (n.op != Op::ModCall)
            continue;
        const QByteArray &format = m_strings[size_t(n.imm)];
        for (int32_t k = 0; k < n.c; ++k)
            if (format[k] == 'r')
                ids.push_back(int(m_nodes[size_t(m_lists[size_t(n.b + k)])].imm));
    }
    return ids;
}

bool ConditionProgram::readsEntryPoint() const
{
    return std::any_of(m_nodes.begin(), m_nodes.end(), [](const Node &n) { return n.op == Op::EntryPoint; });
}

} // namespace Hitscope
