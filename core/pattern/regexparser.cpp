// SPDX-License-Identifier: GPL-3.0-or-later
#include "regexparser.h"

#include <algorithm>
#include <cstring>

namespace Hitscope {

namespace {

constexpr int kMaxRepeat = 1000;
constexpr int kMaxYaraRepeat = 32767;
// Deeper nesting would only overflow the stack of the recursive passes that run on the AST later; PCRE2
// stops at the same depth.
constexpr int kMaxGroupDepth = 250;

bool isDigit(uint8_t b)
{
    return b >= '0' && b <= '9';
}

bool isAlpha(uint8_t b)
{
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
}

int hexValue(uint8_t b)
{
    if (isDigit(b))
        return b - '0';
    if (b >= 'a' && b <= 'f')
        return b - 'a' + 10;
    if (b >= 'A' && b <= 'F')
        return b - 'A' + 10;
    return -1;
}

ByteSet rangeSet(int lo, int hi)
{
    ByteSet s;
    for (int b = lo; b <= hi; ++b)
        s.set(size_t(b));
    return s;
}

ByteSet byteSet(uint8_t b)
{
    ByteSet s;
    s.set(b);
    return s;
}

ByteSet digitSet()
{
    return rangeSet('0', '9');
}

ByteSet wordSet()
{
    return rangeSet('0', '9') | rangeSet('A', 'Z') | rangeSet('a', 'z') | byteSet('_');
}

ByteSet spaceSet()
{
    // \s as PCRE2 and YARA define it: space, \t \n \v \f \r.
    return rangeSet('\t', '\r') | byteSet(' ');
}

void foldCase(ByteSet &s)
{
    for (int b = 'A'; b <= 'Z'; ++b) {
        if (s.test(size_t(b)) || s.test(size_t(b + 0x20))) {
            s.set(size_t(b));
            s.set(size_t(b + 0x20));
        }
    }
}

QString describeByte(uint8_t b)
{
    if (b > 0x20 && b < 0x7f)
        return QString(QLatin1Char(char(b)));
    return QStringLiteral("\\x%1").arg(int(b), 2, 16, QLatin1Char('0'));
}

class Parser
{
public:
    Parser(const QByteArray &pattern, RegexFlags flags)
        : m_pattern(pattern)
        , m_size(pattern.size())
        , m_flags(flags)
    {
    }

    RegexParser::Result run();

private:
    // One open group (or the whole pattern): finished alternatives plus the branch being read.
    struct Frame
    {
        std::vector<int> alternatives;
        std::vector<int> items;
        qsizetype openOffset = -1;
        bool canRepeat = false;
    };

    // What an escape or class member stands for.
    struct Atom
    {
        enum class Kind { Byte, Set, Assert } kind = Kind::Byte;
        uint8_t byte = 0;
        ByteSet set;
        Assertion assertion = Assertion::FileStart;
    };

    uint8_t at(qsizetype i) const { return uint8_t(m_pattern[i]); }
    bool has(qsizetype i) const { return i < m_size; }

    bool fail(const QString &reason, qsizetype offset)
    {
        if (m_error.isEmpty())
            m_error = reason + QStringLiteral(" at offset %1").arg(offset);
        return false;
    }

    int addSet(ByteSet set)
    {
        if (m_flags.caseless)
            foldCase(set);
        return m_regex.addBytes(set);
    }

    void push(Frame &frame, int node)
    {
        frame.items.push_back(node);
        frame.canRepeat = true;
    }

    int finish(Frame &frame)
    {
        frame.alternatives.push_back(m_regex.addConcat(std::move(frame.items)));
        frame.items.clear();
        return m_regex.addAlternate(std::move(frame.alternatives));
    }

    bool parseEscape(bool inClass, Atom *atom);
    bool parsePosixClass(ByteSet *set);
    bool parseClass(Frame &frame);
    bool parseBraces(qsizetype *end, int *min, int *max);
    bool applyQuantifier(Frame &frame, qsizetype start, qsizetype end, int min, int max);

