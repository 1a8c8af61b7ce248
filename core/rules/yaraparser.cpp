// SPDX-License-Identifier: GPL-3.0-or-later
#include "rules/yaraparser.h"

#include <set>

namespace Hitscope {

namespace {

using Kind = YaraToken::Kind;
using E = YaraExpr::Kind;

struct SyntaxError
{
    const YaraToken *at = nullptr;
    QString message;
};

/// A token as bison names it in "syntax error, unexpected ...".
QString describe(const YaraToken &t)
{
    switch (t.kind) {
    case Kind::End:
        return QStringLiteral("end of file");
    case Kind::Error:
        return QString::fromUtf8(t.text);
    case Kind::Identifier:
        return QStringLiteral("identifier");
    case Kind::Keyword:
        return QStringLiteral("<%1>").arg(QString::fromUtf8(t.text));
    case Kind::StringId:
    case Kind::StringIdWildcard:
        return QStringLiteral("string identifier");
    case Kind::StringCount:
        return QStringLiteral("string count");
    case Kind::StringOffset:
        return QStringLiteral("string offset");
    case Kind::StringLength:
        return QStringLiteral("string length");
    case Kind::Number:
        return QStringLiteral("integer number");
    case Kind::Float:
        return QStringLiteral("floating point number");
    case Kind::IntFunction:
        return QStringLiteral("integer function");
    case Kind::Text:
        return QStringLiteral("text string");
    case Kind::Regex:
        return QStringLiteral("regular expression");
    case Kind::Hex:
        return QStringLiteral("hex string");
    case Kind::Include:
        return QStringLiteral("include");
    case Kind::Punct:
        return t.text.size() == 1 ? QStringLiteral("'%1'").arg(QString::fromUtf8(t.text)) : QString::fromUtf8(t.text);
    }
    return QString();
}

class Parser
{
public:
    explicit Parser(const std::vector<YaraToken> &tokens)
        : m_t(tokens)
    {
    }

    std::vector<YaraParser::Item> run()
    {
        std::vector<YaraParser::Item> items;
        while (peek().kind != Kind::End) {
            const size_t begin = m_pos;
            YaraParser::Item item;
            try {
                if (peek().isKeyword("import")) {
                    item.kind = YaraParser::Item::Kind::Import;
                    item.file = peek().file;
                    item.line = peek().line;
                    next();
                    item.module = expect(Kind::Text, "text string").text;
                } else {
                    item.kind = YaraParser::Item::Kind::Rule;
                    item.rule = rule();
                }
            } catch (const SyntaxError &e) {
                item.kind = YaraParser::Item::Kind::Error;
                item.file = e.at->file;
                item.line = e.at->line;
                item.message = e.message;
                item.rule = YaraRuleDecl();
                item.rule.name = m_ruleName;
                item.rule.file = m_ruleFile;
                item.rule.line = m_ruleLine;
                recover(begin);
            }
            m_ruleName.clear();
            m_ruleLine = 0;
            items.push_back(std::move(item));
        }
        return items;
    }

private:
    const YaraToken &peek(size_t ahead = 0) const
    {
        const size_t i = m_pos + ahead;
        return i < m_t.size() ? m_t[i] : m_t.back();
    }

    const YaraToken &next()
    {
        const YaraToken &t = peek();
        if (m_pos + 1 < m_t.size())
            ++m_pos;
        return t;
    }

    [[noreturn]] void fail(const YaraToken &t, const QString &expecting = {})
    {
        if (t.kind == Kind::Error)
            throw SyntaxError{ &t, QString::fromUtf8(t.text) };
        QString message = QStringLiteral("syntax error, unexpected %1").arg(describe(t));
        if (!expecting.isEmpty())
            message += QStringLiteral(", expecting %1").arg(expecting);
        throw SyntaxError{ &t, message };
    }

    const YaraToken &expect(Kind kind, const char *what)
    {
        if (peek().kind != kind)
            fail(peek(), QString::fromLatin1(what));
        return next();
    }

