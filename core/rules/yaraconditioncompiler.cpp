// SPDX-License-Identifier: GPL-3.0-or-later
#include "rules/yaraconditioncompiler.h"

#include <array>
#include <bit>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <memory>
#include <vector>

#include "modules/moduleregexes.h"
#include "modules/moduleschema.h"
#include "pattern/regexparser.h"
#include "rules/conditionprogram.h"

namespace Hitscope {

namespace {

using Op = ConditionProgram::Op;
using Node = ConditionProgram::Node;
using K = YaraExpr::Kind;
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
    throw Refusal{ reason };
}

QString q(const QByteArray &b)
{
    return QString::fromUtf8(b);
}

/// Object: a module's structure, array, dictionary, function or value not read yet (YARA's EXPRESSION_TYPE_OBJECT).
enum class Type : uint8_t { Boolean, Integer, Float, String, Regex, Object };

const char *typeName(Type t)
{
    switch (t) {
    case Type::Boolean:
        return "boolean";
    case Type::Integer:
        return "integer";
    case Type::Float:
        return "float";
    case Type::String:
        return "string";
    case Type::Regex:
        return "regexp";
    case Type::Object:
        return "object";
    }
    return "?";
}

/// What YARA's parser knows about an expression while compiling: its type and, for integers, the constant value
/// it tracks (U when not a constant). The constant drives YARA's compile-time errors, which we must reproduce.
struct Value
{
    int32_t node = -1;
    Type type = Type::Boolean;
    int64_t constant = U;
    bool literalString = false; ///< a string literal (YARA warns when one is used as a boolean)
    const ModuleObject *decl = nullptr; ///< objects: the module's declaration of it
    bool called = false; ///< objects: a function's result, already read
};

int64_t yaraAbs(int64_t v)
{
    return v == Int64Min ? Int64Min : (v < 0 ? -v : v);
}

class Compiler
{
public:
    Compiler(const YaraRuleDecl &rule, const YaraConditionCompiler::Scope &scope)
        : m_scope(scope)
    {
        for (const YaraStringDecl &s : rule.strings)
            m_stringIds.push_back(s.id);
        m_use.resize(m_stringIds.size());
    }