    const QByteArray &m_pattern;
    const qsizetype m_size;
    const RegexFlags m_flags;
    qsizetype m_pos = 0;
    Regex m_regex;
    QString m_error;
};

// m_pos is on the backslash; leaves it after the escape.
bool Parser::parseEscape(bool inClass, Atom *atom)
{
    const qsizetype start = m_pos;
    if (!has(m_pos + 1))
        return fail(QStringLiteral("trailing backslash"), start);
    const uint8_t c = at(m_pos + 1);
    m_pos += 2;
    atom->kind = Atom::Kind::Byte;
    // YARA's regex lexer (re_lexer.l): \n \t \r \f \a, \xHH and the classes; a digit outside a class is a
    // backreference it refuses; any other escaped byte stands for itself (\e is 'e', \V is 'V').
    const bool yara = !m_flags.posixClasses;
    if (yara && c != 'n' && c != 't' && c != 'r' && c != 'f' && c != 'a' && c != 'x' && c != 'd' && c != 'D'
        && c != 'w' && c != 'W' && c != 's' && c != 'S' && c != 'b' && c != 'B') {
        if (isDigit(c) && !inClass)
            return fail(QStringLiteral("backreferences are not allowed"), start);
        atom->byte = c;
        return true;
    }
    if (yara && c == 'x' && has(m_pos) && at(m_pos) == '{')
        return fail(QStringLiteral("illegal escape sequence"), start);
    switch (c) {
    case 'n':
        atom->byte = '\n';
        return true;
    case 'r':
        atom->byte = '\r';
        return true;
    case 't':
        atom->byte = '\t';
        return true;
    case 'f':
        atom->byte = '\f';
        return true;
    case 'v':
        atom->byte = '\v';
        return true;
    case 'a':
        atom->byte = '\a';
        return true;
    case 'e':
        atom->byte = 0x1b;
        return true;
    case '0': {
        // PCRE reads up to two more octal digits: \012 is a newline, not NUL followed by "12".
        int value = 0;
        for (int i = 0; i < 2 && has(m_pos) && at(m_pos) >= '0' && at(m_pos) <= '7'; ++i)
            value = value * 8 + (at(m_pos++) - '0');
        atom->byte = uint8_t(value);
        return true;
    }
    case 'x': {
        if (has(m_pos) && at(m_pos) == '{') {
            int value = 0;
            qsizetype i = m_pos + 1;
            for (; has(i) && hexValue(at(i)) >= 0 && value <= 0xff; ++i)
                value = value * 16 + hexValue(at(i));
            if (i == m_pos + 1 || !has(i) || at(i) != '}' || value > 0xff)
                return fail(QStringLiteral("invalid \\x{...} escape (a byte value 0-FF is expected)"), start);
            m_pos = i + 1;
            atom->byte = uint8_t(value);
            return true;
        }
        if (!has(m_pos + 1) || hexValue(at(m_pos)) < 0 || hexValue(at(m_pos + 1)) < 0)
            return fail(QStringLiteral("invalid \\x escape (two hex digits expected)"), start);
        atom->byte = uint8_t(hexValue(at(m_pos)) * 16 + hexValue(at(m_pos + 1)));
        m_pos += 2;
        return true;
    }
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 's':
    case 'S': {
        const char lower = char(c | 0x20);
        atom->kind = Atom::Kind::Set;
        atom->set = lower == 'd' ? digitSet() : lower == 'w' ? wordSet() : spaceSet();
        if (c != lower)
            atom->set.flip();
        return true;
    }
    case 'b':
        if (inClass) {
            atom->byte = '\b'; // PCRE: backspace inside a class
            return true;
        }
        atom->kind = Atom::Kind::Assert;
        atom->assertion = Assertion::WordBoundary;
        return true;
    case 'B':
        if (inClass)
            return fail(QStringLiteral("\\B is not allowed in a character class"), start);
        atom->kind = Atom::Kind::Assert;
        atom->assertion = Assertion::NotWordBoundary;
        return true;
    default:
        break;
    }
    if (isDigit(c))
        return fail(
            QStringLiteral("backreferences and octal escapes are not supported (\\%1)").arg(QLatin1Char(char(c))),
            start);
    if (isAlpha(c))
        return fail(QStringLiteral("unknown escape \\%1").arg(QLatin1Char(char(c))), start);
    atom->byte = c;
    return true;
}

// m_pos is on "[:"; on success leaves m_pos after ":]". Returns false without an error when this is not a
// POSIX class at all, so the caller reads '[' as a literal.
bool Parser::parsePosixClass(ByteSet *set)
{
    const char *begin = m_pattern.constData() + m_pos + 2;
    const qsizetype rest = m_size - (m_pos + 2);
    const void *close = rest > 0 ? std::memchr(begin, ']', size_t(rest)) : nullptr;
    if (!close)
        return false;
    const auto *end = static_cast<const char *>(close);
    if (end == begin || end[-1] != ':')
        return false;
    QByteArray name(begin, end - begin - 1);
    const bool negated = name.startsWith('^');
    if (negated)
        name.remove(0, 1);
    struct Named
    {
        const char *name;
        ByteSet set;
    };
    const ByteSet upper = rangeSet('A', 'Z');
    const ByteSet lower = rangeSet('a', 'z');
    const Named table[] = {
        { "alpha", upper | lower },
        { "digit", digitSet() },
        { "alnum", upper | lower | digitSet() },
        { "word", wordSet() },
        { "space", spaceSet() },
        { "blank", byteSet(' ') | byteSet('\t') },
        { "upper", upper },
        { "lower", lower },
        { "xdigit", digitSet() | rangeSet('A', 'F') | rangeSet('a', 'f') },
        { "punct", rangeSet('!', '/') | rangeSet(':', '@') | rangeSet('[', '`') | rangeSet('{', '~') },
        { "cntrl", rangeSet(0, 0x1f) | byteSet(0x7f) },
        { "graph", rangeSet('!', '~') },
        { "print", rangeSet(' ', '~') },
        { "ascii", rangeSet(0, 0x7f) },
    };
    for (const Named &n : table) {
        if (name == n.name) {
            *set = negated ? ~n.set : n.set;
            m_pos = end + 1 - m_pattern.constData();
            return true;
        }
    }
    return fail(QStringLiteral("unknown POSIX class [:%1:]").arg(QString::fromLatin1(name)), m_pos);
}

bool Parser::parseClass(Frame &frame)
{
    const qsizetype start = m_pos++;
    bool negated = false;
    if (has(m_pos) && at(m_pos) == '^') {
        negated = true;
        ++m_pos;
    }
    ByteSet set;
    // Reads one member that may start or end a range.
    auto member = [&](Atom *atom) {
        if (at(m_pos) == '\\')
            return parseEscape(true, atom);
        if (m_flags.posixClasses && at(m_pos) == '[' && has(m_pos + 1) && at(m_pos + 1) == ':') {
            atom->kind = Atom::Kind::Set;
            if (parsePosixClass(&atom->set))
                return true;
            if (!m_error.isEmpty())
                return false;
        }
        atom->kind = Atom::Kind::Byte;
        atom->byte = at(m_pos++);
        return true;
    };
    for (bool first = true;; first = false) {
        if (!has(m_pos))
            return fail(QStringLiteral("unterminated character class"), start);
        // ']' right after '[' or '[^' is a member, not the end.
        if (at(m_pos) == ']' && !first) {
            ++m_pos;
            break;
        }
        const qsizetype memberStart = m_pos;
        Atom lo;
        if (!member(&lo))
            return false;
        if (lo.kind == Atom::Kind::Set) {
            set |= lo.set;
            continue;
        }
        // A '-' right before the closing ']' is literal.
        if (has(m_pos + 1) && at(m_pos) == '-' && at(m_pos + 1) != ']') {
            ++m_pos;
            Atom hi;
            if (!member(&hi))
                return false;
            if (hi.kind != Atom::Kind::Byte)
                return fail(QStringLiteral("invalid range in character class"), memberStart);
            if (hi.byte < lo.byte)
                return fail(QStringLiteral("reversed range %1-%2 in character class")
                                .arg(describeByte(lo.byte), describeByte(hi.byte)),
                            memberStart);
            set |= rangeSet(lo.byte, hi.byte);
            continue;
        }
        set.set(lo.byte);
    }
    // Fold before negating, so that [^a] excludes both a and A.
    if (m_flags.caseless)
        foldCase(set);
    if (negated)
        set.flip();
    push(frame, m_regex.addBytes(set));
    return true;
}

// m_pos is on '{'. True when a well-formed quantifier follows: {n} {n,} {n,m} or {,m} (YARA's and PCRE2
// 10.43's {0,m}). Anything else leaves '{' a literal, as PCRE does. Bounds saturate and are checked later.
bool Parser::parseBraces(qsizetype *end, int *min, int *max)
{
    auto number = [&](qsizetype &i, int *value) {
        const qsizetype first = i;
        *value = 0;
        for (; has(i) && isDigit(at(i)); ++i)
            *value = std::min(*value * 10 + (at(i) - '0'), 1000000);
        return i > first;
    };
    qsizetype i = m_pos + 1;
    const bool hasMin = number(i, min);
    if (has(i) && at(i) == '}') {
        if (!hasMin)
            return false;
        *max = *min;
        *end = i + 1;
        return true;
    }
    if (!has(i) || at(i) != ',')
        return false;
    ++i;
    const bool hasMax = number(i, max);
    if (!has(i) || at(i) != '}' || (!hasMin && !hasMax))
        return false;
    if (!hasMin)
        *min = 0;
    if (!hasMax)
        *max = -1;
    *end = i + 1;
    return true;
}

bool Parser::applyQuantifier(Frame &frame, qsizetype start, qsizetype end, int min, int max)
{
    if (!frame.canRepeat)
        return fail(QStringLiteral("nothing to repeat"), start);
    // YARA's RE_MAX_RANGE is INT16_MAX; PCRE-style lists keep a lower bound.
    const int maxRepeat = m_flags.posixClasses ? kMaxRepeat : kMaxYaraRepeat;
    if (min > maxRepeat || max > maxRepeat)
        return fail(m_flags.posixClasses ? QStringLiteral("repeat bound above %1").arg(maxRepeat)
                                         : QStringLiteral("repeat interval too large"),
                    start);
    if (max >= 0 && min > max)
        return fail(QStringLiteral("repeat bounds out of order (%1 > %2)").arg(min).arg(max), start);
    // YARA's regex lexer refuses {0} and {0,0} ("bad repeat interval").
    if (!m_flags.posixClasses && max == 0)
        return fail(QStringLiteral("bad repeat interval"), start);
    frame.items.back() = m_regex.addRepeat(frame.items.back(), min, max);
    frame.canRepeat = false;
    m_pos = end;
    // Lazy and greedy report the same hits when every match end is reported; YARA's one match per start
    // depends on it.
    if (has(m_pos) && at(m_pos) == '?') {
        m_regex.nodes[size_t(frame.items.back())].greedy = false;
        ++m_pos;
    }
    else if (has(m_pos) && at(m_pos) == '+')
        return fail(QStringLiteral("possessive quantifiers are not supported"), m_pos);
    return true;
}

RegexParser::Result Parser::run()
{
    std::vector<Frame> frames(1);
    while (m_error.isEmpty() && has(m_pos)) {
        Frame &top = frames.back();
        const qsizetype start = m_pos;
        const uint8_t c = at(m_pos);
        switch (c) {
        case '(': {
            if (int(frames.size()) > kMaxGroupDepth) {
                fail(QStringLiteral("groups nested deeper than %1").arg(kMaxGroupDepth), start);
                break;
            }
            ++m_pos;
            if (has(m_pos) && at(m_pos) == '?') {
                if (!has(m_pos + 1) || at(m_pos + 1) != ':') {
                    fail(QStringLiteral("unsupported group syntax (only ( ) and (?: ) are supported)"), start);
                    break;
                }
                m_pos += 2;
            }
            Frame frame;
            frame.openOffset = start;
            frames.push_back(std::move(frame));
            break;
        }
        case ')': {
            if (frames.size() == 1) {
                fail(QStringLiteral("unbalanced parenthesis"), start);
                break;
            }
            const int group = finish(top);
            frames.pop_back();
            push(frames.back(), group);
            ++m_pos;
            break;
        }
        case '|':
            // YARA's grammar has no empty first alternative: "(|a)" is a syntax error there, "(a|)" is not.
            if (!m_flags.posixClasses && top.items.empty() && top.alternatives.empty()) {
                fail(QStringLiteral("syntax error"), m_pos);
                break;
            }
            top.alternatives.push_back(m_regex.addConcat(std::move(top.items)));
            top.items.clear();
            top.canRepeat = false;
            ++m_pos;
            break;
        case '?':
            applyQuantifier(top, start, start + 1, 0, 1);
            break;
        case '*':
            applyQuantifier(top, start, start + 1, 0, -1);
            break;
        case '+':
            applyQuantifier(top, start, start + 1, 1, -1);
            break;
        case '{': {
            qsizetype end = 0;
            int min = 0;
            int max = 0;
            if (parseBraces(&end, &min, &max)) {
                applyQuantifier(top, start, end, min, max);
            } else {
                push(top, addSet(byteSet('{')));
                ++m_pos;
            }
            break;
        }
        case '[':
            parseClass(top);
            break;
        case '.': {
            ByteSet any;
            any.set();
            if (!m_flags.dotAll)
                any.reset('\n');
            push(top, m_regex.addBytes(any));
            ++m_pos;
            break;
        }
        case '^':
        case '$':
            // Repeating an assertion is harmless (PCRE allows it), so it counts as repeatable.
            push(top, m_regex.addAssert(c == '^' ? Assertion::FileStart : Assertion::FileEnd));
            ++m_pos;
            break;
        case '\\': {
            Atom atom;
            if (!parseEscape(false, &atom))
                break;
            if (atom.kind == Atom::Kind::Assert)
                push(top, m_regex.addAssert(atom.assertion));
            else
                push(top, addSet(atom.kind == Atom::Kind::Set ? atom.set : byteSet(atom.byte)));
            break;
        }
        default:
            push(top, addSet(byteSet(c)));
            ++m_pos;
            break;
        }
    }
    if (m_error.isEmpty() && frames.size() > 1)
        fail(QStringLiteral("unbalanced parenthesis"), frames.back().openOffset);

    RegexParser::Result result;
    if (!m_error.isEmpty()) {
        result.error = m_error;
        return result;
    }
    m_regex.root = finish(frames.front());
    result.regex = std::move(m_regex);
    return result;
}

} // namespace

RegexParser::Result RegexParser::parse(const QByteArray &pattern, RegexFlags flags)
{
    return Parser(pattern, flags).run();
}

} // namespace Hitscope
