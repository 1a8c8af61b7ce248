// SPDX-License-Identifier: GPL-3.0-or-later
#include "rules/yaraconditioncompiler.h"

#include <limits>
#include <memory>
#include <vector>

#include <yaramod/types/expressions.h>
#include <yaramod/types/rule.h>

#include "rules/conditionprogram.h"

namespace Hitscope {

namespace {

using namespace yaramod;
using Op = ConditionProgram::Op;
using Node = ConditionProgram::Node;
constexpr int64_t U = ConditionProgram::Undefined;
constexpr int64_t Int64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t Int64Min = std::numeric_limits<int64_t>::min();

/// Thrown inside the compiler only; compile() turns it into the reason.
struct Refusal
{
    QString reason;
};

[[noreturn]] void refuse(const QString &reason)
{
    throw Refusal{reason};
}

QString text(const Expression *e)
{
    return QString::fromStdString(e->getText());
}

/// What YARA's parser knows about an expression while compiling: its type and, for integers, the constant value
/// it tracks (U when not a constant). The constant drives YARA's compile-time errors, which we must reproduce.
struct Value
{
    int32_t node = -1;
    bool isInt = false;
    int64_t constant = U;
};

/// The module an expression belongs to (pe, elf, math, ...), or an empty string.
std::string moduleOf(const Expression *e)
{
    const bool moduleShaped = dynamic_cast<const StructAccessExpression *>(e)
                              || dynamic_cast<const ArrayAccessExpression *>(e)
                              || dynamic_cast<const FunctionCallExpression *>(e);
    const auto *id = dynamic_cast<const IdExpression *>(e);
    if (!id)
        return {};
    if (!moduleShaped && !(id->getSymbol() && !id->getSymbol()->isValue()))
        return {};
    while (true) {
        if (const auto *s = dynamic_cast<const StructAccessExpression *>(e))
            e = s->getStructure().get();
        else if (const auto *a = dynamic_cast<const ArrayAccessExpression *>(e))
            e = a->getArray().get();
        else if (const auto *f = dynamic_cast<const FunctionCallExpression *>(e))
            e = f->getFunction().get();
        else
            break;
    }
    const auto *root = dynamic_cast<const IdExpression *>(e);
    if (root && root->getSymbol())
        return root->getSymbol()->getName();
    return "?";
}

void childrenOf(const Expression *e, std::vector<const Expression *> &out)
{
    const auto add = [&out](const Expression::Ptr &p) {
        if (p)
            out.push_back(p.get());
    };
    if (const auto *b = dynamic_cast<const BinaryOpExpression *>(e)) {
        add(b->getLeftOperand());
        add(b->getRightOperand());
    } else if (const auto *u = dynamic_cast<const UnaryOpExpression *>(e)) {
        add(u->getOperand());
    } else if (const auto *p = dynamic_cast<const ParenthesesExpression *>(e)) {
        add(p->getEnclosedExpression());
    } else if (const auto *f = dynamic_cast<const ForExpression *>(e)) {
        add(f->getVariable());
        add(f->getIteratedSet());
        add(f->getBody());
    } else if (const auto *s = dynamic_cast<const SetExpression *>(e)) {
        for (const auto &x : s->getElements())
            add(x);
    } else if (const auto *r = dynamic_cast<const RangeExpression *>(e)) {
        add(r->getLow());
        add(r->getHigh());
    } else if (const auto *o = dynamic_cast<const StringOffsetExpression *>(e)) {
        add(o->getIndexExpression());
    } else if (const auto *l = dynamic_cast<const StringLengthExpression *>(e)) {
        add(l->getIndexExpression());
    } else if (const auto *at = dynamic_cast<const StringAtExpression *>(e)) {
        add(at->getAtExpression());
    } else if (const auto *in = dynamic_cast<const StringInRangeExpression *>(e)) {
        add(in->getRangeExpression());
    } else if (const auto *i = dynamic_cast<const IntFunctionExpression *>(e)) {
        add(i->getArgument());
    } else if (const auto *c = dynamic_cast<const FunctionCallExpression *>(e)) {
        for (const auto &x : c->getArguments())
            add(x);
    } else if (const auto *a = dynamic_cast<const ArrayAccessExpression *>(e)) {
        add(a->getAccessor());
    }
}

/// The first module a condition uses, searched before anything else so that the reason names the module
/// rather than a symptom of it (a float, a string operator).
std::string firstModule(const Expression *e)
{
    if (!e)
        return {};
    std::string m = moduleOf(e);
    if (!m.empty())
        return m;
    std::vector<const Expression *> children;
    childrenOf(e, children);
    for (const Expression *c : children) {
        m = firstModule(c);
        if (!m.empty())
            return m;
    }
    return {};
}

/// An integer literal as YARA's lexer reads it: decimal with an optional KB/MB suffix, 0x hex or 0o octal;
/// anything above INT64_MAX is an overflow error in YARA (yaramod silently gives 0).
int64_t parseLiteral(const std::string &s)
{
    int base = 10;
    size_t pos = 0;
    size_t end = s.size();
    int64_t multiplier = 1;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        pos = 2;
    } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
        base = 8;
        pos = 2;
    } else if (s.size() > 2 && (s.compare(s.size() - 2, 2, "KB") == 0 || s.compare(s.size() - 2, 2, "MB") == 0)) {
        multiplier = s[s.size() - 2] == 'K' ? 1024 : 1048576;
        end -= 2;
    }
    if (pos >= end)
        refuse(QStringLiteral("cannot read the integer '%1'").arg(QString::fromStdString(s)));
    uint64_t v = 0;
    for (size_t k = pos; k < end; ++k) {
        const char ch = s[k];
        int digit = -1;
        if (ch >= '0' && ch <= '9')
            digit = ch - '0';
        else if (ch >= 'a' && ch <= 'f')
            digit = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F')
            digit = ch - 'A' + 10;
        if (digit < 0 || digit >= base)
            refuse(QStringLiteral("cannot read the integer '%1'").arg(QString::fromStdString(s)));
        if (v > (uint64_t(Int64Max) - uint64_t(digit)) / uint64_t(base))
            refuse(QStringLiteral("integer overflow in '%1' (YARA refuses it)").arg(QString::fromStdString(s)));
        v = v * uint64_t(base) + uint64_t(digit);
    }
    if (int64_t(v) > Int64Max / multiplier)
        refuse(QStringLiteral("integer overflow in '%1' (YARA refuses it)").arg(QString::fromStdString(s)));
    return int64_t(v) * multiplier;
}

