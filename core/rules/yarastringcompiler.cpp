// SPDX-License-Identifier: GPL-3.0-or-later
#include "yarastringcompiler.h"

#include <algorithm>

#include <QRegularExpression>

#include "pattern/regexparser.h"

namespace Hitscope {

namespace {

/// YARA's YR_STRING_CHAINING_THRESHOLD: longer jumps split a hex string into chained pieces.
constexpr int kChainingThreshold = 200;
/// Jumps that must skip more bytes than this are not counted by the automaton (see compileHex).
constexpr int kMaxCountedJump = 16;

/// How a node is copied into another Regex.
enum class Copy { Plain, Wide, RelaxBoundaries };

/**
 * Copies the subtree at `node` of `from` into `into`. Wide: every byte is followed by a zero byte, as
 * YARA's wide modifier reads text. RelaxBoundaries: \b also holds at the ends of the file, where YARA takes
 * it for granted, so that the automaton finds every match YARA can report.
 */
int copyNode(Regex &into, const Regex &from, int node, Copy mode)
{
    const Regex::Node &n = from.nodes[size_t(node)];
    switch (n.type) {
    case Regex::Node::Type::Bytes:
        if (mode == Copy::Wide) {
            ByteSet zero;
            zero.set(0);
            return into.addConcat({ into.addBytes(n.bytes), into.addBytes(zero) });
        }
        return into.addBytes(n.bytes);
    case Regex::Node::Type::Assert:
        if (mode == Copy::Wide && n.assertion == Assertion::WordBoundary)
            return into.addAssert(Assertion::WideWordBoundary);
        if (mode == Copy::Wide && n.assertion == Assertion::NotWordBoundary)
            return into.addAssert(Assertion::WideNotWordBoundary);
        if (mode == Copy::RelaxBoundaries
            && (n.assertion == Assertion::WideWordBoundary || n.assertion == Assertion::WideNotWordBoundary))
            return into.addConcat({});
        if (mode == Copy::RelaxBoundaries && n.assertion == Assertion::WordBoundary)
            return into.addAlternate({ into.addAssert(Assertion::WordBoundary), into.addAssert(Assertion::FileStart),
                                       into.addAssert(Assertion::FileEnd) });
        return into.addAssert(n.assertion);
    case Regex::Node::Type::Empty:
        return into.addConcat({});
    case Regex::Node::Type::Concat:
    case Regex::Node::Type::Alternate: {
        std::vector<int> children;
        for (int c : n.children)
            children.push_back(copyNode(into, from, c, mode));
        Regex::Node copy;
        copy.type = n.type;
        copy.children = std::move(children);
        return into.add(std::move(copy));
    }
    case Regex::Node::Type::Repeat: {
        const int child = copyNode(into, from, n.children.front(), mode);
        const int r = into.addRepeat(child, n.min, n.max);
        into.nodes[size_t(r)].greedy = n.greedy;
        return r;
    }
    }
    return into.addConcat({});
}

Regex alternation(const std::vector<std::pair<const Regex *, Copy>> &parts)
{
    Regex out;
    std::vector<int> roots;
    for (const auto &[r, mode] : parts)
        roots.push_back(copyNode(out, *r, r->root, mode));
    out.root = out.addAlternate(std::move(roots));
    return out;
}

Regex relaxed(const Regex &exact)
{
    Regex out;
    out.root = copyNode(out, exact, exact.root, Copy::RelaxBoundaries);
    return out;
}

bool nullable(const Regex &r, int node)
{
    return r.minLength(node) == 0;
}

int nonEmpty(Regex &into, const Regex &from, int node);

/// The non-empty matches of items[i..] of a concatenation; -1 when there are none.
int nonEmptyConcat(Regex &into, const Regex &from, const std::vector<int> &items, size_t i)
{
    if (i >= items.size())
        return -1;
    std::vector<int> alternatives;
    const int head = nonEmpty(into, from, items[i]);
    if (head >= 0) {
        std::vector<int> seq{ head };
        for (size_t k = i + 1; k < items.size(); ++k)
            seq.push_back(copyNode(into, from, items[k], Copy::Plain));
        alternatives.push_back(into.addConcat(std::move(seq)));
    }
    if (nullable(from, items[i])) {
        const int tail = nonEmptyConcat(into, from, items, i + 1);
        if (tail >= 0)
            alternatives.push_back(tail);
    }
    if (alternatives.empty())
        return -1;
    return alternatives.size() == 1 ? alternatives.front() : into.addAlternate(std::move(alternatives));
}

/**
 * The non-empty matches of `node` (YARA reports no empty match), -1 when there are none: what the automata
 * look for when a regex can match the empty string, so that they do not report a match at every offset.
 */
int nonEmpty(Regex &into, const Regex &from, int node)
{
    const Regex::Node &n = from.nodes[size_t(node)];
    switch (n.type) {
    case Regex::Node::Type::Bytes:
        return copyNode(into, from, node, Copy::Plain);
    case Regex::Node::Type::Assert:
    case Regex::Node::Type::Empty:
        return -1;
    case Regex::Node::Type::Alternate: {
        std::vector<int> alternatives;
        for (int c : n.children) {
            const int a = nonEmpty(into, from, c);
            if (a >= 0)
                alternatives.push_back(a);
        }
        if (alternatives.empty())
            return -1;
        return into.addAlternate(std::move(alternatives));
    }
    case Regex::Node::Type::Concat:
        return nonEmptyConcat(into, from, n.children, 0);
    case Regex::Node::Type::Repeat: {
        const int child = n.children.front();
        if (n.min >= 1 && !nullable(from, child))
            return copyNode(into, from, node, Copy::Plain);
        // Empty iterations add nothing: a non-empty match is a non-empty iteration, then up to max - 1 more.
        const int first = nonEmpty(into, from, child);
        if (first < 0)
            return -1;
        if (n.max == 1)
            return first;
        const int rest = into.addRepeat(copyNode(into, from, child, Copy::Plain), 0, n.max < 0 ? -1 : n.max - 1);
        return into.addConcat({ first, rest });
    }
    }
    return -1;
}

Regex withoutEmptyMatches(const Regex &r)
{
    Regex out;
    out.root = nonEmpty(out, r, r.root);
    if (out.root < 0)
        out.root = out.addBytes(ByteSet()); // no byte: nothing matches
    return out;
}

/// yara_re_ast_has_unbounded_quantifier_for_dot: a `.` (any byte, or any but a newline) repeated without bound.
bool unboundedDot(const Regex &r)
{
    ByteSet anyButNewline;
    anyButNewline.set();
    anyButNewline.reset('\n');
    for (const Regex::Node &n : r.nodes) {
        if (n.type != Regex::Node::Type::Repeat || n.max >= 0)
            continue;
        const Regex::Node &child = r.nodes[size_t(n.children.front())];
        if (child.type == Regex::Node::Type::Bytes && (child.bytes.all() || child.bytes == anyButNewline))
            return true;
    }
    return false;
}

/// Which quantifiers a regex has: YARA refuses to mix greedy and lazy ones.
void quantifierKinds(const Regex &r, bool *greedy, bool *lazy)
{
    for (const Regex::Node &n : r.nodes) {
        if (n.type != Regex::Node::Type::Repeat)
            continue;
        (n.greedy ? *greedy : *lazy) = true;
    }
}

class HexParser
{
public:
    HexParser(const QByteArray &text, Regex &out)
        : m_text(text)
        , m_out(out)
    {
    }