    std::shared_ptr<const ConditionProgram> compile(const YaraExpr *condition,
                                                    std::vector<YaraConditionCompiler::StringUse> *uses)
    {
        if (!condition)
            refuse(QStringLiteral("the rule has no condition"));
        const Value root = boolean(condition);
        for (size_t k = 0; k < m_use.size(); ++k) {
            if (!m_use[k].referenced)
                refuse(QStringLiteral("unreferenced string \"%1\"").arg(q(m_stringIds[k])));
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
        return std::make_shared<const ConditionProgram>(std::move(m_nodes), std::move(m_lists), root.node,
                                                        std::move(m_strings), std::move(m_regexes));
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
        std::vector<QByteArray> variables; ///< empty for a for-of loop
        bool ready = false;                ///< false while its own range is compiled (the variable is not set yet)
        /// Per variable: what it holds (an integer, a dictionary's key, a module's item or value).
        std::vector<Value> types;
    };

    int32_t add(Op op, int32_t a = -1, int32_t b = -1, int32_t c = -1, int32_t d = -1, int64_t imm = 0)
    {
        m_nodes.push_back(Node{ op, a, b, c, d, imm });
        return int32_t(m_nodes.size() - 1);
    }

    Value make(Type type, int32_t node, int64_t constant = U)
    {
        Value v;
        v.node = node;
        v.type = type;
        v.constant = constant;
        return v;
    }
    Value constant(int64_t v) { return make(Type::Integer, add(Op::Const, -1, -1, -1, -1, v), v); }
    Value real(double v) { return make(Type::Float, add(Op::Const, -1, -1, -1, -1, std::bit_cast<int64_t>(v))); }

    Value text(const QByteArray &s, bool literal)
    {
        m_strings.push_back(s);
        Value v = make(Type::String, add(Op::StrConst, -1, -1, -1, -1, int64_t(m_strings.size() - 1)));
        v.literalString = literal;
        return v;
    }

    [[noreturn]] void wrongType(const Value &v, const char *op)
    {
        refuse(QStringLiteral("wrong type \"%1\" for %2 operator").arg(QLatin1String(typeName(v.type)), QLatin1String(op)));
    }

    Value check(const Value &v, Type t, const char *op)
    {
        if (v.type != t)
            wrongType(v, op);
        return v;
    }

    /// grammar.y's boolean_expression: a string there is true when not empty.
    Value boolean(const YaraExpr *e)
    {
        const Value v = expr(e);
        if (v.type == Type::String) {
            if (v.literalString && m_scope.warnings)
                m_scope.warnings->push_back(QStringLiteral("using literal string \"%1\" in a boolean operation.")
                                                .arg(q(m_strings[size_t(m_nodes[size_t(v.node)].imm)])));
            return make(Type::Boolean, add(Op::StrToBool, v.node));
        }
        return v;
    }

    int32_t stringRef(const QByteArray &id)
    {
        if (id == "$") {
            if (m_forOfSlot < 0)
                refuse(QStringLiteral("wrong use of anonymous string"));
            return ConditionProgram::loopStringRef(m_forOfSlot);
        }
        for (size_t k = 0; k < m_stringIds.size(); ++k) {
            if (m_stringIds[k] == id)
                return int32_t(k);
        }
        refuse(QStringLiteral("undefined string identifier \"%1\"").arg(q(id)));
    }

    /// Pushes the strings a set names onto m_lists, duplicates kept (YARA counts `($a, $a)` as two strings).
    std::pair<int32_t, int32_t> stringSet(const YaraExpr *set)
    {
        std::vector<QByteArray> patterns;
        if (set->kind == K::Them)
            patterns.push_back("$*");
        else
            patterns = set->names;
        const int32_t start = int32_t(m_lists.size());
        for (const QByteArray &pattern : patterns) {
            const bool wildcard = pattern.endsWith('*');
            const QByteArray prefix = wildcard ? pattern.left(pattern.size() - 1) : pattern;
            int matched = 0;
            for (size_t k = 0; k < m_stringIds.size(); ++k) {
                const QByteArray &id = m_stringIds[k];
                if (wildcard ? id.startsWith(prefix) : id == prefix) {
                    m_lists.push_back(int32_t(k));
                    m_use[k].referenced = true;
                    m_use[k].fixed = false;
                    ++matched;
                }
            }
            if (matched == 0)
                refuse(QStringLiteral("undefined string identifier \"%1\"").arg(q(pattern)));
        }
        return { start, int32_t(m_lists.size()) - start };
    }

    std::pair<int32_t, int32_t> ruleSet(const YaraExpr *set)
    {
        const int32_t start = int32_t(m_lists.size());
        for (const QByteArray &name : set->names) {
            if (name.endsWith('*')) {
                const std::vector<int> rules = m_scope.rulesWithPrefix ? m_scope.rulesWithPrefix(name.chopped(1))
                                                                       : std::vector<int>();
                if (rules.empty())
                    refuse(QStringLiteral("undefined identifier \"%1\"").arg(q(name)));
                m_lists.insert(m_lists.end(), rules.begin(), rules.end());
                continue;
            }
            const int index = m_scope.ruleIndex ? m_scope.ruleIndex(name) : -1;
            if (index < 0)
                refuse(QStringLiteral("undefined identifier \"%1\"").arg(q(name)));
            m_lists.push_back(index);
        }
        return { start, int32_t(m_lists.size()) - start };
    }

    Value quantifier(const YaraExpr *e)
    {
        if (e->kind == K::All)
            return constant(U); // YARA pushes undefined for "all"
        if (e->kind == K::Any)
            return constant(1);
        if (e->kind == K::None)
            return constant(0);
        // YARA does not type-check the quantifier; a rule reference counts as 0 or 1.
        return expr(e);
    }

    int enterLoop(std::vector<QByteArray> variables)
    {
        if (int(m_loops.size()) == ConditionProgram::MaxLoopDepth)
            refuse(QStringLiteral("loop nesting limit exceeded"));
        for (const QByteArray &v : variables)
            for (const Loop &l : m_loops)
                for (const QByteArray &outer : l.variables)
                    if (outer == v)
                        refuse(QStringLiteral("duplicated loop identifier \"%1\"").arg(q(v)));
        m_loops.push_back(Loop{ std::move(variables), false, {} });
        return int(m_loops.size()) - 1;
    }

    std::pair<int32_t, int32_t> range(const YaraExpr *r)
    {
        const Value low = expr(r->child(0));
        const Value high = expr(r->child(1));
        if (low.type != Type::Integer)
            refuse(QStringLiteral("wrong type for range's lower bound"));
        if (high.type != Type::Integer)
            refuse(QStringLiteral("wrong type for range's upper bound"));
        return { low.node, high.node };
    }

    /// int to float where the other operand is a float (parser.c, yr_parser_reduce_operation).
    std::pair<int32_t, int32_t> floats(const Value &l, const Value &r)
    {
        const int32_t a = l.type == Type::Integer ? add(Op::IntToFloat, l.node) : l.node;
        const int32_t b = r.type == Type::Integer ? add(Op::IntToFloat, r.node) : r.node;
        return { a, b };
    }

    static bool numeric(const Value &v) { return v.type == Type::Integer || v.type == Type::Float; }

    /// + - * \ on integers or floats, with YARA's compile-time checks on integer constants (grammar.y).
    Value arithmetic(const QByteArray &op, const Value &l, const Value &r)
    {
        if (!numeric(l) || !numeric(r)) {
            if (l.type == Type::String && r.type == Type::String)
                refuse(QStringLiteral("strings don't support \"%1\" operation").arg(q(op)));
            refuse(QStringLiteral("type mismatch"));
        }
        if (l.type == Type::Float || r.type == Type::Float) {
            const auto [a, b] = floats(l, r);
            const Op fop = op == "+" ? Op::FAdd : op == "-" ? Op::FSub : op == "*" ? Op::FMul : Op::FDiv;
            return make(Type::Float, add(fop, a, b));
        }
        const int64_t i1 = l.constant;
        const int64_t i2 = r.constant;
        const bool both = i1 != U && i2 != U;
        const auto overflow = [&](const char *sign) {
            refuse(QStringLiteral("integer overflow in \"%1 %2 %3\"").arg(i1).arg(QLatin1String(sign)).arg(i2));
        };
        int64_t k = U;
        Op iop = Op::Add;
        if (op == "+") {
            if (both && ((i2 > 0 && i1 > Int64Max - i2) || (i2 < 0 && i1 < Int64Min - i2)))
                overflow("+");
            k = both ? i1 + i2 : U;
        } else if (op == "-") {
            iop = Op::Sub;
            if (both && ((i2 < 0 && i1 > Int64Max + i2) || (i2 > 0 && i1 < Int64Min + i2)))
                overflow("-");
            k = both ? i1 - i2 : U;
        } else if (op == "*") {
            iop = Op::Mul;
            if (both && i2 != 0 && yaraAbs(i1) > Int64Max / yaraAbs(i2))
                overflow("*");
            k = both ? int64_t(uint64_t(i1) * uint64_t(i2)) : U;
        } else {
            iop = Op::Div;
            if (i2 == 0)
                refuse(QStringLiteral("division by zero"));
            if (both && !(i1 == Int64Min && i2 == -1))
                k = i1 / i2;
        }
        return make(Type::Integer, add(iop, l.node, r.node), k);
    }

    /// % | ^ & << >>: integers only.
    Value bitwise(const QByteArray &op, const Value &l, const Value &r)
    {
        const QByteArray shown = op == "&" ? QByteArray("^") : op; // YARA's message for & says ^
        check(l, Type::Integer, shown.constData());
        check(r, Type::Integer, shown.constData());
        const int64_t i1 = l.constant;
        const int64_t i2 = r.constant;
        const bool both = i1 != U && i2 != U;
        int64_t k = U;
        Op iop = Op::Mod;
        if (op == "%") {
            if (i2 == 0)
                refuse(QStringLiteral("division by zero"));
            if (both && !(i1 == Int64Min && i2 == -1))
                k = i1 % i2;
        } else if (op == "|" || op == "^" || op == "&") {
            iop = op == "|" ? Op::BitOr : op == "^" ? Op::BitXor : Op::BitAnd;
            if (both)
                k = op == "|" ? (i1 | i2) : op == "^" ? (i1 ^ i2) : (i1 & i2);
        } else {
            iop = op == "<<" ? Op::Shl : Op::Shr;
            if (i2 != U && i2 < 0)
                refuse(QStringLiteral("invalid operand"));
            if (i2 != U && i2 >= 64)
                k = 0;
            else if (both) // YARA's constant for >> is computed with << as well (grammar.y), so must ours be
                k = int64_t(uint64_t(i1) << i2);
        }
        return make(Type::Integer, add(iop, l.node, r.node), k);
    }

    Value comparison(const QByteArray &op, const Value &l, const Value &r)
    {
        static const std::pair<const char *, std::array<Op, 3>> ops[] = {
            { "==", { Op::Eq, Op::FEq, Op::StrEq } }, { "!=", { Op::Ne, Op::FNe, Op::StrNe } },
            { "<", { Op::Lt, Op::FLt, Op::StrLt } },  { "<=", { Op::Le, Op::FLe, Op::StrLe } },
            { ">", { Op::Gt, Op::FGt, Op::StrGt } },  { ">=", { Op::Ge, Op::FGe, Op::StrGe } },
        };
        std::array<Op, 3> choice{};
        for (const auto &[name, o] : ops)
            if (op == name)
                choice = o;
        if (numeric(l) && numeric(r)) {
            if (l.type == Type::Integer && r.type == Type::Integer)
                return make(Type::Boolean, add(choice[0], l.node, r.node));
            const auto [a, b] = floats(l, r);
            return make(Type::Boolean, add(choice[1], a, b));
        }
        if (l.type == Type::String && r.type == Type::String)
            return make(Type::Boolean, add(choice[2], l.node, r.node));
        refuse(QStringLiteral("type mismatch"));
    }

    Value stringOperator(const QByteArray &op, const YaraExpr *e)
    {
        const char *name = op.constData();
        const Value l = check(expr(e->child(0)), Type::String, name);
        if (op == "matches") {
            const Value r = expr(e->child(1));
            if (r.type != Type::Regex)
                wrongType(r, "matches");
            return make(Type::Boolean, add(Op::Matches, l.node, -1, -1, -1, r.constant));
        }
        const Value r = check(expr(e->child(1)), Type::String, name);
        static const std::pair<const char *, Op> ops[] = {
            { "contains", Op::Contains },     { "icontains", Op::IContains }, { "startswith", Op::StartsWith },
            { "istartswith", Op::IStartsWith }, { "endswith", Op::EndsWith }, { "iendswith", Op::IEndsWith },
            { "iequals", Op::IEquals },
        };
        for (const auto &[n, o] : ops)
            if (op == n)
                return make(Type::Boolean, add(o, l.node, r.node));
        refuse(QStringLiteral("unknown operator %1").arg(q(op)));
    }

    Value regex(const YaraExpr *e)
    {
        RegexFlags flags;
        flags.caseless = e->regexNocase;
        flags.dotAll = e->regexDotAll;
        flags.posixClasses = false;
        RegexParser::Result parsed = RegexParser::parse(e->text, flags);
        if (!parsed.error.isEmpty())
            refuse(QStringLiteral("invalid regular expression \"/%1/\": %2").arg(q(e->text), parsed.error));
        if (!PriorityMatcher::fits(parsed.regex))
            refuse(QStringLiteral("regular expression \"/%1/\" too large: its nested counted repeats need more than %2 "
                                  "matcher states")
                       .arg(q(e->text))
                       .arg(PriorityMatcher::kMaxProgram));
        m_regexes.push_back(std::make_shared<PriorityMatcher>(parsed.regex));
        Value v = make(Type::Regex, -1);
        v.constant = int64_t(m_regexes.size() - 1);
        return v;
    }

    int64_t pool(const QByteArray &text)
    {
        m_strings.push_back(text);
        return int64_t(m_strings.size() - 1);
    }

    static Value object(int32_t node, const ModuleObject *decl)
    {
        Value v;
        v.node = node;
        v.type = Type::Object;
        v.decl = decl;
        return v;
    }

    /// What `e` names, before it is read: a module's object for identifiers, fields, items and calls (grammar.y's
    /// `identifier`), or the value of any other expression.
    Value named(const YaraExpr *e)
    {
        using MK = ModuleObject::Kind;
        switch (e->kind) {
        case K::Identifier:
            return identifier(e);
        case K::Field: {
            const Value base = named(e->child(0));
            if (base.type != Type::Object || base.decl->kind != MK::Structure)
                refuse(QStringLiteral("\"%1\" is not a structure").arg(q(e->child(0)->describe())));
            const ModuleObject *member = base.decl->member(e->text);
            if (!member)
                refuse(QStringLiteral("invalid field name \"%1\"").arg(q(e->text)));
            const int32_t place = int32_t(member - base.decl->children.data());
            return object(add(Op::ModField, base.node, -1, place, -1, pool(e->text)), member);
        }
        case K::Index: {
            const Value base = named(e->child(0));
            if (base.type == Type::Object && base.decl->kind == MK::Array && !base.decl->prototype.empty()) {
                const Value index = expr(e->child(1));
                if (index.type != Type::Integer)
                    refuse(QStringLiteral("wrong type \"%1\" for array indexes must be of integer type")
                               .arg(QLatin1String(typeName(index.type))));
                return object(add(Op::ModItem, base.node, index.node), &base.decl->prototype.front());
            }
            if (base.type == Type::Object && base.decl->kind == MK::Dictionary && !base.decl->prototype.empty()) {
                const Value key = expr(e->child(1));
                if (key.type != Type::String)
                    refuse(QStringLiteral("wrong type \"%1\" for dictionary keys must be of string type")
                               .arg(QLatin1String(typeName(key.type))));
                return object(add(Op::ModEntry, base.node, key.node), &base.decl->prototype.front());
            }
            refuse(QStringLiteral("\"%1\" is not an array or dictionary").arg(q(e->child(0)->describe())));
        }
        case K::Call:
            return call(e);
        default:
            return expr(e);
        }
    }

    /// A module function call, checked as yr_parser_check_types checks it: the arguments' types must spell one
    /// overload's format exactly (i, f, b, s, r).
    Value call(const YaraExpr *e)
    {
        const Value function = named(e->child(0));
        if (function.type != Type::Object || function.decl->kind != ModuleObject::Kind::Function)
            refuse(QStringLiteral("\"%1\" is not a function").arg(q(e->child(0)->describe())));
        QByteArray format;
        std::vector<int32_t> arguments;
        for (size_t k = 1; k < e->children.size(); ++k) {
            const YaraExpr *argument = e->child(k);
            const Value a = expr(argument);
            static const char letters[] = { 'b', 'i', 'f', 's', 'r' };
            format += letters[size_t(a.type)];
            if (a.type == Type::Regex) {
                // Run by libyara's own matcher (inside the module): kept as a ModuleRegexes number.
                const int id = ModuleRegexes::id({ argument->text, argument->regexNocase, argument->regexDotAll });
                const QString refused = ModuleRegexes::check(id);
                if (!refused.isEmpty())
                    refuse(QStringLiteral("invalid regular expression \"/%1/\" for libyara: %2").arg(q(argument->text), refused));
                arguments.push_back(add(Op::Const, -1, -1, -1, -1, id));
            } else {
                arguments.push_back(a.node);
            }
        }
        const auto &formats = function.decl->argumentFormats;
        if (std::find(formats.begin(), formats.end(), format) == formats.end())
            refuse(QStringLiteral("wrong arguments for function \"%1\"").arg(q(e->child(0)->describe())));
        const int32_t start = int32_t(m_lists.size());
        m_lists.insert(m_lists.end(), arguments.begin(), arguments.end());
        const ModuleObject::Kind returns = function.decl->returns;
        static const ModuleObject results[3] = { scalar(ModuleObject::Kind::Integer), scalar(ModuleObject::Kind::Float),
                                                 scalar(ModuleObject::Kind::String) };
        const int64_t kind = returns == ModuleObject::Kind::Float    ? ConditionProgram::ModFloat
                             : returns == ModuleObject::Kind::String ? ConditionProgram::ModString
                                                                     : ConditionProgram::ModInteger;
        Value v = object(add(Op::ModCall, function.node, start, int32_t(arguments.size()), int32_t(kind), pool(format)),
                         &results[kind]);
        v.called = true;
        return v;
    }

    static ModuleObject scalar(ModuleObject::Kind kind)
    {
        ModuleObject o;
        o.kind = kind;
        return o;
    }

    /// grammar.y's primary_expression on an identifier: a module's integer, float or string is read; anything
    /// else of a module cannot be a value.
    Value value(const Value &v, const YaraExpr *e)
    {
        if (v.type != Type::Object)
            return v;
        using MK = ModuleObject::Kind;
        const MK kind = v.decl->kind;
        if (kind != MK::Integer && kind != MK::Float && kind != MK::String)
            refuse(QStringLiteral("wrong usage of identifier \"%1\"").arg(q(e->describe())));
        const Type type = kind == MK::Integer ? Type::Integer : kind == MK::Float ? Type::Float : Type::String;
        if (v.called)
            return make(type, v.node);
        const int64_t read = kind == MK::Integer ? ConditionProgram::ModInteger
                             : kind == MK::Float ? ConditionProgram::ModFloat
                                                 : ConditionProgram::ModString;
        return make(type, add(Op::ModValue, v.node, -1, -1, -1, read));
    }

    [[noreturn]] Value undefinedIdentifier(const QByteArray &name)
    {
        if (isYaraModule(name))
            refuse(QStringLiteral("undefined identifier \"%1\" (the module is not imported: import \"%1\")").arg(q(name)));
        refuse(QStringLiteral("undefined identifier \"%1\" (an external variable? define it with -d %1=VALUE)")
                   .arg(q(name)));
    }

    Value identifier(const YaraExpr *id)
    {
        const QByteArray &name = id->text;
        for (int k = int(m_loops.size()) - 1; k >= 0; --k) {
            for (const QByteArray &v : m_loops[size_t(k)].variables) {
                if (v != name)
                    continue;
                if (!m_loops[size_t(k)].ready)
                    refuse(QStringLiteral("undefined identifier \"%1\"").arg(q(name)));
                const Loop &loop = m_loops[size_t(k)];
                const size_t index = size_t(&v - loop.variables.data());
                const int slot = k + (index == 1 ? ConditionProgram::MaxLoopDepth : 0);
                Value var = index < loop.types.size() ? loop.types[index] : make(Type::Integer, -1);
                var.node = add(Op::LoopVar, -1, -1, -1, -1, slot);
                return var;
            }
        }
        if (m_scope.externals) {
            const auto it = m_scope.externals->find(name);
            if (it != m_scope.externals->end()) {
                // An external is not a constant to YARA's compiler: its value may change before a scan.
                const YaraExternal &x = it->second;
                switch (x.type) {
                case YaraExternal::Type::Integer:
                case YaraExternal::Type::Boolean:
                    return make(Type::Integer, add(Op::Const, -1, -1, -1, -1, x.integer));
                case YaraExternal::Type::Float:
                    return make(Type::Float, add(Op::Const, -1, -1, -1, -1, std::bit_cast<int64_t>(x.real)));
                case YaraExternal::Type::String:
                    return text(x.text, false);
                }
            }
        }
        if (m_scope.modules.count(name)) {
            const ModuleObject *schema = ModuleSchema::declaration(name);
            if (!schema)
                refuse(QStringLiteral("uses module '%1', which reads a sandbox report, not the file: not supported")
                           .arg(q(name)));
            Value v = make(Type::Object, add(Op::ModRoot, -1, -1, -1, -1, pool(name)));
            v.decl = schema;
            return v;
        }
        const int index = m_scope.ruleIndex ? m_scope.ruleIndex(name) : -1;
        if (index >= 0)
            return make(Type::Boolean, add(Op::Rule, -1, -1, -1, -1, index));
        undefinedIdentifier(name);
    }

    Value readFunction(const YaraExpr *f)
    {
        QByteArray name = f->text;
        int64_t flags = 0;
        if (name.endsWith("be")) {
            flags |= ConditionProgram::ReadBigEndian;
            name.chop(2);
        }
        if (name.startsWith("uint"))
            name.remove(0, 4);
        else {
            flags |= ConditionProgram::ReadSigned;
            name.remove(0, 3);
        }
        flags |= name == "8" ? 1 : name == "16" ? 2 : 4;
        const Value offset = check(expr(f->child(0)), Type::Integer, "intXXXX or uintXXXX");
        return make(Type::Integer, add(Op::Read, offset.node, -1, -1, -1, flags));
    }

    Value forIn(const YaraExpr *f)
    {
        const Value qv = quantifier(f->child(0));
        const YaraExpr *set = f->child(1);
        if (set->kind != K::Range && set->kind != K::Enumeration)
            return forInModule(f, qv);
        if (f->names.size() != 1)
            refuse(QStringLiteral("iterator yields an integer on each iteration , but the loop expects %1")
                       .arg(f->names.size()));
        const int slot = enterLoop(f->names);
        int32_t node = -1;
        if (set->kind == K::Enumeration) {
            std::vector<int32_t> items;
            for (const auto &element : set->children) {
                const Value v = expr(element.get());
                if (v.type != Type::Integer)
                    refuse(QStringLiteral("wrong type for enumeration item"));
                items.push_back(v.node);
            }
            const int32_t start = int32_t(m_lists.size());
            m_lists.insert(m_lists.end(), items.begin(), items.end());
            m_loops.back().ready = true;
            const Value body = boolean(f->child(2));
            node = add(Op::ForEnum, qv.node, start, int32_t(items.size()), body.node, slot);
        } else {
            const auto [low, high] = range(set);
            m_loops.back().ready = true;
            const Value body = boolean(f->child(2));
            node = add(Op::ForRange, qv.node, low, high, body.node, slot);
        }
        m_loops.pop_back();
        return make(Type::Boolean, node);
    }

    /// `for any s in pe.sections : (...)`, `for any k, v in pe.version_info : (...)` (grammar.y's iterator).
    Value forInModule(const YaraExpr *f, const Value &qv)
    {
        using MK = ModuleObject::Kind;
        const YaraExpr *set = f->child(1);
        const int slot = enterLoop(f->names);
        const Value iterable = named(set);
        const bool array = iterable.type == Type::Object && iterable.decl->kind == MK::Array;
        const bool dictionary = iterable.type == Type::Object && iterable.decl->kind == MK::Dictionary;
        if ((!array && !dictionary) || iterable.decl->prototype.empty())
            refuse(QStringLiteral("identifier \"%1\" is not iterable").arg(q(set->describe())));
        if (array && f->names.size() != 1)
            refuse(QStringLiteral("iterator for \"%1\" yields a single item on each iteration, but the loop expects %2")
                       .arg(q(set->describe()))
                       .arg(f->names.size()));
        if (dictionary && f->names.size() != 2)
            refuse(QStringLiteral("iterator for \"%1\" yields a key,value pair item on each iteration")
                       .arg(q(set->describe())));
        Loop &loop = m_loops.back();
        if (dictionary)
            loop.types.push_back(make(Type::String, -1));
        loop.types.push_back(object(-1, &iterable.decl->prototype.front()));
        loop.ready = true;
        const Value body = boolean(f->child(2));
        m_loops.pop_back();
        return make(Type::Boolean,
                    add(array ? Op::ForArray : Op::ForDict, qv.node, iterable.node, -1, body.node, slot));
    }

    Value expr(const YaraExpr *e)
    {
        if (!e)
            refuse(QStringLiteral("empty expression"));
        switch (e->kind) {
        case K::True:
        case K::False:
            return make(Type::Boolean, add(Op::Const, -1, -1, -1, -1, e->kind == K::True ? 1 : 0));
        case K::Integer:
            return constant(e->integer);
        case K::Float:
            return real(e->real);
        case K::Text:
            return text(e->text, true);
        case K::Regex:
            return regex(e);
        case K::Filesize:
            return make(Type::Integer, add(Op::FileSize));
        case K::Entrypoint:
            if (m_scope.warnings)
                m_scope.warnings->push_back(QStringLiteral("Using deprecated \"entrypoint\" keyword. Use the "
                                                           "\"entry_point\" function from PE module instead."));
            return make(Type::Integer, add(Op::EntryPoint));
        case K::StringFound: {
            const int32_t ref = stringRef(e->text);
            use(ref, false);
            return make(Type::Boolean, add(Op::Found, -1, ref));
        }
        case K::StringAt: {
            // The string is resolved after its operands, as YARA's grammar actions run, so that uses replay in order.
            const Value at = check(expr(e->child(0)), Type::Integer, "at");
            const int32_t ref = stringRef(e->text);
            use(ref, true, at.constant);
            return make(Type::Boolean, add(Op::FoundAt, at.node, ref));
        }
        case K::StringIn: {
            const auto [low, high] = range(e->child(0));
            const int32_t ref = stringRef(e->text);
            use(ref, false);
            return make(Type::Boolean, add(Op::FoundIn, low, ref, high));
        }
        case K::StringCount: {
            const int32_t ref = stringRef(e->text);
            use(ref, false);
            return make(Type::Integer, add(Op::Count, -1, ref));
        }
        case K::StringCountIn: {
            const auto [low, high] = range(e->child(0));
            const int32_t ref = stringRef(e->text);
            use(ref, false);
            return make(Type::Integer, add(Op::CountIn, low, ref, high));
        }
        case K::StringOffset:
        case K::StringLength: {
            const bool offset = e->kind == K::StringOffset;
            const int32_t index = e->child(0) ? check(expr(e->child(0)), Type::Integer, offset ? "@" : "!").node
                                              : constant(1).node;
            const int32_t ref = stringRef(e->text);
            use(ref, false);
            return make(Type::Integer, add(offset ? Op::Offset : Op::Length, index, ref));
        }
        case K::IntFunction:
            return readFunction(e);
        case K::Identifier:
        case K::Field:
        case K::Index:
        case K::Call:
            return value(named(e), e);
        case K::Not: {
            const Value v = boolean(e->child(0));
            return make(Type::Boolean, add(Op::Not, v.node));
        }
        case K::Defined: {
            const Value v = boolean(e->child(0));
            return make(Type::Boolean, add(Op::Defined, v.node));
        }
        case K::And:
        case K::Or: {
            const Value l = boolean(e->child(0));
            const Value r = boolean(e->child(1));
            return make(Type::Boolean, add(e->kind == K::And ? Op::And : Op::Or, l.node, r.node));
        }
        case K::Minus: {
            const Value v = expr(e->child(0));
            if (v.type == Type::Float)
                return make(Type::Float, add(Op::FNeg, v.node));
            check(v, Type::Integer, "-");
            return make(Type::Integer, add(Op::Neg, v.node), v.constant == U ? U : int64_t(0 - uint64_t(v.constant)));
        }
        case K::BitNot: {
            const Value v = check(expr(e->child(0)), Type::Integer, "~");
            return make(Type::Integer, add(Op::BitNot, v.node), v.constant == U ? U : ~v.constant);
        }
        case K::Binary: {
            const QByteArray &op = e->text;
            if (op == "contains" || op == "icontains" || op == "startswith" || op == "istartswith"
                || op == "endswith" || op == "iendswith" || op == "iequals" || op == "matches")
                return stringOperator(op, e);
            const Value l = expr(e->child(0));
            const Value r = expr(e->child(1));
            if (op == "+" || op == "-" || op == "*" || op == "\\")
                return arithmetic(op, l, r);
            if (op == "%" || op == "|" || op == "^" || op == "&" || op == "<<" || op == ">>")
                return bitwise(op, l, r);
            return comparison(op, l, r);
        }
        case K::Of: {
            const Value qv = quantifier(e->child(0));
            const YaraExpr *set = e->child(1);
            if (set->kind == K::RuleSet) {
                const auto [start, count] = ruleSet(set);
                return make(Type::Boolean, add(Op::OfRules, qv.node, start, count));
            }
            const auto [start, count] = stringSet(set);
            if (const YaraExpr *r = e->child(2)) {
                const auto [low, high] = range(r);
                return make(Type::Boolean, add(Op::OfIn, qv.node, start, count, low, high));
            }
            return make(Type::Boolean, add(Op::Of, qv.node, start, count));
        }
        case K::PercentOf: {
            const Value p = check(expr(e->child(0)), Type::Integer, "%");
            if (p.constant != U && (p.constant < 1 || p.constant > 100))
                refuse(QStringLiteral("percentage must be between 1 and 100 (inclusive)"));
            const YaraExpr *set = e->child(1);
            const bool rules = set->kind == K::RuleSet;
            const auto [start, count] = rules ? ruleSet(set) : stringSet(set);
            return make(Type::Boolean, add(Op::PercentOf, p.node, start, count, -1, rules ? 1 : 0));
        }
        case K::ForOf: {
            if (m_forOfSlot >= 0)
                refuse(QStringLiteral("nested \"for of\" loops"));
            const Value qv = quantifier(e->child(0));
            const auto [start, count] = stringSet(e->child(1));
            const int slot = enterLoop({});
            m_loops.back().ready = true;
            m_forOfSlot = slot;
            const Value body = boolean(e->child(2));
            m_forOfSlot = -1;
            m_loops.pop_back();
            return make(Type::Boolean, add(Op::ForOf, qv.node, start, count, body.node, slot));
        }
        case K::ForIn:
            return forIn(e);
        default:
            break;
        }
        refuse(QStringLiteral("unsupported expression '%1'").arg(q(e->describe())));
    }

    const YaraConditionCompiler::Scope &m_scope;
    std::vector<QByteArray> m_stringIds;
    std::vector<Node> m_nodes;
    std::vector<int32_t> m_lists;
    std::vector<QByteArray> m_strings;
    std::vector<std::shared_ptr<const PriorityMatcher>> m_regexes;
    std::vector<Use> m_use;
    std::vector<Loop> m_loops;
    int m_forOfSlot = -1;
};

} // namespace

YaraExternal YaraExternal::fromDefinition(const QByteArray &value)
{
    YaraExternal x;
    const char *s = value.constData();
    const char *digits = *s == '-' ? s + 1 : s;
    bool allDigits = *digits != '\0';
    int dots = 0;
    for (const char *p = digits; *p; ++p) {
        if (*p == '.')
            ++dots;
        else if (!std::isdigit(uchar(*p)))
            allDigits = false;
    }
    if (*digits != '.' && dots == 1 && allDigits) {
        x.type = Type::Float;
        x.real = std::atof(s);
    } else if (dots == 0 && allDigits) {
        x.type = Type::Integer;
        x.integer = std::atoi(s); // as yara: a C int
    } else if (value == "true" || value == "false") {
        x.type = Type::Boolean;
        x.integer = value == "true" ? 1 : 0;
    } else {
        x.type = Type::String;
        x.text = value;
    }
    return x;
}

ConditionPtr YaraConditionCompiler::compile(const YaraRuleDecl &rule, const Scope &scope, QString *reason,
                                            std::vector<StringUse> *uses)
{
    try {
        Compiler compiler(rule, scope);
        return compiler.compile(rule.condition.get(), uses);
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
