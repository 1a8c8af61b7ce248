// SPDX-License-Identifier: GPL-3.0-or-later
#include "testutilregex.h"

#include "pattern/regexparser.h"

#include <algorithm>

#include <QByteArrayList>
#include <QString>

using Hitscope::Assertion;
using Hitscope::ByteSet;
using Hitscope::Regex;
using Type = Hitscope::Regex::Node::Type;

namespace TestUtil {

namespace {

using Positions = std::vector<int>; // sorted, unique text positions (0..size)

// match(node, pos) is the set of positions right after `node` when it starts at `pos`. It does not depend on
// where the overall match started, so one memo serves every start.
class ReferenceMatcher
{
public:
    ReferenceMatcher(const Regex &re, const QByteArray &text)
        : m_re(re)
        , m_text(text)
        , m_size(int(text.size()))
        , m_memo(re.nodes.size() * size_t(m_size + 1))
        , m_known(m_memo.size(), false)
    {
    }

    const Positions &match(int node, int pos)
    {
        const size_t slot = size_t(node) * size_t(m_size + 1) + size_t(pos);
        if (!m_known[slot]) {
            Positions result = compute(m_re.nodes[size_t(node)], pos);
            m_memo[slot] = std::move(result);
            m_known[slot] = true;
        }
        return m_memo[slot];
    }

private:
    Positions step(int node, const Positions &from)
    {
        Positions out;
        for (int p : from) {
            const Positions &next = match(node, p);
            out.insert(out.end(), next.begin(), next.end());
        }
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    static Positions merged(const Positions &a, const Positions &b)
    {
        Positions out;
        std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
        return out;
    }

    bool holds(Assertion a, int pos) const
    {
        const bool wordBefore = pos > 0 && Hitscope::isWordByte(uint8_t(m_text[pos - 1]));
        const bool wordAfter = pos < m_size && Hitscope::isWordByte(uint8_t(m_text[pos]));
        switch (a) {
        case Assertion::FileStart:
            return pos == 0;
        case Assertion::FileEnd:
            return pos == m_size;
        case Assertion::WordBoundary:
            return wordBefore != wordAfter;
        case Assertion::NotWordBoundary:
            return wordBefore == wordAfter;
        case Assertion::WideWordBoundary:
        case Assertion::WideNotWordBoundary: {
            const auto wordChar = [this](int p) {
                return p >= 0 && p + 1 < m_size && Hitscope::isWordByte(uint8_t(m_text[p])) && m_text[p + 1] == 0;
            };
            const bool boundary = pos < 2 || pos >= m_size || wordChar(pos) != wordChar(pos - 2);
            return boundary == (a == Assertion::WideWordBoundary);
        }
        }
        return false;
    }

    Positions repeat(const Regex::Node &n, int pos)
    {
        const int child = n.children.front();
        Positions cur { pos };
        for (int k = 0; k < n.min; ++k) {
            Positions next = step(child, cur);
            // A fixpoint stays a fixpoint: the remaining mandatory rounds cannot change it.
            const bool stable = next == cur;
            cur = std::move(next);
            if (cur.empty() || stable)
                break;
        }
        Positions result = cur;
        if (n.max < 0) {
            Positions frontier = cur;
            while (!frontier.empty()) {
                Positions fresh;
                const Positions next = step(child, frontier);
                std::set_difference(next.begin(), next.end(), result.begin(), result.end(), std::back_inserter(fresh));
                result = merged(result, fresh);
                frontier = std::move(fresh);
            }
            return result;
        }
        for (int k = n.min; k < n.max && !cur.empty(); ++k) {
            Positions next = step(child, cur);
            const bool stable = next == cur;
            cur = std::move(next);
            result = merged(result, cur);
            if (stable)
                break;
        }
        return result;
    }

    Positions compute(const Regex::Node &n, int pos)
    {
        switch (n.type) {
        case Type::Empty:
            return { pos };
        case Type::Bytes:
            if (pos < m_size && n.bytes.test(uint8_t(m_text[pos])))
                return { pos + 1 };
            return {};
        case Type::Assert:
            return holds(n.assertion, pos) ? Positions { pos } : Positions {};
        case Type::Concat: {
            Positions cur { pos };
            for (int c : n.children) {
                cur = step(c, cur);
                if (cur.empty())
                    break;
            }
            return cur;
        }
        case Type::Alternate: {
            Positions out;
            for (int c : n.children)
                out = merged(out, match(c, pos));
            return out;
        }
        case Type::Repeat:
            return repeat(n, pos);
        }
        return {};
    }

    const Regex &m_re;
    const QByteArray &m_text;
    int m_size;
    std::vector<Positions> m_memo;
    std::vector<bool> m_known;
};

int randomNode(Regex &re, QRandomGenerator &rng, int depth, const QByteArray &alphabet)
{
    auto pickByte = [&] { return uint8_t(alphabet[int(rng.bounded(int(alphabet.size())))]); };
    if (depth <= 0 || rng.bounded(100) < 30) {
        const int r = int(rng.bounded(100));
        ByteSet set;
        if (r < 55) {
            set.set(pickByte());
            return re.addBytes(set);
        }
        if (r < 82) {
            const int count = 1 + int(rng.bounded(3));
            for (int i = 0; i < count; ++i)
                set.set(pickByte());
            if (r >= 75)
                set.flip();
            return re.addBytes(set);
        }
        if (r < 85)
            return re.add(Regex::Node {});
        if (r < 89)
            return re.addAssert(Assertion::WordBoundary);
        if (r < 92)
            return re.addAssert(Assertion::NotWordBoundary);
        if (r < 95)
            return re.addAssert(Assertion::FileStart);
        if (r < 98)
            return re.addAssert(Assertion::FileEnd);
        set.set();
        return re.addBytes(set);
    }
    switch (rng.bounded(3)) {
    case 0: {
        std::vector<int> children;
        const int count = 2 + int(rng.bounded(3));
        for (int i = 0; i < count; ++i)
            children.push_back(randomNode(re, rng, depth - 1, alphabet));
        return re.addConcat(std::move(children));
    }
    case 1: {
        std::vector<int> children;
        const int count = 2 + int(rng.bounded(2));
        for (int i = 0; i < count; ++i)
            children.push_back(randomNode(re, rng, depth - 1, alphabet));
        return re.addAlternate(std::move(children));
    }
    default: {
        const int child = randomNode(re, rng, depth - 1, alphabet);
        const int min = int(rng.bounded(3));
        const int max = rng.bounded(100) < 30 ? -1 : min + int(rng.bounded(3));
        return re.addRepeat(child, min, max);
    }
    }
}

bool isAlnum(uint8_t b)
{
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9');
}

// Letters and digits stand for themselves; every other byte is escaped so it can never be read as syntax.
QByteArray literalSource(uint8_t b)
{
    if (isAlnum(b))
        return QByteArray(1, char(b));
    if (b >= 0x20 && b < 0x7f)
        return QByteArray("\\") + char(b);
    return QByteArray("\\x") + QByteArray::number(b, 16).rightJustified(2, '0');
}

QByteArray quantifierSource(QRandomGenerator &rng)
{
    QByteArray q;
    const int min = int(rng.bounded(3));
    switch (rng.bounded(6)) {
    case 0:
        q = "?";
        break;
    case 1:
        q = "*";
        break;
    case 2:
        q = "+";
        break;
    case 3:
        q = '{' + QByteArray::number(min) + '}';
        break;
    case 4:
        q = '{' + QByteArray::number(min) + ",}";
        break;
    default:
        q = '{' + QByteArray::number(min) + ',' + QByteArray::number(min + int(rng.bounded(3))) + '}';
        break;
    }
    if (rng.bounded(100) < 15)
        q += '?';
    return q;
}

QByteArray classSource(QRandomGenerator &rng, const QByteArray &alphabet)
{
    auto pickByte = [&] { return uint8_t(alphabet[int(rng.bounded(int(alphabet.size())))]); };
    QByteArray s = rng.bounded(100) < 25 ? "[^" : "[";
    const int items = 1 + int(rng.bounded(3));
    for (int i = 0; i < items; ++i) {
        const int r = int(rng.bounded(100));
        if (r < 55) {
            s += literalSource(pickByte());
        } else if (r < 85) {
            uint8_t lo = pickByte();
            uint8_t hi = pickByte();
            if (lo > hi)
                std::swap(lo, hi);
            s += literalSource(lo) + '-' + literalSource(hi);
        } else {
            static const char *const kTypes[] = { "\\d", "\\w", "\\s", "\\D", "\\W", "\\S" };
            s += kTypes[rng.bounded(6)];
        }
    }
    return s + ']';
}

QByteArray alternationSource(QRandomGenerator &rng, int depth, const QByteArray &alphabet);

QByteArray itemSource(QRandomGenerator &rng, int depth, const QByteArray &alphabet)
{
    const int r = int(rng.bounded(100));
    QByteArray atom;
    if (depth > 0 && r < 30) {
        atom = (rng.bounded(2) ? "(" : "(?:") + alternationSource(rng, depth - 1, alphabet) + ')';
    } else if (r < 60) {
        atom = literalSource(uint8_t(alphabet[int(rng.bounded(int(alphabet.size())))]));
    } else if (r < 78) {
        atom = classSource(rng, alphabet);
    } else if (r < 86) {
        static const char *const kTypes[] = { "\\d", "\\w", "\\s", "\\D", "\\W", "\\S", "." };
        atom = kTypes[rng.bounded(7)];
    } else {
        // Assertions are left unquantified: PCRE's treatment of a repeated assertion is not worth testing.
        static const char *const kAssertions[] = { "\\b", "\\B", "^", "$" };
        return kAssertions[rng.bounded(4)];
    }
    if (rng.bounded(100) < 35)
        atom += quantifierSource(rng);
    return atom;
}

QByteArray alternationSource(QRandomGenerator &rng, int depth, const QByteArray &alphabet)
{
    QByteArray s;
    const int branches = rng.bounded(100) < 70 ? 1 : 2 + int(rng.bounded(2));
    for (int b = 0; b < branches; ++b) {
        if (b > 0)
            s += '|';
        // An occasional empty branch, as in (a|).
        const int items = (branches > 1 && rng.bounded(100) < 10) ? 0 : 1 + int(rng.bounded(4));
        for (int i = 0; i < items; ++i)
            s += itemSource(rng, depth, alphabet);
    }
    return s;
}

} // namespace

std::vector<RefMatch> referenceMatches(const Regex &re, const QByteArray &text)
{
    std::vector<RefMatch> out;
    if (!re.isValid())
        return out;
    ReferenceMatcher matcher(re, text);
    const int size = int(text.size());
    std::vector<int> leftmostStart(size_t(size), -1);
    for (int start = 0; start < size; ++start) {
        for (int after : matcher.match(re.root, start)) {
            if (after > start && leftmostStart[size_t(after - 1)] < 0)
                leftmostStart[size_t(after - 1)] = start;
        }
    }
    for (int end = 0; end < size; ++end) {
        if (leftmostStart[size_t(end)] >= 0)
            out.push_back({ leftmostStart[size_t(end)], end });
    }
    return out;
}

QByteArray formatMatches(const std::vector<RefMatch> &matches)
{
    QByteArray s;
    for (const RefMatch &m : matches) {
        if (!s.isEmpty())
            s += ' ';
        s += '(' + QByteArray::number(qint64(m.start)) + ',' + QByteArray::number(qint64(m.end)) + ')';
    }
    return s;
}

Regex randomRegex(QRandomGenerator &rng, int depth, const QByteArray &alphabet)
{
    Regex re;
    re.root = randomNode(re, rng, depth, alphabet.isEmpty() ? QByteArray("a") : alphabet);
    return re;
}

QByteArray randomRegexSource(QRandomGenerator &rng, int depth, const QByteArray &alphabet)
{
    return alternationSource(rng, depth, alphabet.isEmpty() ? QByteArray("a") : alphabet);
}

QByteArray randomText(QRandomGenerator &rng, int len, const QByteArray &alphabet)
{
    QByteArray text;
    if (alphabet.isEmpty())
        return text;
    text.reserve(len);
    for (int i = 0; i < len; ++i)
        text += alphabet[int(rng.bounded(int(alphabet.size())))];
    return text;
}

Regex parseRegex(const char *pattern, bool caseless)
{
    Hitscope::RegexFlags flags;
    flags.caseless = caseless;
    Hitscope::RegexParser::Result r = Hitscope::RegexParser::parse(pattern, flags);
    if (!r.error.isEmpty())
        qFatal("bad test pattern %s", pattern);
    return std::move(r.regex);
}

QByteArray describeRegex(const Hitscope::Regex &re, int node)
{
    const Hitscope::Regex::Node &n = re.nodes[size_t(node)];
    QByteArray s;
    switch (n.type) {
    case Hitscope::Regex::Node::Type::Empty:
        return "()";
    case Hitscope::Regex::Node::Type::Bytes:
        s = "[";
        for (int b = 0; b < 256; ++b)
            if (n.bytes.test(size_t(b)))
                s += (b >= 0x21 && b < 0x7f) ? QByteArray(1, char(b)) : "\\x" + QByteArray::number(b, 16);
        return s.size() > 40 ? QByteArray("[" + QByteArray::number(int(n.bytes.count())) + " bytes]") : s + "]";
    case Hitscope::Regex::Node::Type::Assert:
        return QByteArrayList { "^", "$", "\\b", "\\B" }[int(n.assertion)];
    case Hitscope::Regex::Node::Type::Concat:
    case Hitscope::Regex::Node::Type::Alternate:
        s = n.type == Hitscope::Regex::Node::Type::Concat ? "Cat(" : "Alt(";
        for (size_t i = 0; i < n.children.size(); ++i)
            s += (i ? "," : "") + describeRegex(re, n.children[i]);
        return s + ")";
    case Hitscope::Regex::Node::Type::Repeat:
        return "(" + describeRegex(re, n.children.front()) + "){" + QByteArray::number(n.min) + ","
            + QByteArray::number(n.max) + "}";
    }
    return s;
}

} // namespace TestUtil