    bool run(bool *chained, QString *error)
    {
        const int root = sequence(0, chained);
        skipSpace();
        if (m_error.isEmpty() && m_pos < m_text.size())
            fail(QStringLiteral("unexpected '%1'").arg(QLatin1Char(m_text[m_pos])));
        if (!m_error.isEmpty()) {
            *error = QStringLiteral("invalid hex string: %1 at offset %2").arg(m_error).arg(m_pos);
            return false;
        }
        m_out.root = root;
        return true;
    }

private:
    void skipSpace()
    {
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                ++m_pos;
            } else if (c == '/' && m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '/') {
                while (m_pos < m_text.size() && m_text[m_pos] != '\n')
                    ++m_pos;
            } else if (c == '/' && m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '*') {
                const qsizetype end = m_text.indexOf("*/", m_pos + 2);
                m_pos = end < 0 ? m_text.size() : end + 2;
            } else {
                break;
            }
        }
    }

    int fail(const QString &why)
    {
        if (m_error.isEmpty())
            m_error = why;
        return -1;
    }

    static int nibble(char c)
    {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
            return c - 'A' + 10;
        return c == '?' ? -2 : -1;
    }

    bool number(int *value)
    {
        skipSpace();
        const qsizetype start = m_pos;
        long long v = 0;
        while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9') {
            v = v * 10 + (m_text[m_pos] - '0');
            if (v > (1 << 30))
                return false;
            ++m_pos;
        }
        *value = int(v);
        return m_pos > start;
    }

    // A sequence of bytes, jumps and groups up to ')' or '|' or the end; `chained` only at depth 0.
    int sequence(int depth, bool *chained)
    {
        std::vector<int> items;
        bool lastWasJump = false;
        for (;;) {
            skipSpace();
            if (!m_error.isEmpty())
                return -1;
            if (m_pos >= m_text.size() || m_text[m_pos] == ')' || m_text[m_pos] == '|')
                break;
            const char c = m_text[m_pos];
            if (c == '[') {
                ++m_pos;
                int lo = 0;
                int hi = -1;
                skipSpace();
                const bool hasLo = m_pos < m_text.size() && m_text[m_pos] != '-';
                if (hasLo && !number(&lo))
                    return fail(QStringLiteral("bad jump"));
                skipSpace();
                if (m_pos < m_text.size() && m_text[m_pos] == '-') {
                    ++m_pos;
                    skipSpace();
                    if (m_pos < m_text.size() && m_text[m_pos] != ']' && !number(&hi))
                        return fail(QStringLiteral("bad jump"));
                } else {
                    if (!hasLo)
                        return fail(QStringLiteral("bad jump"));
                    if (lo <= 0)
                        return fail(QStringLiteral("invalid jump length"));
                    hi = lo;
                }
                skipSpace();
                if (m_pos >= m_text.size() || m_text[m_pos] != ']')
                    return fail(QStringLiteral("']' expected"));
                ++m_pos;
                if (hi >= 0 && lo > hi)
                    return fail(QStringLiteral("invalid jump range [%1-%2]").arg(lo).arg(hi));
                if (items.empty())
                    return fail(QStringLiteral("a hex string cannot start with a jump"));
                const bool longJump = hi < 0 || lo > kChainingThreshold || hi > kChainingThreshold;
                if (longJump && depth > 0)
                    return fail(QStringLiteral("jumps over %1 bytes are not allowed inside alternatives")
                                    .arg(kChainingThreshold));
                if (longJump)
                    *chained = true;
                ByteSet any;
                any.set();
                // YARA's jumps are lazy and match any byte (hex strings are DOT_ALL).
                const int r = m_out.addRepeat(m_out.addBytes(any), lo, hi);
                m_out.nodes[size_t(r)].greedy = false;
                items.push_back(r);
                lastWasJump = true;
                continue;
            }
            lastWasJump = false;
            if (c == '(') {
                ++m_pos;
                std::vector<int> alternatives;
                for (;;) {
                    const int alt = sequence(depth + 1, chained);
                    if (alt < 0)
                        return -1;
                    alternatives.push_back(alt);
                    skipSpace();
                    if (m_pos < m_text.size() && m_text[m_pos] == '|') {
                        ++m_pos;
                        continue;
                    }
                    if (m_pos < m_text.size() && m_text[m_pos] == ')') {
                        ++m_pos;
                        break;
                    }
                    return fail(QStringLiteral("')' expected"));
                }
                items.push_back(m_out.addAlternate(std::move(alternatives)));
                continue;
            }
            if (c == '~')
                return fail(QStringLiteral("'~' (not) is not supported by YARA 4.2"));
            if (m_pos + 1 >= m_text.size())
                return fail(QStringLiteral("incomplete byte"));
            const int hiN = nibble(c);
            const int loN = nibble(m_text[m_pos + 1]);
            if (hiN == -1 || loN == -1)
                return fail(QStringLiteral("invalid byte '%1'").arg(QString::fromLatin1(m_text.mid(m_pos, 2))));
            m_pos += 2;
            ByteSet set;
            for (int b = 0; b < 256; ++b)
                if ((hiN < 0 || (b >> 4) == hiN) && (loN < 0 || (b & 15) == loN))
                    set.set(size_t(b));
            items.push_back(m_out.addBytes(set));
        }
        if (items.empty())
            return fail(QStringLiteral("empty hex string or alternative"));
        if (lastWasJump)
            return fail(QStringLiteral("a hex string cannot end with a jump"));
        return m_out.addConcat(std::move(items));
    }

    const QByteArray &m_text;
    Regex &m_out;
    qsizetype m_pos = 0;
    QString m_error;
};