/// An arithmetic operator as it appears in yaramod's tree, in source order.
struct ArithToken
{
    enum Kind { Operand, Binary, Prefix } kind;
    Op op = Op::Const;
    const Expression *operand = nullptr;
};

bool binaryArith(const Expression *e, Op *op)
{
    if (dynamic_cast<const PlusExpression *>(e))
        *op = Op::Add;
    else if (dynamic_cast<const MinusExpression *>(e))
        *op = Op::Sub;
    else if (dynamic_cast<const MultiplyExpression *>(e))
        *op = Op::Mul;
    else if (dynamic_cast<const DivideExpression *>(e))
        *op = Op::Div;
    else if (dynamic_cast<const ModuloExpression *>(e))
        *op = Op::Mod;
    else if (dynamic_cast<const BitwiseAndExpression *>(e))
        *op = Op::BitAnd;
    else if (dynamic_cast<const BitwiseOrExpression *>(e))
        *op = Op::BitOr;
    else if (dynamic_cast<const BitwiseXorExpression *>(e))
        *op = Op::BitXor;
    else if (dynamic_cast<const ShiftLeftExpression *>(e))
        *op = Op::Shl;
    else if (dynamic_cast<const ShiftRightExpression *>(e))
        *op = Op::Shr;
    else
        return false;
    return true;
}