    void expectPunct(const char *p)
    {
        if (!peek().isPunct(p))
            fail(peek(), QStringLiteral("'%1'").arg(QLatin1String(p)));
        next();
    }

    void expectKeyword(const char *k)
    {
        if (!peek().isKeyword(k))
            fail(peek(), QStringLiteral("<%1>").arg(QLatin1String(k)));
        next();
    }

    /// After an error: on at the next rule (with its private/global) or import, past the item that failed.
    void recover(size_t begin)
    {
        size_t i = std::max(m_pos, begin + 1);
        while (i < m_t.size() && m_t[i].kind != Kind::End && !m_t[i].isKeyword("rule") && !m_t[i].isKeyword("import"))
            ++i;
        if (i >= m_t.size())
            i = m_t.size() - 1;
        while (i > begin + 1 && m_t[i].isKeyword("rule")
               && (m_t[i - 1].isKeyword("private") || m_t[i - 1].isKeyword("global")))
            --i;
        m_pos = i;
    }

    YaraRuleDecl rule()
    {
        YaraRuleDecl r;
        r.file = peek().file;
        r.line = peek().line;
        while (peek().isKeyword("private") || peek().isKeyword("global")) {
            (next().text == "private" ? r.isPrivate : r.isGlobal) = true;
        }
        if (!peek().isKeyword("rule"))
            fail(peek());
        r.file = peek().file;
        r.line = peek().line;
        m_ruleFile = r.file;
        m_ruleLine = r.line;
        next();
        r.name = expect(Kind::Identifier, "identifier").text;
        m_ruleName = r.name;
        if (peek().isPunct(":")) {
            next();
            std::set<QByteArray> seen;
            do {
                const YaraToken &tag = expect(Kind::Identifier, "identifier");
                if (!seen.insert(tag.text).second)
                    throw SyntaxError{ &tag, QStringLiteral("duplicated tag identifier \"%1\"").arg(QString::fromUtf8(tag.text)) };
                r.tags.push_back(tag.text);
            } while (peek().kind == Kind::Identifier);
        }
        expectPunct("{");
        if (peek().isKeyword("meta")) {
            next();
            expectPunct(":");
            do {
                r.metas.push_back(meta());
            } while (peek().kind == Kind::Identifier);
        }
        if (peek().isKeyword("strings")) {
            next();
            expectPunct(":");
            std::set<QByteArray> ids;
            do {
                const YaraToken &id = peek();
                YaraStringDecl s = stringDecl();
                if (s.id != "$" && !ids.insert(s.id).second)
                    throw SyntaxError{ &id, QStringLiteral("duplicated string identifier \"%1\"").arg(QString::fromUtf8(s.id)) };
                r.strings.push_back(std::move(s));
            } while (peek().kind == Kind::StringId);
        }
        expectKeyword("condition");
        expectPunct(":");
        r.condition = boolean();
        expectPunct("}");
        return r;
    }

    YaraMeta meta()
    {
        YaraMeta m;
        m.id = expect(Kind::Identifier, "identifier").text;
        expectPunct("=");
        const YaraToken &v = peek();
        if (v.kind == Kind::Text) {
            m.type = YaraMeta::Type::String;
            m.text = v.text;
        } else if (v.kind == Kind::Number) {
            m.type = YaraMeta::Type::Integer;
            m.integer = v.integer;
        } else if (v.isPunct("-") && peek(1).kind == Kind::Number) {
            next();
            m.type = YaraMeta::Type::Integer;
            m.integer = -peek().integer;
        } else if (v.isKeyword("true") || v.isKeyword("false")) {
            m.type = YaraMeta::Type::Boolean;
            m.integer = v.isKeyword("true") ? 1 : 0;
        } else {
            fail(v);
        }
        next();
        return m;
    }

    [[noreturn]] void invalidModifier(const YaraToken &at, const char *why)
    {
        throw SyntaxError{ &at, QStringLiteral("invalid modifier: %1").arg(QLatin1String(why)) };
    }