QByteArray widened(const QByteArray &text)
{
    QByteArray w;
    w.reserve(text.size() * 2);
    for (char c : text) {
        w += c;
        w += '\0';
    }
    return w;
}

YaraStringCompiler::Result compileText(const YaraStringDecl &s)
{
    YaraStringCompiler::Result result;
    const QByteArray &text = s.value;
    if (text.isEmpty()) {
        result.error = QStringLiteral("empty string");
        return result;
    }
    const bool wide = s.has(YaraStringDecl::Wide);
    const bool xorMod = s.has(YaraStringDecl::Xor);
    // As YARA: ascii unless only wide is asked (xor included).
    const bool ascii = s.has(YaraStringDecl::Ascii) || !wide;
    const int lo = s.xorMin;
    const int hi = s.xorMax;
    const Regex plain = Regex::fromLiteral(text.constData(), int(text.size()), s.has(YaraStringDecl::Nocase));
    // The order is YARA's: at one offset, the first of these that matches is the match.
    std::vector<Regex> keyed;
    std::vector<std::pair<const Regex *, Copy>> parts;
    if (!xorMod) {
        if (ascii)
            parts.push_back({ &plain, Copy::Plain });
        if (wide)
            parts.push_back({ &plain, Copy::Wide });
    } else {
        keyed.reserve(size_t(hi - lo + 1));
        for (int k = lo; k <= hi; ++k) {
            QByteArray x = text;
            for (char &c : x)
                c = char(uint8_t(c) ^ uint8_t(k));
            keyed.push_back(Regex::fromLiteral(x.constData(), int(x.size())));
        }
        if (wide) {
            // Wide xor: the key applies to the zero bytes too.
            for (int k = lo; k <= hi; ++k) {
                QByteArray x;
                for (char c : text) {
                    x += char(uint8_t(c) ^ uint8_t(k));
                    x += char(uint8_t(k));
                }
                keyed.push_back(Regex::fromLiteral(x.constData(), int(x.size())));
            }
            for (size_t i = size_t(hi - lo + 1); i < keyed.size(); ++i)
                parts.push_back({ &keyed[i], Copy::Plain });
        }
        if (ascii || !wide)
            for (int i = 0; i <= hi - lo; ++i)
                parts.push_back({ &keyed[size_t(i)], Copy::Plain });
    }
    auto y = std::make_shared<YaraString>();
    Regex exact = alternation(parts);
    y->matcher = std::make_shared<PriorityMatcher>(exact);
    y->fullword = s.has(YaraStringDecl::Fullword);
    y->textLength = int(text.size());
    if (xorMod) {
        if (ascii || !wide)
            y->xorForms.push_back(text);
        if (wide)
            y->xorForms.push_back(widened(text));
        y->xorKeys = { lo, hi };
    }
    y->minLength = exact.minLength();
    if (!(wide && ascii))
        y->fixedLength = int(text.size()) * (wide ? 2 : 1);
    result.dfa = std::move(exact);
    result.yara = std::move(y);
    return result;
}