bool prefixArith(const Expression *e, Op *op)
{
    if (dynamic_cast<const UnaryMinusExpression *>(e))
        *op = Op::Neg;
    else if (dynamic_cast<const BitwiseNotExpression *>(e))
        *op = Op::BitNot;
    else
        return false;
    return true;
}

/// YARA's precedences (grammar.y): | < ^ < & < shifts < + - < * \ %.
int precedence(Op op)
{
    switch (op) {
    case Op::BitOr:
        return 1;
    case Op::BitXor:
        return 2;
    case Op::BitAnd:
        return 3;
    case Op::Shl:
    case Op::Shr:
        return 4;
    case Op::Add:
    case Op::Sub:
        return 5;
    default:
        return 6;
    }
}

int64_t yaraAbs(int64_t v)
{
    return v == Int64Min ? Int64Min : (v < 0 ? -v : v);
}

class Compiler
{
public:
    Compiler(const Rule &rule, const std::function<int(const std::string &)> &ruleIndex)
        : m_ruleIndex(ruleIndex)
    {
        for (const String *s : rule.getStrings())
            m_stringIds.push_back(s->getIdentifier());
        m_use.resize(m_stringIds.size());
    }

    std::shared_ptr<const ConditionProgram> compile(const Expression *condition,
                                                    std::vector<YaraConditionCompiler::StringUse> *uses)
    {
        if (!condition)
            refuse(QStringLiteral("the rule has no condition"));
        const std::string module = firstModule(condition);
        if (!module.empty())
            refuse(QStringLiteral("needs module '%1' (modules are not supported)").arg(QString::fromStdString(module)));
        const Value root = expr(condition);
        for (size_t k = 0; k < m_use.size(); ++k) {
            if (!m_use[k].referenced)
                refuse(QStringLiteral("string %1 (number %2) is not used in the condition (YARA refuses such rules)")
                           .arg(QString::fromStdString(m_stringIds[k]))
                           .arg(k + 1));
        }
        if (uses) {
            uses->clear();
            for (const Use &u : m_use) {
                YaraConditionCompiler::StringUse use;
                if (u.fixed && u.offset != U)
                    use.fixedOffset = u.offset;
                uses->push_back(use);
            }
        }
        return std::make_shared<const ConditionProgram>(std::move(m_nodes), std::move(m_lists), root.node);
    }

private:
    /// YARA's bookkeeping per string (parser.c, yr_parser_reduce_string_identifier): every string starts as
    /// "fixed offset", and every use other than `at` one constant clears that. Replayed in YARA's parse order.
    struct Use
    {
        bool referenced = false;
        bool fixed = true;
        int64_t offset = U;
    };

    /// A use of string `ref` (a loop's `$` applies to all the rule's strings); `at` is the constant of an `at`.
    void use(int32_t ref, bool isAt, int64_t at = U)
    {
        if (ref < 0) {
            for (Use &u : m_use) {
                if (!isAt) {
                    u.fixed = false;
                    continue;
                }
                if (u.offset == U)
                    u.offset = at;
                if (u.offset != at)
                    u.fixed = false;
            }
            return;
        }
        Use &u = m_use[size_t(ref)];
        u.referenced = true;
        if (!isAt) {
            u.fixed = false;
            return;
        }
        if (u.offset == U)
            u.offset = at;
        if (u.offset == U || u.offset != at)
            u.fixed = false;
    }

    struct Loop
    {
        std::string variable; ///< empty for a for-of loop
        bool ready = false;   ///< false while its own range is compiled (the variable is not set yet)
    };

    int32_t add(Op op, int32_t a = -1, int32_t b = -1, int32_t c = -1, int32_t d = -1, int64_t imm = 0)
    {
        m_nodes.push_back(Node{op, a, b, c, d, imm});
        return int32_t(m_nodes.size() - 1);
    }