    YaraStringDecl stringDecl()
    {
        YaraStringDecl s;
        const YaraToken &id = expect(Kind::StringId, "string identifier");
        s.id = id.text;
        s.line = id.line;
        expectPunct("=");
        const YaraToken &value = peek();
        uint32_t allowed = 0;
        if (value.kind == Kind::Text) {
            s.kind = YaraStringDecl::Kind::Text;
            allowed = 0xff;
        } else if (value.kind == Kind::Regex) {
            s.kind = YaraStringDecl::Kind::Regex;
            s.regexNocase = value.nocase;
            s.regexDotAll = value.dotAll;
            allowed = YaraStringDecl::Wide | YaraStringDecl::Ascii | YaraStringDecl::Nocase | YaraStringDecl::Fullword
                      | YaraStringDecl::Private;
        } else if (value.kind == Kind::Hex) {
            s.kind = YaraStringDecl::Kind::Hex;
            allowed = YaraStringDecl::Private;
        } else {
            fail(value);
        }
        s.value = value.text;
        next();
        static const std::pair<const char *, uint32_t> names[] = {
            { "wide", YaraStringDecl::Wide },         { "ascii", YaraStringDecl::Ascii },
            { "nocase", YaraStringDecl::Nocase },     { "fullword", YaraStringDecl::Fullword },
            { "private", YaraStringDecl::Private },   { "xor", YaraStringDecl::Xor },
            { "base64", YaraStringDecl::Base64 },     { "base64wide", YaraStringDecl::Base64Wide },
        };
        while (peek().kind == Kind::Keyword) {
            uint32_t flag = 0;
            for (const auto &[name, f] : names)
                if (peek().text == name)
                    flag = f;
            if (!flag || !(allowed & flag))
                break;
            const YaraToken &mod = next();
            if (flag == YaraStringDecl::Xor && peek().isPunct("(")) {
                next();
                const YaraToken &lo = expect(Kind::Number, "integer number");
                int64_t low = lo.integer;
                int64_t high = low;
                if (peek().isPunct("-")) {
                    next();
                    high = expect(Kind::Number, "integer number").integer;
                    if (low < 0)
                        invalidModifier(mod, "lower bound for xor range exceeded (min: 0)");
                    if (high > 255)
                        invalidModifier(mod, "upper bound for xor range exceeded (max: 255)");
                    if (low > high)
                        invalidModifier(mod, "xor lower bound exceeds upper bound");
                } else if (low < 0 || low > 255) {
                    invalidModifier(mod, "invalid xor range");
                }
                expectPunct(")");
                s.xorMin = int(low);
                s.xorMax = int(high);
            } else if (flag == YaraStringDecl::Xor) {
                s.xorMin = 0;
                s.xorMax = 255;
            }
            if (flag == YaraStringDecl::Base64 || flag == YaraStringDecl::Base64Wide) {
                QByteArray alphabet;
                if (peek().isPunct("(")) {
                    next();
                    alphabet = expect(Kind::Text, "text string").text;
                    if (alphabet.size() != 64)
                        invalidModifier(mod, "length of base64 alphabet must be 64");
                    expectPunct(")");
                }
                const QByteArray effective = alphabet.isEmpty() ? QByteArray(kYaraBase64Alphabet) : alphabet;
                if (s.has(YaraStringDecl::Base64) || s.has(YaraStringDecl::Base64Wide)) {
                    const QByteArray earlier = s.alphabet.isEmpty() ? QByteArray(kYaraBase64Alphabet) : s.alphabet;
                    if (earlier != effective)
                        invalidModifier(mod, "can not specify multiple alphabets");
                }
                if (effective != kYaraBase64Alphabet)
                    s.alphabet = effective;
            }
            if (s.modifiers & flag)
                throw SyntaxError{ &mod, QStringLiteral("duplicated modifier") };
            s.modifiers |= flag;
        }
        s.source = value.kind == Kind::Hex ? "{" + value.text + "}" : value.text;
        return s;
    }