YaraStringCompiler::Result compileHex(const YaraStringDecl &s)
{
    YaraStringCompiler::Result result;
    auto y = std::make_shared<YaraString>();
    y->hex = true;
    Regex exact;
    bool chained = false;
    if (!YaraStringCompiler::parseHex(s.value, exact, &chained, &result.error))
        return result;
    // Chained pieces: YARA confirms a start with the first tail piece that completes the chain.
    y->matcher = std::make_shared<PriorityMatcher>(
        exact, chained ? PriorityMatcher::Choice::Shortest : PriorityMatcher::Choice::Priority);
    y->minLength = exact.minLength();
    // A long jump's count makes the automaton explode ({ 4D 5A [300-] 90 } must count 300 bytes after each
    // 4D 5A): the automaton gets any run of bytes instead, and every start is confirmed by the matcher.
    Regex dfa = exact;
    bool relaxed = false;
    for (Regex::Node &n : dfa.nodes) {
        if (n.type == Regex::Node::Type::Repeat && n.min > kMaxCountedJump
            && dfa.nodes[size_t(n.children.front())].bytes.all()) {
            n.min = 0;
            n.max = -1;
            relaxed = true;
        }
    }
    if (!relaxed && exact.minLength() == exact.maxLength())
        y->fixedLength = exact.minLength();
    result.dfa = std::move(dfa);
    result.yara = std::move(y);
    return result;
}