    Value boolean(int32_t node) { return Value{node, false, U}; }
    Value integer(int32_t node, int64_t constant = U) { return Value{node, true, constant}; }
    Value constant(int64_t v) { return integer(add(Op::Const, -1, -1, -1, -1, v), v); }

    Value intExpr(const Expression *e, const char *where)
    {
        const Value v = expr(e);
        if (!v.isInt)
            refuse(QStringLiteral("'%1' is not an integer (in %2)").arg(text(e), QLatin1String(where)));
        return v;
    }

    int32_t stringRef(std::string id)
    {
        id[0] = '$';
        if (id == "$") {
            if (m_forOfSlot < 0)
                refuse(QStringLiteral("anonymous string reference outside a for-of loop"));
            return ConditionProgram::loopStringRef(m_forOfSlot);
        }
        for (size_t k = 0; k < m_stringIds.size(); ++k) {
            if (m_stringIds[k] == id)
                return int32_t(k);
        }
        refuse(QStringLiteral("undefined string %1").arg(QString::fromStdString(id)));
    }

    /// Pushes the strings a set names onto m_lists, duplicates kept (YARA counts `($a, $a)` as two strings).
    std::pair<int32_t, int32_t> stringSet(const Expression *set)
    {
        std::vector<std::string> patterns;
        if (dynamic_cast<const ThemExpression *>(set)) {
            patterns.push_back("$*");
        } else if (const auto *s = dynamic_cast<const SetExpression *>(set)) {
            for (const auto &element : s->getElements()) {
                if (dynamic_cast<const StringExpression *>(element.get())
                    || dynamic_cast<const StringWildcardExpression *>(element.get()))
                    patterns.push_back(element->getText());
                else
                    refuse(QStringLiteral("unsupported set element '%1'").arg(text(element.get())));
            }
        } else {
            refuse(QStringLiteral("unsupported set '%1'").arg(text(set)));
        }
        const int32_t start = int32_t(m_lists.size());
        for (const std::string &pattern : patterns) {
            const bool wildcard = !pattern.empty() && pattern.back() == '*';
            const std::string prefix = wildcard ? pattern.substr(0, pattern.size() - 1) : pattern;
            int matched = 0;
            for (size_t k = 0; k < m_stringIds.size(); ++k) {
                const std::string &id = m_stringIds[k];
                if (wildcard ? id.compare(0, prefix.size(), prefix) == 0 : id == prefix) {
                    m_lists.push_back(int32_t(k));
                    m_use[k].referenced = true;
                    m_use[k].fixed = false;
                    ++matched;
                }
            }
            if (matched == 0)
                refuse(QStringLiteral("undefined string %1").arg(QString::fromStdString(pattern)));
        }
        return {start, int32_t(m_lists.size()) - start};
    }

    Value quantifier(const Expression *q)
    {
        if (dynamic_cast<const AllExpression *>(q))
            return constant(U); // YARA pushes undefined for "all"
        if (dynamic_cast<const AnyExpression *>(q))
            return constant(1);
        // YARA does not type-check the quantifier; a rule reference counts as 0 or 1.
        return expr(q);
    }

    int enterLoop(const std::string &variable)
    {
        if (int(m_loops.size()) == ConditionProgram::MaxLoopDepth)
            refuse(QStringLiteral("more than %1 nested loops (YARA refuses it)").arg(ConditionProgram::MaxLoopDepth));
        m_loops.push_back(Loop{variable, false});
        return int(m_loops.size()) - 1;
    }