    YaraExprPtr node(E kind, const YaraToken &at)
    {
        auto e = std::make_unique<YaraExpr>();
        e->kind = kind;
        e->line = at.line;
        return e;
    }

    YaraExprPtr binary(E kind, const YaraToken &at, YaraExprPtr l, YaraExprPtr r, const QByteArray &op = {})
    {
        YaraExprPtr e = node(kind, at);
        e->text = op;
        e->children.push_back(std::move(l));
        e->children.push_back(std::move(r));
        return e;
    }

    YaraExprPtr boolean()
    {
        YaraExprPtr l = conjunction();
        while (peek().isKeyword("or")) {
            const YaraToken &op = next();
            l = binary(E::Or, op, std::move(l), conjunction());
        }
        return l;
    }

    YaraExprPtr conjunction()
    {
        YaraExprPtr l = negation();
        while (peek().isKeyword("and")) {
            const YaraToken &op = next();
            l = binary(E::And, op, std::move(l), negation());
        }
        return l;
    }

    YaraExprPtr negation()
    {
        if (peek().isKeyword("not") || peek().isKeyword("defined")) {
            const YaraToken &op = next();
            YaraExprPtr e = node(op.text == "not" ? E::Not : E::Defined, op);
            e->children.push_back(negation());
            return e;
        }
        return relation();
    }

    static bool isComparison(const YaraToken &t)
    {
        if (t.kind == Kind::Punct)
            return t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=" || t.text == "==" || t.text == "!=";
        if (t.kind == Kind::Keyword)
            return t.text == "contains" || t.text == "icontains" || t.text == "startswith" || t.text == "istartswith"
                   || t.text == "endswith" || t.text == "iendswith" || t.text == "iequals" || t.text == "matches";
        return false;
    }

    YaraExprPtr relation()
    {
        const YaraToken &t = peek();
        if (t.isKeyword("true") || t.isKeyword("false")) {
            next();
            return node(t.text == "true" ? E::True : E::False, t);
        }
        if (t.kind == Kind::StringId) {
            next();
            if (peek().isKeyword("at")) {
                next();
                YaraExprPtr e = node(E::StringAt, t);
                e->text = t.text;
                e->children.push_back(arith(0));
                return e;
            }
            if (peek().isKeyword("in")) {
                next();
                YaraExprPtr e = node(E::StringIn, t);
                e->text = t.text;
                e->children.push_back(range());
                return e;
            }
            YaraExprPtr e = node(E::StringFound, t);
            e->text = t.text;
            return e;
        }
        if (t.isKeyword("for"))
            return forExpression();
        if (t.isKeyword("all") || t.isKeyword("any") || t.isKeyword("none")) {
            next();
            YaraExprPtr q = node(t.text == "all" ? E::All : t.text == "any" ? E::Any : E::None, t);
            if (!peek().isKeyword("of"))
                fail(peek(), QStringLiteral("<of>"));
            return ofRest(std::move(q), t);
        }
        YaraExprPtr left = arith(0);
        if (peek().isKeyword("of"))
            return ofRest(std::move(left), t);
        if (peek().isPunct("%") && peek(1).isKeyword("of")) {
            next();
            next();
            YaraExprPtr e = node(E::PercentOf, t);
            e->children.push_back(std::move(left));
            e->children.push_back(set(true));
            return e;
        }
        if (isComparison(peek())) {
            const YaraToken &op = next();
            return binary(E::Binary, op, std::move(left), arith(0), op.text);
        }
        return left;
    }

    /// `Q of set [in range]`, at the `of`.
    YaraExprPtr ofRest(YaraExprPtr quantifier, const YaraToken &at)
    {
        expectKeyword("of");
        YaraExprPtr e = node(E::Of, at);
        e->children.push_back(std::move(quantifier));
        e->children.push_back(set(true));
        if (e->children.back()->kind != E::RuleSet && peek().isKeyword("in")) {
            next();
            e->children.push_back(range());
        }
        return e;
    }