YaraStringCompiler::Result compileRegex(const YaraStringDecl &s)
{
    YaraStringCompiler::Result result;
    RegexFlags flags;
    flags.caseless = s.regexNocase || s.has(YaraStringDecl::Nocase);
    flags.dotAll = s.regexDotAll;
    flags.posixClasses = false;
    RegexParser::Result parsed = RegexParser::parse(s.value, flags);
    if (!parsed.error.isEmpty()) {
        result.error = QStringLiteral("invalid regular expression: %1").arg(parsed.error);
        return result;
    }
    if (!PriorityMatcher::fits(parsed.regex)) {
        result.error = QStringLiteral("regular expression too large: its nested counted repeats need more than "
                                      "%1 matcher states")
                           .arg(PriorityMatcher::kMaxProgram);
        return result;
    }
    if (unboundedDot(parsed.regex))
        result.warning = QStringLiteral("%1 contains .*, .+ or .{x,} consider using .{,N}, .{1,N} or {x,N} with a "
                                        "reasonable value for N")
                             .arg(QString::fromUtf8(s.id));
    bool greedy = false;
    bool lazy = false;
    quantifierKinds(parsed.regex, &greedy, &lazy);
    if (greedy && lazy) {
        result.error = QStringLiteral("greedy and ungreedy quantifiers can't be mixed in a regular expression");
        return result;
    }
    const bool wide = s.has(YaraStringDecl::Wide);
    const bool ascii = s.has(YaraStringDecl::Ascii) || !wide;
    std::vector<std::pair<const Regex *, Copy>> parts;
    if (ascii)
        parts.push_back({ &parsed.regex, Copy::Plain });
    if (wide)
        parts.push_back({ &parsed.regex, Copy::Wide });
    auto y = std::make_shared<YaraString>();
    y->matcher = std::make_shared<PriorityMatcher>(alternation({ parts.front() }));
    y->matcherIsWide = !ascii;
    if (parts.size() > 1)
        y->wideMatcher = std::make_shared<PriorityMatcher>(alternation({ parts.back() }));
    y->fullword = s.has(YaraStringDecl::Fullword);
    Regex any = alternation(parts);
    y->minLength = std::max(1, any.minLength());
    result.dfa = any.matchesEmpty() ? withoutEmptyMatches(relaxed(any)) : relaxed(any);
    result.yara = std::move(y);
    return result;
}


/**
 * YARA's base64 forms of `text` (libyara/base64.c): encoded after 0, 1 and 2 leading bytes, with the characters
 * those bytes and the padding touch cut off both ends; `wide` interleaves zeros in the encoded text (base64wide).
 */
void base64Forms(const QByteArray &text, const QByteArray &alphabet, bool wide, std::vector<QByteArray> &out)
{
    for (int shift = 0; shift <= 2; ++shift) {
        if (shift == 1 && text.size() == 1)
            continue;
        const QByteArray in = QByteArray(shift, 'A') + text;
        const qsizetype len = in.size();
        const int pad = (len % 3) ? int(3 - len % 3) : 0;
        QByteArray enc;
        qsizetype k = 0;
        for (; len - k >= 3; k += 3) {
            const auto b0 = uint8_t(in[k]), b1 = uint8_t(in[k + 1]), b2 = uint8_t(in[k + 2]);
            enc += alphabet[b0 >> 2];
            enc += alphabet[((b0 & 0x03) << 4) | (b1 >> 4)];
            enc += alphabet[((b1 & 0x0f) << 2) | (b2 >> 6)];
            enc += alphabet[b2 & 0x3f];
        }
        if (len - k == 1) {
            const auto b0 = uint8_t(in[k]);
            enc += alphabet[b0 >> 2];
            enc += alphabet[(b0 & 0x03) << 4];
            enc += "==";
        } else if (len - k == 2) {
            const auto b0 = uint8_t(in[k]), b1 = uint8_t(in[k + 1]);
            enc += alphabet[b0 >> 2];
            enc += alphabet[((b0 & 0x03) << 4) | (b1 >> 4)];
            enc += alphabet[(b1 & 0x0f) << 2];
            enc += '=';
        }
        const int leading = shift ? shift + 1 : 0;
        const int trailing = pad ? pad + 1 : 0;
        const QByteArray cut = enc.mid(leading, enc.size() - leading - trailing);
        out.push_back(wide ? widened(cut) : cut);
    }
}