    /// The name of the variable of `for Q i in ...`; yaramod keeps it but offers no getter.
    static std::string loopVariable(const ForIntExpression *f)
    {
        const std::string all = f->getText();
        const std::string prefix = "for " + f->getVariable()->getText() + " ";
        if (all.compare(0, prefix.size(), prefix) != 0)
            refuse(QStringLiteral("cannot read the loop variable of '%1'").arg(text(f)));
        const size_t end = all.find(' ', prefix.size());
        return all.substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size());
    }

    // Arithmetic: yaramod's tree is flattened back to source order and parsed again with YARA's precedences.
    void flatten(const Expression *e, std::vector<ArithToken> &out)
    {
        Op op;
        if (binaryArith(e, &op)) {
            const auto *b = static_cast<const BinaryOpExpression *>(e);
            flatten(b->getLeftOperand().get(), out);
            out.push_back(ArithToken{ArithToken::Binary, op, nullptr});
            flatten(b->getRightOperand().get(), out);
        } else if (prefixArith(e, &op)) {
            out.push_back(ArithToken{ArithToken::Prefix, op, nullptr});
            flatten(static_cast<const UnaryOpExpression *>(e)->getOperand().get(), out);
        } else {
            out.push_back(ArithToken{ArithToken::Operand, Op::Const, e});
        }
    }

    Value parseArith(const std::vector<ArithToken> &tokens, size_t &pos, int minPrecedence)
    {
        Value left = parsePrefix(tokens, pos);
        while (pos < tokens.size() && tokens[pos].kind == ArithToken::Binary
               && precedence(tokens[pos].op) >= minPrecedence) {
            const Op op = tokens[pos++].op;
            const Value right = parseArith(tokens, pos, precedence(op) + 1);
            left = binary(op, left, right);
        }
        return left;
    }

    Value parsePrefix(const std::vector<ArithToken> &tokens, size_t &pos)
    {
        if (pos >= tokens.size())
            refuse(QStringLiteral("malformed arithmetic expression"));
        const ArithToken &t = tokens[pos++];
        if (t.kind == ArithToken::Prefix) {
            const Value v = parsePrefix(tokens, pos);
            if (!v.isInt)
                refuse(QStringLiteral("operand of '%1' is not an integer").arg(QLatin1String(t.op == Op::Neg ? "-" : "~")));
            int64_t k = U;
            if (v.constant != U)
                k = t.op == Op::Neg ? int64_t(0 - uint64_t(v.constant)) : ~v.constant;
            return integer(add(t.op, v.node), k);
        }
        if (t.kind != ArithToken::Operand)
            refuse(QStringLiteral("malformed arithmetic expression"));
        const Value v = expr(t.operand);
        if (!v.isInt)
            refuse(QStringLiteral("'%1' is not an integer").arg(text(t.operand)));
        return v;
    }

    /// One binary integer operator, with YARA's compile-time checks on constants (grammar.y).
    Value binary(Op op, const Value &l, const Value &r)
    {
        const int64_t i1 = l.constant;
        const int64_t i2 = r.constant;
        const bool both = i1 != U && i2 != U;
        const auto overflow = [&](const char *sign) {
            refuse(QStringLiteral("integer overflow in %1 %2 %3 (YARA refuses it)").arg(i1).arg(QLatin1String(sign)).arg(i2));
        };
        int64_t k = U;
        switch (op) {
        case Op::Add:
            if (both && ((i2 > 0 && i1 > Int64Max - i2) || (i2 < 0 && i1 < Int64Min - i2)))
                overflow("+");
            k = both ? i1 + i2 : U;
            break;
        case Op::Sub:
            if (both && ((i2 < 0 && i1 > Int64Max + i2) || (i2 > 0 && i1 < Int64Min + i2)))
                overflow("-");
            k = both ? i1 - i2 : U;
            break;
        case Op::Mul:
            if (both && i2 != 0 && yaraAbs(i1) > Int64Max / yaraAbs(i2))
                overflow("*");
            k = both ? int64_t(uint64_t(i1) * uint64_t(i2)) : U;
            break;
        case Op::Div:
        case Op::Mod:
            if (i2 == 0)
                refuse(QStringLiteral("division by zero (YARA refuses it)"));
            if (both && !(i1 == Int64Min && i2 == -1))
                k = op == Op::Div ? i1 / i2 : i1 % i2;
            break;
        case Op::BitAnd:
            k = both ? (i1 & i2) : U;
            break;
        case Op::BitOr:
            k = both ? (i1 | i2) : U;
            break;
        case Op::BitXor:
            k = both ? (i1 ^ i2) : U;
            break;
        case Op::Shl:
        case Op::Shr:
            if (i2 != U && i2 < 0)
                refuse(QStringLiteral("negative shift (YARA refuses it)"));
            if (i2 != U && i2 >= 64)
                k = 0;
            else if (both) // YARA's constant for >> is computed with << as well (grammar.y), so must ours be
                k = int64_t(uint64_t(i1) << i2);
            break;
        default:
            break;
        }
        return integer(add(op, l.node, r.node), k);
    }

    Value comparison(Op op, const BinaryOpExpression *e)
    {
        const Value l = intExpr(e->getLeftOperand().get(), "a comparison");
        const Value r = intExpr(e->getRightOperand().get(), "a comparison");
        return boolean(add(op, l.node, r.node));
    }

    std::pair<int32_t, int32_t> range(const Expression *e)
    {
        const auto *r = dynamic_cast<const RangeExpression *>(e);
        if (!r)
            refuse(QStringLiteral("unsupported range '%1'").arg(text(e)));
        const Value low = intExpr(r->getLow().get(), "a range");
        const Value high = intExpr(r->getHigh().get(), "a range");
        return {low.node, high.node};
    }

    Value expr(const Expression *e)
    {
        if (!e)
            refuse(QStringLiteral("empty expression"));
        Op op;
        if (binaryArith(e, &op) || prefixArith(e, &op)) {
            std::vector<ArithToken> tokens;
            flatten(e, tokens);
            size_t pos = 0;
            const Value v = parseArith(tokens, pos, 0);
            if (pos != tokens.size())
                refuse(QStringLiteral("malformed arithmetic expression '%1'").arg(text(e)));
            return v;
        }
        if (const auto *p = dynamic_cast<const ParenthesesExpression *>(e))
            return expr(p->getEnclosedExpression().get());
        if (const auto *b = dynamic_cast<const BoolLiteralExpression *>(e))
            return boolean(add(Op::Const, -1, -1, -1, -1, b->getValue() ? 1 : 0));
        if (dynamic_cast<const IntLiteralExpression *>(e))
            return constant(parseLiteral(e->getText()));
        if (dynamic_cast<const DoubleLiteralExpression *>(e))
            refuse(QStringLiteral("uses a floating-point number (not supported)"));
        if (dynamic_cast<const StringLiteralExpression *>(e) || dynamic_cast<const RegexpExpression *>(e)
            || dynamic_cast<const ContainsExpression *>(e) || dynamic_cast<const MatchesExpression *>(e))
            refuse(QStringLiteral("uses text strings or regular expressions in the condition (not supported)"));
        if (dynamic_cast<const FilesizeExpression *>(e))
            return integer(add(Op::FileSize));
        if (dynamic_cast<const EntrypointExpression *>(e))
            refuse(QStringLiteral("uses 'entrypoint' (needs the pe or elf module; modules are not supported)"));

        if (const auto *n = dynamic_cast<const NotExpression *>(e))
            return boolean(add(Op::Not, expr(n->getOperand().get()).node));
        if (const auto *a = dynamic_cast<const AndExpression *>(e)) {
            const Value l = expr(a->getLeftOperand().get());
            const Value r = expr(a->getRightOperand().get());
            return boolean(add(Op::And, l.node, r.node));
        }
        if (const auto *o = dynamic_cast<const OrExpression *>(e)) {
            const Value l = expr(o->getLeftOperand().get());
            const Value r = expr(o->getRightOperand().get());
            return boolean(add(Op::Or, l.node, r.node));
        }
        if (const auto *c = dynamic_cast<const LtExpression *>(e))
            return comparison(Op::Lt, c);
        if (const auto *c = dynamic_cast<const LeExpression *>(e))
            return comparison(Op::Le, c);
        if (const auto *c = dynamic_cast<const GtExpression *>(e))
            return comparison(Op::Gt, c);
        if (const auto *c = dynamic_cast<const GeExpression *>(e))
            return comparison(Op::Ge, c);
        if (const auto *c = dynamic_cast<const EqExpression *>(e))
            return comparison(Op::Eq, c);
        if (const auto *c = dynamic_cast<const NeqExpression *>(e))
            return comparison(Op::Ne, c);

        // The string is resolved after its operands, as YARA's grammar actions run, so that uses replay in order.
        if (const auto *s = dynamic_cast<const StringExpression *>(e)) {
            const int32_t ref = stringRef(s->getId());
            use(ref, false);
            return boolean(add(Op::Found, -1, ref));
        }
        if (const auto *s = dynamic_cast<const StringAtExpression *>(e)) {
            const Value at = intExpr(s->getAtExpression().get(), "'at'");
            const int32_t ref = stringRef(s->getId());
            use(ref, true, at.constant);
            return boolean(add(Op::FoundAt, at.node, ref));
        }
        if (const auto *s = dynamic_cast<const StringInRangeExpression *>(e)) {
            const auto [low, high] = range(s->getRangeExpression().get());
            const int32_t ref = stringRef(s->getId());
            use(ref, false);
            return boolean(add(Op::FoundIn, low, ref, high));
        }
        if (const auto *s = dynamic_cast<const StringCountExpression *>(e)) {
            const int32_t ref = stringRef(s->getId());
            use(ref, false);
            return integer(add(Op::Count, -1, ref));
        }
        if (const auto *s = dynamic_cast<const StringOffsetExpression *>(e)) {
            const int32_t index = s->getIndexExpression() ? intExpr(s->getIndexExpression().get(), "'@'").node
                                                          : constant(1).node;
            const int32_t ref = stringRef(s->getId());
            use(ref, false);
            return integer(add(Op::Offset, index, ref));
        }
        if (const auto *s = dynamic_cast<const StringLengthExpression *>(e)) {
            const int32_t index = s->getIndexExpression() ? intExpr(s->getIndexExpression().get(), "'!'").node
                                                          : constant(1).node;
            const int32_t ref = stringRef(s->getId());
            use(ref, false);
            return integer(add(Op::Length, index, ref));
        }
        if (const auto *f = dynamic_cast<const IntFunctionExpression *>(e))
            return readFunction(f);

        if (const auto *o = dynamic_cast<const OfExpression *>(e)) {
            const Value q = quantifier(o->getVariable().get());
            const auto [start, count] = stringSet(o->getIteratedSet().get());
            return boolean(add(Op::Of, q.node, start, count));
        }
        if (const auto *f = dynamic_cast<const ForStringExpression *>(e)) {
            const Value q = quantifier(f->getVariable().get());
            const auto [start, count] = stringSet(f->getIteratedSet().get());
            const int slot = enterLoop({});
            m_loops.back().ready = true;
            const int outerForOf = m_forOfSlot;
            m_forOfSlot = slot;
            const Value body = expr(f->getBody().get());
            m_forOfSlot = outerForOf;
            m_loops.pop_back();
            return boolean(add(Op::ForOf, q.node, start, count, body.node, slot));
        }
        if (const auto *f = dynamic_cast<const ForIntExpression *>(e))
            return forInt(f);

        if (const auto *id = dynamic_cast<const IdExpression *>(e))
            return identifier(id);

        refuse(QStringLiteral("unsupported expression '%1'").arg(text(e)));
    }

    Value readFunction(const IntFunctionExpression *f)
    {
        std::string name = f->getFunction();
        int64_t flags = 0;
        if (name.size() > 2 && name.compare(name.size() - 2, 2, "be") == 0) {
            flags |= ConditionProgram::ReadBigEndian;
            name.resize(name.size() - 2);
        }
        if (name.compare(0, 4, "uint") == 0)
            name.erase(0, 4);
        else if (name.compare(0, 3, "int") == 0) {
            flags |= ConditionProgram::ReadSigned;
            name.erase(0, 3);
        } else
            refuse(QStringLiteral("unknown function %1").arg(QString::fromStdString(f->getFunction())));
        if (name == "8")
            flags |= 1;
        else if (name == "16")
            flags |= 2;
        else if (name == "32")
            flags |= 4;
        else
            refuse(QStringLiteral("unknown function %1").arg(QString::fromStdString(f->getFunction())));
        const Value offset = intExpr(f->getArgument().get(), "an integer function");
        return integer(add(Op::Read, offset.node, -1, -1, -1, flags));
    }

    Value forInt(const ForIntExpression *f)
    {
        const Value q = quantifier(f->getVariable().get());
        const int slot = enterLoop(loopVariable(f));
        const Expression *set = f->getIteratedSet().get();
        int32_t node = -1;
        const int32_t qNode = q.node;
        if (const auto *s = dynamic_cast<const SetExpression *>(set)) {
            std::vector<int32_t> items;
            for (const auto &element : s->getElements())
                items.push_back(intExpr(element.get(), "an integer enumeration").node);
            const int32_t start = int32_t(m_lists.size());
            m_lists.insert(m_lists.end(), items.begin(), items.end());
            m_loops.back().ready = true;
            const Value body = expr(f->getBody().get());
            node = add(Op::ForEnum, qNode, start, int32_t(items.size()), body.node, slot);
        } else {
            const auto [low, high] = range(set);
            m_loops.back().ready = true;
            const Value body = expr(f->getBody().get());
            node = add(Op::ForRange, qNode, low, high, body.node, slot);
        }
        m_loops.pop_back();
        return boolean(node);
    }

    Value identifier(const IdExpression *id)
    {
        const std::string name = id->getSymbol() ? id->getSymbol()->getName() : id->getText();
        for (int k = int(m_loops.size()) - 1; k >= 0; --k) {
            if (!m_loops[size_t(k)].variable.empty() && m_loops[size_t(k)].variable == name) {
                if (!m_loops[size_t(k)].ready)
                    refuse(QStringLiteral("loop variable %1 used in its own range").arg(QString::fromStdString(name)));
                return integer(add(Op::LoopVar, -1, -1, -1, -1, k));
            }
        }
        const int index = m_ruleIndex ? m_ruleIndex(name) : -1;
        if (index >= 0)
            return boolean(add(Op::Rule, -1, -1, -1, -1, index));
        if (id->getSymbol() && id->getSymbol()->getDataType() != Expression::Type::Bool)
            refuse(QStringLiteral("uses external variable '%1' (not supported)").arg(QString::fromStdString(name)));
        refuse(QStringLiteral("refers to rule %1, which was rejected or is unknown").arg(QString::fromStdString(name)));
    }

    const std::function<int(const std::string &)> &m_ruleIndex;
    std::vector<std::string> m_stringIds;
    std::vector<Node> m_nodes;
    std::vector<int32_t> m_lists;
    std::vector<Use> m_use;
    std::vector<Loop> m_loops;
    int m_forOfSlot = -1;
};

} // namespace

ConditionPtr YaraConditionCompiler::compile(const yaramod::Rule &rule,
                                            const std::function<int(const std::string &ruleName)> &ruleIndex,
                                            QString *reason, std::vector<StringUse> *uses)
{
    try {
        Compiler compiler(rule, ruleIndex);
        return compiler.compile(rule.getCondition().get(), uses);
    } catch (const Refusal &r) {
        if (reason)
            *reason = r.reason;
    } catch (const std::exception &e) {
        if (reason)
            *reason = QStringLiteral("cannot compile the condition: %1").arg(QString::fromUtf8(e.what()));
    }
    return nullptr;
}

} // namespace Hitscope