    /// `them`, `($a, $b*)` or, where allowed, a rule set `(r1, r2*)`.
    YaraExprPtr set(bool rulesAllowed)
    {
        const YaraToken &t = peek();
        if (t.isKeyword("them")) {
            next();
            return node(E::Them, t);
        }
        expectPunct("(");
        const bool rules = peek().kind == Kind::Identifier;
        if (rules && !rulesAllowed)
            fail(peek());
        YaraExprPtr e = node(rules ? E::RuleSet : E::StringSet, t);
        while (true) {
            const YaraToken &item = peek();
            if (rules && item.kind == Kind::Identifier) {
                next();
                QByteArray name = item.text;
                if (peek().isPunct("*")) {
                    next();
                    name += '*';
                }
                e->names.push_back(name);
            } else if (!rules && (item.kind == Kind::StringId || item.kind == Kind::StringIdWildcard)) {
                next();
                e->names.push_back(item.text);
            } else {
                fail(item);
            }
            if (peek().isPunct(",")) {
                next();
                continue;
            }
            expectPunct(")");
            return e;
        }
    }

    YaraExprPtr range()
    {
        const YaraToken &t = peek();
        expectPunct("(");
        YaraExprPtr e = node(E::Range, t);
        e->children.push_back(arith(0));
        expectPunct("..");
        e->children.push_back(arith(0));
        expectPunct(")");
        return e;
    }

    YaraExprPtr forExpression()
    {
        const YaraToken &f = next();
        YaraExprPtr quantifier;
        const YaraToken &q = peek();
        if (q.isKeyword("all") || q.isKeyword("any") || q.isKeyword("none")) {
            next();
            quantifier = node(q.text == "all" ? E::All : q.text == "any" ? E::Any : E::None, q);
        } else {
            quantifier = arith(0);
        }
        if (peek().isKeyword("of")) {
            next();
            YaraExprPtr e = node(E::ForOf, f);
            e->children.push_back(std::move(quantifier));
            e->children.push_back(set(false));
            expectPunct(":");
            expectPunct("(");
            e->children.push_back(boolean());
            expectPunct(")");
            return e;
        }
        YaraExprPtr e = node(E::ForIn, f);
        e->names.push_back(expect(Kind::Identifier, "identifier").text);
        while (peek().isPunct(",")) {
            next();
            e->names.push_back(expect(Kind::Identifier, "identifier").text);
        }
        expectKeyword("in");
        e->children.push_back(std::move(quantifier));
        const YaraToken &it = peek();
        if (it.isPunct("(")) {
            next();
            YaraExprPtr first = arith(0);
            if (peek().isPunct("..")) {
                next();
                YaraExprPtr r = node(E::Range, it);
                r->children.push_back(std::move(first));
                r->children.push_back(arith(0));
                expectPunct(")");
                e->children.push_back(std::move(r));
            } else {
                YaraExprPtr list = node(E::Enumeration, it);
                list->children.push_back(std::move(first));
                while (peek().isPunct(",")) {
                    next();
                    list->children.push_back(arith(0));
                }
                expectPunct(")");
                e->children.push_back(std::move(list));
            }
        } else if (it.kind == Kind::Identifier) {
            e->children.push_back(identifier());
        } else {
            fail(it);
        }
        expectPunct(":");
        expectPunct("(");
        e->children.push_back(boolean());
        expectPunct(")");
        return e;
    }

    static int precedence(const YaraToken &t)
    {
        if (t.kind != Kind::Punct)
            return -1;
        const QByteArray &s = t.text;
        if (s == "|")
            return 1;
        if (s == "^")
            return 2;
        if (s == "&")
            return 3;
        if (s == "<<" || s == ">>")
            return 4;
        if (s == "+" || s == "-")
            return 5;
        if (s == "*" || s == "\\" || s == "%")
            return 6;
        return -1;
    }