YaraStringCompiler::Result compileBase64(const YaraStringDecl &s)
{
    YaraStringCompiler::Result result;
    const QByteArray alphabet = s.alphabet.isEmpty() ? QByteArray(kYaraBase64Alphabet) : s.alphabet;
    const bool b64 = s.has(YaraStringDecl::Base64);
    const bool b64w = s.has(YaraStringDecl::Base64Wide);
    // The order is YARA's (yr_base64_ast_from_string): the alternatives of one regex, tried in this order.
    std::vector<QByteArray> forms;
    if (s.has(YaraStringDecl::Wide)) {
        const QByteArray w = widened(s.value);
        if (b64)
            base64Forms(w, alphabet, false, forms);
        if (b64w)
            base64Forms(w, alphabet, true, forms);
    }
    if (s.has(YaraStringDecl::Ascii) || !s.has(YaraStringDecl::Wide)) {
        if (b64)
            base64Forms(s.value, alphabet, false, forms);
        if (b64w)
            base64Forms(s.value, alphabet, true, forms);
    }
    std::vector<Regex> literals;
    literals.reserve(forms.size());
    for (const QByteArray &f : forms) {
        if (f.isEmpty()) {
            result.error = QStringLiteral("the base64 form of the string is empty");
            return result;
        }
        literals.push_back(Regex::fromLiteral(f.constData(), int(f.size())));
    }
    std::vector<std::pair<const Regex *, Copy>> parts;
    for (const Regex &r : literals)
        parts.push_back({ &r, Copy::Plain });
    Regex any = alternation(parts);
    auto y = std::make_shared<YaraString>();
    y->matcher = std::make_shared<PriorityMatcher>(any);
    y->minLength = any.minLength();
    if (any.minLength() == any.maxLength())
        y->fixedLength = any.minLength();
    result.dfa = std::move(any);
    result.yara = std::move(y);
    return result;
}

/// YARA's _yr_parser_check_string_modifiers, and its empty string check.
QString modifierError(const YaraStringDecl &s)
{
    if (s.kind == YaraStringDecl::Kind::Text && s.value.isEmpty())
        return QStringLiteral("empty string \"%1\"").arg(QString::fromUtf8(s.id));
    const bool b64 = s.has(YaraStringDecl::Base64);
    const bool b64w = s.has(YaraStringDecl::Base64Wide);
    const QString name = b64 ? QStringLiteral("base64") : QStringLiteral("base64wide");
    if (s.has(YaraStringDecl::Xor) && s.has(YaraStringDecl::Nocase))
        return QStringLiteral("invalid modifier combination: xor nocase");
    if (s.has(YaraStringDecl::Nocase) && (b64 || b64w))
        return QStringLiteral("invalid modifier combination: %1 nocase").arg(name);
    if (s.has(YaraStringDecl::Fullword) && (b64 || b64w))
        return QStringLiteral("invalid modifier combination: %1 fullword").arg(name);
    if (s.has(YaraStringDecl::Xor) && (b64 || b64w))
        return QStringLiteral("invalid modifier combination: %1 xor").arg(name);
    return {};
}

} // namespace

bool YaraStringCompiler::parseHex(const QByteArray &text, Regex &out, bool *chained, QString *error)
{
    *chained = false;
    HexParser parser(text, out);
    return parser.run(chained, error);
}

YaraStringCompiler::Result YaraStringCompiler::compile(const YaraStringDecl &string)
{
    const QString invalid = modifierError(string);
    if (!invalid.isEmpty()) {
        Result r;
        r.error = invalid;
        return r;
    }
    if (string.kind == YaraStringDecl::Kind::Hex)
        return compileHex(string);
    if (string.kind == YaraStringDecl::Kind::Regex)
        return compileRegex(string);
    if (string.has(YaraStringDecl::Base64) || string.has(YaraStringDecl::Base64Wide))
        return compileBase64(string);
    return compileText(string);
}

} // namespace Hitscope