    /// grammar.y's primary_expression: integer, float and string arithmetic, by precedence climbing.
    YaraExprPtr arith(int minPrecedence)
    {
        YaraExprPtr left = unary();
        while (true) {
            const YaraToken &op = peek();
            const int p = precedence(op);
            if (p < 0 || p < minPrecedence)
                break;
            if (op.isPunct("%") && peek(1).isKeyword("of"))
                break; // `50% of them`
            next();
            left = binary(E::Binary, op, std::move(left), arith(p + 1), op.text);
        }
        return left;
    }

    YaraExprPtr unary()
    {
        const YaraToken &t = peek();
        if (t.isPunct("-") || t.isPunct("~")) {
            next();
            YaraExprPtr e = node(t.text == "-" ? E::Minus : E::BitNot, t);
            e->children.push_back(unary());
            return e;
        }
        return atom();
    }

    YaraExprPtr atom()
    {
        const YaraToken &t = peek();
        switch (t.kind) {
        case Kind::Punct:
            if (t.text == "(") {
                next();
                YaraExprPtr inner = boolean();
                expectPunct(")");
                return inner;
            }
            break;
        case Kind::Keyword:
            if (t.text == "filesize" || t.text == "entrypoint") {
                next();
                return node(t.text == "filesize" ? E::Filesize : E::Entrypoint, t);
            }
            break;
        case Kind::IntFunction: {
            next();
            YaraExprPtr e = node(E::IntFunction, t);
            e->text = t.text;
            expectPunct("(");
            e->children.push_back(arith(0));
            expectPunct(")");
            return e;
        }
        case Kind::Number: {
            next();
            YaraExprPtr e = node(E::Integer, t);
            e->integer = t.integer;
            e->text = t.text;
            return e;
        }
        case Kind::Float: {
            next();
            YaraExprPtr e = node(E::Float, t);
            e->real = t.real;
            e->text = t.text;
            return e;
        }
        case Kind::Text: {
            next();
            YaraExprPtr e = node(E::Text, t);
            e->text = t.text;
            return e;
        }
        case Kind::Regex: {
            next();
            YaraExprPtr e = node(E::Regex, t);
            e->text = t.text;
            e->regexNocase = t.nocase;
            e->regexDotAll = t.dotAll;
            return e;
        }
        case Kind::StringCount: {
            next();
            YaraExprPtr e = node(E::StringCount, t);
            e->text = "$" + t.text.mid(1);
            if (peek().isKeyword("in")) {
                next();
                e->kind = E::StringCountIn;
                e->children.push_back(range());
            }
            return e;
        }
        case Kind::StringOffset:
        case Kind::StringLength: {
            next();
            YaraExprPtr e = node(t.kind == Kind::StringOffset ? E::StringOffset : E::StringLength, t);
            e->text = "$" + t.text.mid(1);
            if (peek().isPunct("[")) {
                next();
                e->children.push_back(arith(0));
                expectPunct("]");
            }
            return e;
        }
        case Kind::Identifier:
            return identifier();
        default:
            break;
        }
        fail(t);
    }

    /// An identifier and its fields, indexes and calls: `pe.sections[0].name`, `math.entropy(0, filesize)`.
    YaraExprPtr identifier()
    {
        const YaraToken &t = expect(Kind::Identifier, "identifier");
        YaraExprPtr e = node(E::Identifier, t);
        e->text = t.text;
        while (true) {
            const YaraToken &p = peek();
            if (p.isPunct(".")) {
                next();
                YaraExprPtr f = node(E::Field, p);
                f->text = expect(Kind::Identifier, "identifier").text;
                f->children.push_back(std::move(e));
                e = std::move(f);
            } else if (p.isPunct("[")) {
                next();
                YaraExprPtr i = node(E::Index, p);
                i->children.push_back(std::move(e));
                i->children.push_back(arith(0));
                expectPunct("]");
                e = std::move(i);
            } else if (p.isPunct("(")) {
                next();
                YaraExprPtr c = node(E::Call, p);
                c->children.push_back(std::move(e));
                if (!peek().isPunct(")")) {
                    c->children.push_back(boolean());
                    while (peek().isPunct(",")) {
                        next();
                        c->children.push_back(boolean());
                    }
                }
                expectPunct(")");
                e = std::move(c);
            } else {
                return e;
            }
        }
    }

    const std::vector<YaraToken> &m_t;
    size_t m_pos = 0;
    QByteArray m_ruleName;
    int m_ruleFile = 0;
    int m_ruleLine = 0;
};

} // namespace

std::vector<YaraParser::Item> YaraParser::parse(const std::vector<YaraToken> &tokens)
{
    if (tokens.empty())
        return {};
    return Parser(tokens).run();
}

QByteArray YaraExpr::describe() const
{
    auto sub = [this](size_t i) -> QByteArray { return i < children.size() && children[i] ? children[i]->describe() : QByteArray("?"); };
    switch (kind) {
    case Kind::True:
        return "true";
    case Kind::False:
        return "false";
    case Kind::Integer:
    case Kind::Float:
        return text.isEmpty() ? QByteArray::number(qlonglong(integer)) : text;
    case Kind::Text:
        return "\"" + text + "\"";
    case Kind::Regex:
        return "/" + text + "/";
    case Kind::Filesize:
        return "filesize";
    case Kind::Entrypoint:
        return "entrypoint";
    case Kind::StringFound:
        return text;
    case Kind::StringAt:
        return text + " at " + sub(0);
    case Kind::StringIn:
        return text + " in " + sub(0);
    case Kind::StringCount:
        return "#" + text.mid(1);
    case Kind::StringCountIn:
        return "#" + text.mid(1) + " in " + sub(0);
    case Kind::StringOffset:
    case Kind::StringLength: {
        QByteArray s = (kind == Kind::StringOffset ? "@" : "!") + text.mid(1);
        if (!children.empty())
            s += "[" + sub(0) + "]";
        return s;
    }
    case Kind::IntFunction:
        return text + "(" + sub(0) + ")";
    case Kind::Identifier:
        return text;
    case Kind::Field:
        return sub(0) + "." + text;
    case Kind::Index:
        return sub(0) + "[" + sub(1) + "]";
    case Kind::Call: {
        QByteArray s = sub(0) + "(";
        for (size_t i = 1; i < children.size(); ++i)
            s += (i > 1 ? ", " : "") + sub(i);
        return s + ")";
    }
    case Kind::Not:
        return "not " + sub(0);
    case Kind::Defined:
        return "defined " + sub(0);
    case Kind::And:
        return sub(0) + " and " + sub(1);
    case Kind::Or:
        return sub(0) + " or " + sub(1);
    case Kind::Minus:
        return "-" + sub(0);
    case Kind::BitNot:
        return "~" + sub(0);
    case Kind::Binary:
        return sub(0) + " " + text + " " + sub(1);
    case Kind::Of:
        return sub(0) + " of " + sub(1) + (children.size() > 2 ? " in " + sub(2) : QByteArray());
    case Kind::PercentOf:
        return sub(0) + "% of " + sub(1);
    case Kind::ForIn:
        return "for " + sub(0) + " " + names.front() + " in " + sub(1) + " : (" + sub(2) + ")";
    case Kind::ForOf:
        return "for " + sub(0) + " of " + sub(1) + " : (" + sub(2) + ")";
    case Kind::Range:
        return "(" + sub(0) + ".." + sub(1) + ")";
    case Kind::Enumeration: {
        QByteArray s = "(";
        for (size_t i = 0; i < children.size(); ++i)
            s += (i ? ", " : "") + sub(i);
        return s + ")";
    }
    case Kind::StringSet:
    case Kind::RuleSet: {
        QByteArray s = "(";
        for (size_t i = 0; i < names.size(); ++i)
            s += (i ? ", " : "") + names[i];
        return s + ")";
    }
    case Kind::Them:
        return "them";
    case Kind::All:
        return "all";
    case Kind::Any:
        return "any";
    case Kind::None:
        return "none";
    }
    return "?";
}

} // namespace Hitscope
