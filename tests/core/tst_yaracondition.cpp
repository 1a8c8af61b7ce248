// SPDX-License-Identifier: GPL-3.0-or-later
// YARA conditions parsed and compiled by Hitscope's front end must give the answer libyara 4.2.3 gives: libyara is the oracle,
// and it also supplies the string matches our evaluation is fed with, so only the condition semantics differ.
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <QTest>

#include <yara.h>
#include "rules/yaralexer.h"
#include "rules/yaraparser.h"

#include "rules/conditionprogram.h"
#include "rules/yaraconditioncompiler.h"

using namespace Hitscope;

namespace {

struct OracleRule
{
    std::string name;
    bool matched = false;
    std::vector<std::string> stringIds;
    std::vector<std::vector<StringMatch>> strings;
};

struct OracleResult
{
    bool compiled = false;
    std::string error;
    std::vector<OracleRule> rules; ///< in declaration order
};

void compilerMessage(int level, const char *, int line, const YR_RULE *, const char *message, void *user)
{
    if (level == YARA_ERROR_LEVEL_ERROR)
        static_cast<std::string *>(user)->append(std::to_string(line) + ": " + message + "; ");
}

int scanCallback(YR_SCAN_CONTEXT *context, int message, void *data, void *user)
{
    if (message != CALLBACK_MSG_RULE_MATCHING && message != CALLBACK_MSG_RULE_NOT_MATCHING)
        return CALLBACK_CONTINUE;
    auto *out = static_cast<std::map<std::string, OracleRule> *>(user);
    const auto *rule = static_cast<const YR_RULE *>(data);
    OracleRule r;
    r.name = rule->identifier;
    r.matched = message == CALLBACK_MSG_RULE_MATCHING;
    const YR_STRING *string = nullptr;
    yr_rule_strings_foreach(rule, string)
    {
        r.stringIds.push_back(string->identifier);
        std::vector<StringMatch> matches;
        // Private matches included: conditions see them.
        for (const YR_MATCH *m = context->matches[string->idx].head; m; m = m->next)
            matches.push_back(StringMatch{m->base + m->offset, m->match_length});
        r.strings.push_back(std::move(matches));
    }
    (*out)[r.name] = std::move(r);
    return CALLBACK_CONTINUE;
}

/// Compiles `source` with libyara and scans `data` with it.
OracleResult runYara(const std::string &source, const QByteArray &data)
{
    OracleResult result;
    YR_COMPILER *compiler = nullptr;
    if (yr_compiler_create(&compiler) != ERROR_SUCCESS)
        return result;
    yr_compiler_set_callback(compiler, compilerMessage, &result.error);
    if (yr_compiler_add_string(compiler, source.c_str(), nullptr) != 0) {
        yr_compiler_destroy(compiler);
        return result;
    }
    YR_RULES *rules = nullptr;
    if (yr_compiler_get_rules(compiler, &rules) != ERROR_SUCCESS) {
        yr_compiler_destroy(compiler);
        result.error = "yr_compiler_get_rules failed";
        return result;
    }
    yr_compiler_destroy(compiler);
    std::map<std::string, OracleRule> byName;
    const int scan = yr_rules_scan_mem(rules, reinterpret_cast<const uint8_t *>(data.constData()), size_t(data.size()),
                                       0, scanCallback, &byName, 0);
    const YR_RULE *rule = nullptr;
    yr_rules_foreach(rules, rule)
    {
        const auto it = byName.find(rule->identifier);
        if (it != byName.end())
            result.rules.push_back(it->second);
    }
    yr_rules_destroy(rules);
    result.compiled = scan == ERROR_SUCCESS;
    if (scan != ERROR_SUCCESS)
        result.error = "scan failed: " + std::to_string(scan);
    return result;
}

struct OurRule
{
    std::string name;
    ConditionPtr condition;
    QString reason;
};

/// The rules of `source` as Hitscope's YARA parser reads them; false (with the first error) when one does not parse.
bool parseRules(const std::string &source, std::vector<YaraRuleDecl> *rules, QString *error)
{
    const std::vector<YaraToken> tokens = YaraLexer::tokenize(QByteArray::fromStdString(source), 0);
    for (YaraParser::Item &item : YaraParser::parse(tokens)) {
        if (item.kind == YaraParser::Item::Kind::Error) {
            *error = QStringLiteral("line %1: %2").arg(item.line).arg(item.message);
            return false;
        }
        if (item.kind == YaraParser::Item::Kind::Rule)
            rules->push_back(std::move(item.rule));
    }
    return true;
}

/// A scope in which the rule named `known` (if any) has RuleSet index `index`.
YaraConditionCompiler::Scope scopeWith(const std::function<int(const QByteArray &)> &ruleIndex)
{
    YaraConditionCompiler::Scope scope;
    scope.ruleIndex = ruleIndex;
    return scope;
}

/// The single rule of `source`, parsed (a parse error fails the calling test).
YaraRuleDecl onlyRule(const std::string &source)
{
    std::vector<YaraRuleDecl> rules;
    QString error;
    if (!parseRules(source, &rules, &error) || rules.empty())
        qFatal("cannot parse %s: %s", source.c_str(), qPrintable(error));
    return std::move(rules.back());
}

/// Parses `source` and compiles each condition; rule references resolve to earlier accepted rules.
bool compileOurs(const std::string &source, std::vector<OurRule> *rules, QString *error)
{
    std::vector<YaraRuleDecl> decls;
    if (!parseRules(source, &decls, error))
        return false;
    std::map<std::string, int> accepted;
    for (const YaraRuleDecl &rule : decls) {
        OurRule r;
        r.name = rule.name.toStdString();
        r.condition = YaraConditionCompiler::compile(
            rule,
            scopeWith([&accepted](const QByteArray &name) {
                const auto it = accepted.find(name.toStdString());
                return it == accepted.end() ? -1 : it->second;
            }),
            &r.reason);
        if (r.condition)
            accepted[r.name] = int(rules->size());
        rules->push_back(std::move(r));
    }
    return true;
}

/// Evaluates our compiled rules in order against the matches libyara found.
/// `counted`: the strings whose offsets the condition does not read (Condition::stringsNeedingOffsets) are
/// given as counts only, and no more matches than the condition needs (Condition::matchesNeeded), as Scanner
/// does when hits are not listed.
std::vector<int64_t> evaluateOurs(const std::vector<OurRule> &ours, const OracleResult &oracle, const QByteArray &data,
                                  std::vector<bool> *matched, bool counted = false)
{
    std::vector<int64_t> values;
    matched->clear();
    for (size_t k = 0; k < ours.size(); ++k) {
        std::vector<std::vector<StringMatch>> lists = oracle.rules[k].strings;
        std::vector<int64_t> counts(lists.size(), -1);
        if (counted && ours[k].condition) {
            const std::vector<bool> located = ours[k].condition->stringsNeedingOffsets(lists.size());
            const std::vector<int64_t> needed = ours[k].condition->matchesNeeded(lists.size());
            for (size_t i = 0; i < lists.size(); ++i) {
                // A condition that reads where matches are can tell every one of them apart.
                if (located[i] && needed[i] != Condition::kAllMatches)
                    qFatal("string %zu is located but needs only %lld matches", i, static_cast<long long>(needed[i]));
                if (located[i])
                    continue;
                counts[i] = std::min(int64_t(lists[i].size()), needed[i]);
                lists[i].clear();
            }
        }
        ConditionContext context;
        context.fileSize = data.size();
        context.read = [&data](int64_t offset, int size, uint8_t *out) {
            if (offset < 0 || offset + size > data.size())
                return false;
            memcpy(out, data.constData() + offset, size_t(size));
            return true;
        };
        context.strings = &lists;
        context.counts = &counts;
        context.ruleMatched = [matched](int rule) { return rule >= 0 && size_t(rule) < matched->size() && (*matched)[size_t(rule)]; };
        const auto *program = dynamic_cast<const ConditionProgram *>(ours[k].condition.get());
        const int64_t v = program ? program->value(context) : ConditionProgram::Undefined;
        values.push_back(v);
        matched->push_back(ours[k].condition && ours[k].condition->evaluate(context));
    }
    return values;
}

QString hex(const QByteArray &data)
{
    return QString::fromLatin1(data.toHex(' '));
}

/// The strings of the hand-written cases and the data they run on: $a matches at 0, 3 and 9, $b at 5,
/// $c nowhere, $d (a regex) at 8 with length 4, $x at 16 and 17.
const char *const handStrings = R"(strings:
        $a = "ab"
        $b = "cd"
        $c = "zz"
        $d = /c[ab]+c/
        $x = "x"
)";
const QByteArray handData = QByteArray("ab_abcd_cabc\x01\x02\x03\x84xx", 18);

/// Rules whose strings are all referenced somewhere, as YARA demands: the condition is or-ed with a false term
/// that names them all, which leaves the rule's truth unchanged.
std::string ruleText(const std::string &name, const std::string &strings, const std::string &condition)
{
    return "rule " + name + " {\n    " + strings + "    condition:\n        (" + condition
           + ") or (any of them and false)\n}\n";
}

const std::string helperRules = "rule yes { condition: filesize > 0 }\n"
                                "rule no { condition: filesize == 12345 }\n";

/// Seeded random conditions over a fixed set of strings, in YARA 4.2.3's syntax.
class ConditionGenerator
{
public:
    explicit ConditionGenerator(uint64_t seed)
        : m_rng(seed)
    {
    }

    static std::string strings()
    {
        return "strings:\n        $a = \"ab\"\n        $ab = \"ba\"\n        $b = \"abc\"\n"
               "        $c = /c[ab]{0,3}c/\n        $ = \"x\"\n";
    }

    QByteArray data()
    {
        static const char alphabet[] = {'a', 'b', 'c', 'x', '\0', '\xff', 'a', 'b'};
        const int size = pick(5) == 0 ? pick(4) : pick(48);
        QByteArray d;
        for (int k = 0; k < size; ++k)
            d.append(alphabet[pick(sizeof(alphabet))]);
        return d;
    }

    std::string condition()
    {
        m_intVars.clear();
        m_inForOf = false;
        m_loops = 0;
        return boolean(4);
    }

private:
    int pick(int n) { return int(m_rng() % uint64_t(n)); }
    template<size_t N>
    const char *one(const char *const (&items)[N]) { return items[pick(int(N))]; }

    std::string name() { return one({"a", "ab", "b", "c"}); }
    std::string set()
    {
        return one({"them", "($a*)", "($a, $b)", "($b, $c, $a)", "($*)", "($c)", "($a, $a)", "($ab, $c)"});
    }
    std::string stringRef(char sigil)
    {
        if (m_inForOf && pick(3) == 0)
            return std::string(1, sigil);
        return sigil + name();
    }

    std::string literal()
    {
        switch (pick(10)) {
        case 0:
            return one({"0", "1", "0x7FFFFFFFFFFFFFFF", "9223372036854775807", "0x10", "1KB", "2MB", "010", "64",
                        "63", "0xFFFFFFFF", "0x5452505452501"});
        case 1:
            return "-" + std::to_string(pick(5));
        default:
            return std::to_string(pick(20));
        }
    }

    /// Small values, for loop bounds and indices: a loop over them stays short.
    std::string small()
    {
        switch (pick(9)) {
        case 0:
            return "filesize";
        case 1:
            return "#" + name();
        case 2:
            return "@" + name() + "[" + std::to_string(pick(4)) + "]";
        case 3:
            return "filesize \\ " + std::to_string(1 + pick(8));
        case 4:
            return "-" + std::to_string(pick(3));
        case 5:
            if (!m_intVars.empty())
                return m_intVars[size_t(pick(int(m_intVars.size())))];
            [[fallthrough]];
        default:
            return std::to_string(pick(12));
        }
    }

    std::string integer(int depth)
    {
        if (depth <= 0 || pick(3) == 0) {
            switch (pick(14)) {
            case 0:
            case 1:
                return literal();
            case 2:
                return "filesize";
            case 3:
                return stringRef('#');
            case 4:
                return stringRef('@');
            case 5:
                return stringRef('@') + "[" + small() + "]";
            case 6:
                return stringRef('!') + "[" + small() + "]";
            case 7:
                return stringRef('!');
            case 8: {
                const char *fn = one({"uint8", "uint16", "uint32", "int8", "int16", "int32", "uint8be", "uint16be",
                                      "uint32be", "int8be", "int16be", "int32be"});
                return std::string(fn) + "(" + (pick(2) ? small() : "filesize - " + std::to_string(pick(6))) + ")";
            }
            case 9:
            case 10:
                if (!m_intVars.empty())
                    return m_intVars[size_t(pick(int(m_intVars.size())))];
                [[fallthrough]];
            default:
                return small();
            }
        }
        if (pick(6) == 0)
            return std::string(pick(2) ? "-" : "~") + unaryOperand(depth - 1);
        const char *op = one({"+", "-", "*", "\\", "%", "&", "|", "^", "<<", ">>", "+", "-"});
        std::string right = integer(depth - 1);
        if (std::string(op) == "<<" || std::string(op) == ">>")
            right = pick(2) ? std::to_string(pick(70) - 2) : small();
        const std::string text = integer(depth - 1) + " " + op + " " + right;
        return pick(3) == 0 ? text : "(" + text + ")";
    }

    /// Operand of a unary operator: often an operator chain (precedence matters).
    std::string unaryOperand(int depth)
    {
        return pick(2) ? integer(depth) : literal();
    }

    std::string comparison(int depth)
    {
        return integer(depth) + " " + one({"<", "<=", ">", ">=", "==", "!="}) + " " + integer(depth);
    }

    std::string quantifier()
    {
        switch (pick(8)) {
        case 0:
        case 1:
            return "any";
        case 2:
        case 3:
            return "all";
        case 4:
            return std::to_string(pick(5));
        case 5:
            return "-1";
        case 6:
            return "(@c[9])"; // undefined, which YARA takes for "all"
        default:
            return "#" + name();
        }
    }

    std::string boolean(int depth)
    {
        if (depth <= 0 || pick(4) == 0) {
            switch (pick(12)) {
            case 0:
                return one({"true", "false"});
            case 1:
            case 2:
                return stringRef('$');
            case 3:
                return stringRef('$') + " at " + integer(1);
            case 4:
                return stringRef('$') + " in (" + small() + ".." + small() + ")";
            case 5:
                return one({"yes", "no", "not yes", "not no"});
            case 6:
                return quantifier() + " of " + set();
            case 7:
                return integer(1); // an integer where YARA takes a boolean
            default:
                return comparison(2);
            }
        }
        switch (pick(9)) {
        case 0:
            return "not " + boolean(depth - 1);
        case 1:
        case 2:
            return boolean(depth - 1) + " and " + boolean(depth - 1);
        case 3:
        case 4:
            return boolean(depth - 1) + " or " + boolean(depth - 1);
        case 5:
            return "(" + boolean(depth - 1) + ")";
        default:
            if (m_loops >= 3)
                return comparison(2);
            return loop(depth);
        }
    }

    std::string loop(int depth)
    {
        ++m_loops;
        std::string text;
        if (!m_inForOf && pick(3) == 0) {
            text = "for " + quantifier() + " of " + set() + " : (";
            m_inForOf = true;
            text += boolean(depth - 1) + ")";
            m_inForOf = false;
        } else {
            const std::string var = std::string(1, char('i' + m_intVars.size()));
            text = "for " + quantifier() + " " + var + " in ";
            if (pick(3) == 0)
                text += "(" + small() + ", " + small() + ", " + small() + ")";
            else
                text += "(" + small() + ".." + small() + ")";
            m_intVars.push_back(var);
            // Integer bodies: YARA adds their values, and stops as soon as the sum reaches the quantifier.
            static const char *const integerBodies[] = {" or false", " - 1", "", " * -1 + 2"};
            const std::string body = pick(3) == 0 ? var + integerBodies[pick(4)]
                                                  : boolean(depth - 1);
            m_intVars.pop_back();
            text += " : (" + body + ")";
        }
        --m_loops;
        return text;
    }

    std::mt19937_64 m_rng;
    std::vector<std::string> m_intVars;
    bool m_inForOf = false;
    int m_loops = 0;
};

} // namespace

class TestYaraCondition : public QObject
{
    Q_OBJECT

private:
    /// The condition of a rule over `$a = "ab"` and `$b = "cd"`, compiled alone (null with `why`).
    ConditionPtr twoStringCondition(const QString &condition, QString *why)
    {
        std::vector<YaraRuleDecl> rules;
        if (!parseRules(twoStringRule(condition), &rules, why) || rules.empty())
            return nullptr;
        return YaraConditionCompiler::compile(rules[0], {}, why);
    }

    static std::string twoStringRule(const QString &condition)
    {
        return "rule t { strings: $a = \"ab\" $b = \"cd\" condition: " + condition.toStdString() + " }\n";
    }

    /// Runs one rule file through both sides and requires the same verdict for every rule.
    void compareFile(const std::string &source, const QByteArray &data, bool expectCompiled, const QString &label)
    {
        const OracleResult oracle = runYara(source, data);
        std::vector<OurRule> ours;
        QString parseError;
        const bool parsed = compileOurs(source, &ours, &parseError);
        if (!expectCompiled) {
            QVERIFY2(!oracle.compiled, qPrintable(label + QStringLiteral(": libyara compiled it")));
            return;
        }
        QVERIFY2(oracle.compiled, qPrintable(label + QStringLiteral(": libyara: ") + QString::fromStdString(oracle.error)));
        QVERIFY2(parsed, qPrintable(label + QStringLiteral(": parse: ") + parseError));
        QCOMPARE(ours.size(), oracle.rules.size());
        std::vector<bool> matched;
        const std::vector<int64_t> values = evaluateOurs(ours, oracle, data, &matched);
        for (size_t k = 0; k < ours.size(); ++k) {
            QVERIFY2(ours[k].condition, qPrintable(label + QStringLiteral(": refused: ") + ours[k].reason));
            QCOMPARE(ours[k].name, oracle.rules[k].name);
            QVERIFY2(matched[k] == oracle.rules[k].matched,
                     qPrintable(QStringLiteral("%1: rule %2: yara says %3, we say %4 (value %5)\n%6\ndata: %7")
                                    .arg(label, QString::fromStdString(ours[k].name))
                                    .arg(oracle.rules[k].matched)
                                    .arg(matched[k])
                                    .arg(values[k])
                                    .arg(QString::fromStdString(source), hex(data))));
        }
        // Strings whose offsets the condition never reads may be given as counts: the same values.
        std::vector<bool> matchedCounted;
        const std::vector<int64_t> countedValues = evaluateOurs(ours, oracle, data, &matchedCounted, true);
        for (size_t k = 0; k < ours.size(); ++k)
            QVERIFY2(countedValues[k] == values[k] && matchedCounted[k] == matched[k],
                     qPrintable(QStringLiteral("%1: rule %2 with counted strings: value %3, listed %4\n%5")
                                    .arg(label, QString::fromStdString(ours[k].name))
                                    .arg(countedValues[k])
                                    .arg(values[k])
                                    .arg(QString::fromStdString(source))));
    }

private Q_SLOTS:
    void initTestCase() { QCOMPARE(yr_initialize(), ERROR_SUCCESS); }
    void cleanupTestCase() { yr_finalize(); }

    void handWritten_data();
    void handWritten();
    void refused_data();
    void refused();
    void yaraRefusesToo_data();
    void yaraRefusesToo();
    void unusedStringRefused();
    void fixedOffsets_data();
    void fixedOffsets();
    void offsetsNeeded_data();
    void offsetsNeeded();
    void matchesNeeded_data();
    void matchesNeeded();
    void ruleReferences();
    void stringOrderFollowsDeclaration();
    void randomConditions();
};

void TestYaraCondition::handWritten_data()
{
    QTest::addColumn<QString>("condition");
    QTest::addColumn<bool>("expected");

    const auto row = [](const char *condition, bool expected) {
        QTest::newRow(condition) << QString::fromLatin1(condition) << expected;
    };
    // strings, counts, offsets, lengths
    row("$a", true);
    row("$c", false);
    row("not $c", true);
    row("#a == 3 and #c == 0 and #x == 2", true);
    row("@a[1] == 0 and @a[2] == 3 and @a[3] == 9 and @a == 0", true);
    row("!d[1] == 4 and !a == 2 and !d == 4", true);
    row("@a[4] == 9", false);          // past the last match: undefined
    row("not (@a[4] == 9)", false);    // not undefined is undefined
    row("not not (@a[4] == 9)", false);
    row("@a[0] == 0 or @a[-1] != 0", false);
    row("!d[2] == 0 or not (!d[2] == 0)", false);
    row("@c == 0 or @c != 0", false);
    // undefined in and/or: YARA's AND/OR turn undefined into false, so the result is defined
    row("(@a[4] == 9) or $a", true);
    row("(@a[4] == 9) and $a", false);
    row("not ((@a[4] == 9) and $a)", true);
    row("not ((@a[4] == 9) or $c)", true);
    row("not ($a and (@a[4] == 9))", true);
    // at / in
    row("$a at 3 and $b at 5 and $d at 8", true);
    row("$a at 4", false);
    row("$a at @a[4]", false);
    row("not ($a at @a[4])", true); // an undefined position is plain false
    row("$a in (1..3)", true);
    row("$a in (4..8)", false);
    row("$a in (10..2)", false);
    row("$b in (5..5) and $x in (17..100)", true);
    row("not ($a in (1..@a[4]))", false); // an undefined bound is undefined
    row("$a in (-5..0)", true);
    // filesize and reads
    row("filesize == 18", true);
    row("uint8(0) == 0x61 and uint16(12) == 0x0201 and uint16be(12) == 0x0102", true);
    row("uint32(12) == 0x84030201 and int32(12) == -2080177663", true);
    row("int8(15) == -124 and uint8(15) == 132 and int16be(14) == 0x0384 and int16be(15) == -31624", true);
    row("uint32be(14) == 0x03847878 and int32be(14) == 0x03847878 and uint8be(17) == 0x78", true);
    row("uint8(18) == 0 or not (uint8(18) == 0)", false);
    row("uint32(15) == 0 or uint32(15) != 0", false);
    row("uint32(14) > 0", true);
    row("uint8(-1) == 0 or not (uint8(-1) == 0)", false);
    row("uint8(@a[4]) == 0 or not (uint8(@a[4]) == 0)", false);
    // arithmetic and precedence (-1 + 2 is (-1) + 2)
    row("7 \\ 2 == 3 and -7 \\ 2 == -3 and -7 % 3 == -1 and 7 % -3 == 1", true);
    row("1 \\ (filesize - 18) == 0 or not (1 \\ (filesize - 18) == 0)", false);
    row("5 % (filesize - 18) == 0 or not (5 % (filesize - 18) == 0)", false);
    row("-1 + 2 == 1", true);
    row("-filesize + 20 == 2", true);
    row("-1 * -2 + 3 == 5", true);
    row("- -1 + 2 == 3", true);
    row("~1 + 1 == -1 and ~-1 + 1 == 1", true);
    row("-2 * 3 + 10 \\ 2 - 1 == -2", true);
    row("2 + 3 * 4 == 14 and (2 + 3) * 4 == 20", true);
    row("1 << 3 | 1 == 9 and 0xF0 & 0x3C ^ 0x0F == 0x3F and 6 | 1 ^ 3 == 6 | 2", true);
    row("1 << 63 < 0 and -8 >> 1 == -4 and -1 >> 70 == 0", true);
    row("1 << filesize * 4 == 0", true); // 72 bits: 0
    row("1 << (filesize - 19) == 0 or not (1 << (filesize - 19) == 0)", false); // negative shift: undefined
    row("0x7FFFFFFFFFFFFFFF + filesize < 0", true); // wraps
    row("1KB == 1024 and 2MB == 2097152 and 010 == 10 and 0x1f == 31", true);
    // YARA's undefined is an in-band value: an integer equal to it is undefined
    row("-0x5452505452501 == 0 or not (-0x5452505452501 == 0)", false);
    // integers where booleans are expected
    row("filesize", true);
    row("filesize - 18", false);
    row("@a[4]", false);
    row("#c", false);
    row("filesize and 0", false);
    row("not filesize", false);
    row("not (filesize - 18)", true);
    // for loops over integers
    row("for any i in (1..3) : (@a[i] == 9)", true);
    row("for all i in (1..3) : (@a[i] < 10)", true);
    row("for all i in (1..4) : (@a[i] < 10)", false);
    row("for 2 i in (1..3) : (@a[i] > 0)", true);
    row("for any i in (5..1) : (true)", false);
    row("for all i in (5..1) : (true)", false); // no iteration is false, even for "all"
    row("for all i in (1..@a[4]) : (true)", false);
    row("not for all i in (1..@a[4]) : (true)", true);
    row("for 0 i in (1..3) : (i == 2)", true);
    row("for any i in (1..3) : (i)", true);
    row("for 6 i in (1..3) : (i)", true); // the body's values are added: 1 + 2 + 3
    row("for 7 i in (1..3) : (i)", false);
    row("for all i in (0..2) : (i)", true); // 0 + 1 + 2 >= 3 iterations
    row("for all i in (0..1) : (i or false)", false);
    row("for 3 i in (1..2) : (i or false)", true); // `i or false` is worth i
    row("for any i in (1, 2, 3) : (i == 3)", true);
    row("for all i in (1, @a[4], 3) : (i > 0)", false);
    row("for 2 i in (1, @a[4], 3) : (i > 0)", true);
    row("for (@a[4]) i in (1..3) : (i < 3)", false); // undefined quantifier: all
    row("for -1 i in (1..3) : (false)", true);
    row("for 1 i in (1..2) : (4 - i * 3)", true); // 1 reaches the quantifier: the -2 that follows is never added
    // of
    row("any of ($a, $c) and not all of ($a, $c) and all of ($a, $b)", true);
    row("2 of ($a, $b, $c)", true);
    row("3 of ($a, $b, $c)", false);
    row("4 of ($a, $b)", false);
    row("0 of ($c)", true); // 0 means none
    row("0 of ($a, $c)", false);
    row("-1 of ($c)", true);
    row("#a of ($a, $b, $x)", true);
    row("(@a[4]) of ($a, $b)", true);
    row("(@a[4]) of ($a, $c)", false);
    row("all of them", false);
    row("any of them", true);
    row("2 of ($a, $a)", true); // a set may name a string twice
    row("all of ($d, $x*)", true);
    // for ... of
    row("for any of ($a, $b) : ($ at 5)", true);
    row("for all of ($a, $x) : (# >= 2)", true);
    row("for all of ($a, $b) : (# >= 2)", false);
    row("for any of ($a, $b, $d) : (@[1] == 8 and ![1] == 4)", true);
    row("for 2 of them : (#)", true);
    row("for all of ($c, $b) : (#)", false);
    row("for 0 of ($a) : ($)", true);
    row("for all of ($a, $c) : (@[4] == 1)", false);
    row("for (@a[4]) of ($a, $b) : ($)", true);
    row("for any of ($a, $b) : ($ in (4..6))", true);
    // nesting
    row("for any i in (1..3) : (for any j in (1..3) : (@a[i] + 6 == @a[j] and i != j))", true);
    row("for all of ($a, $x) : (for any i in (1..#) : (@[i] == 17))", false);
    row("for any of ($a, $x) : (for any i in (1..#) : (@[i] == 17))", true);
    row("for any i in (1..2) : (for any of ($a, $b) : (for all j in (i..i) : ($ at @a[j])))", true);
    // rule references
    row("yes and not no", true);
    row("no or not yes", false);
}

void TestYaraCondition::handWritten()
{
    QFETCH(QString, condition);
    QFETCH(bool, expected);
    const std::string source = helperRules + ruleText("t", handStrings, condition.toStdString());
    const OracleResult oracle = runYara(source, handData);
    QVERIFY2(oracle.compiled, oracle.error.c_str());
    QCOMPARE(oracle.rules.back().matched, expected); // what the row says is what YARA says
    compareFile(source, handData, true, condition);
}

void TestYaraCondition::refused_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("reason");

    // Module uses yara refuses, checked against the modules' declarations.
    QTest::newRow("unknown field") << R"(import "pe" rule t { condition: pe.no_such_field > 1 })"
                                   << "invalid field name \"no_such_field\"";
    QTest::newRow("wrong arguments") << R"(import "pe" rule t { condition: pe.exports(1.5) })"
                                     << "wrong arguments for function \"pe.exports\"";
    QTest::newRow("function without a call") << R"(import "pe" rule t { condition: pe.is_dll })"
                                             << "wrong usage of identifier \"pe.is_dll\"";
    QTest::newRow("structure as a value") << R"(import "pe" rule t { condition: pe.sections })"
                                          << "wrong usage of identifier \"pe.sections\"";
    QTest::newRow("field of an integer") << R"(import "pe" rule t { condition: pe.machine.x == 1 })"
                                         << "\"pe.machine\" is not a structure";
    QTest::newRow("index of a structure") << R"(import "pe" rule t { condition: pe.rich_signature[0] == 1 })"
                                          << "is not an array or dictionary";
    QTest::newRow("string index") << R"(import "pe" rule t { condition: pe.sections["a"].name == "" })"
                                  << "array indexes must be of integer type";
    QTest::newRow("integer key") << R"(import "pe" rule t { condition: pe.version_info[1] == "" })"
                                 << "dictionary keys must be of string type";
    QTest::newRow("call of a field") << R"(import "pe" rule t { condition: pe.machine() == 1 })"
                                     << "\"pe.machine\" is not a function";
    QTest::newRow("not iterable") << R"(import "pe" rule t { condition: for any s in pe.machine : (true) })"
                                  << "is not iterable";
    QTest::newRow("array with two variables")
        << R"(import "pe" rule t { condition: for any a, b in pe.sections : (true) })" << "yields a single item";
    QTest::newRow("dictionary with one variable")
        << R"(import "pe" rule t { condition: for any k in pe.version_info : (true) })" << "yields a key,value pair";
    QTest::newRow("integer compared with a string") << R"(import "math" rule t { condition: math.entropy(0, 1) == "a" })"
                                                    << "type mismatch";
    // A regex argument must be one yara compiles.
    QTest::newRow("bad regex argument") << R"(import "pe" rule t { condition: pe.exports(/a(/) })"
                                        << "invalid regular expression";
    // One that Hitscope's parser takes but libyara's regex compiler refuses (over 128 alternatives): refused
    // alone, not left to make every module value of the scan undefined.
    QTest::newRow("regex argument libyara refuses")
        << QStringLiteral("import \"pe\" rule t { condition: pe.exports(/%1/) }").arg(QStringLiteral("a?").repeated(200))
        << "regular expression is too complex";
    QTest::newRow("not imported") << R"(rule t { condition: pe.is_dll() })"
                                  << "undefined identifier \"pe\" (the module is not imported";
    QTest::newRow("unknown rule") << R"(rule t { condition: other })" << "undefined identifier \"other\"";
    QTest::newRow("external not defined") << R"(rule t { condition: filename == "a" })"
                                          << "define it with -d filename=VALUE";
    QTest::newRow("own range") << R"(rule t { condition: for any i in (i..3) : (true) })"
                               << "undefined identifier \"i\"";
    QTest::newRow("string plus") << R"(rule t { condition: "a" + "b" == "ab" })" << "strings don't support \"+\" operation";
    QTest::newRow("string and integer") << R"(rule t { condition: "a" == 1 })" << "type mismatch";
    QTest::newRow("float modulo") << R"(rule t { condition: 1.5 % 2 == 1 })" << "wrong type \"float\" for % operator";
    QTest::newRow("contains integer") << R"(rule t { condition: 1 contains "a" })"
                                      << "wrong type \"integer\" for contains operator";
    QTest::newRow("matches text") << R"(rule t { condition: "a" matches "a" })" << "wrong type \"string\" for matches operator";
    QTest::newRow("percentage") << R"(rule t { strings: $a = "x" condition: 101% of them })"
                                << "percentage must be between 1 and 100";
    QTest::newRow("nested for of") << R"(rule t { strings: $a = "x" condition: for any of them : (for any of them : ($)) })"
                                   << "nested \"for of\" loops";
    QTest::newRow("anonymous outside a loop") << R"(rule t { strings: $ = "x" condition: $ })"
                                              << "wrong use of anonymous string";
    QTest::newRow("duplicated loop variable")
        << R"(rule t { condition: for any i in (1..2) : (for any i in (1..2) : (true)) })" << "duplicated loop identifier";
}

void TestYaraCondition::refused()
{
    QFETCH(QString, source);
    QFETCH(QString, reason);
    std::string text = source.toStdString();
    if (source.contains(QLatin1String("other")))
        text = "rule other { condition: true }\n" + text; // parsed, unknown to the compiler
    std::vector<YaraRuleDecl> rules;
    QString why;
    ConditionPtr condition;
    // A rule the parser refuses is refused too: the reason is then the parser's.
    if (parseRules(text, &rules, &why) && !rules.empty())
    {
        YaraConditionCompiler::Scope scope = scopeWith([](const QByteArray &) { return -1; });
        if (source.contains(QLatin1String("import")))
            scope.modules = { "pe", "math", "elf", "hash", "dotnet" };
        condition = YaraConditionCompiler::compile(rules.back(), scope, &why);
    }
    QVERIFY(!condition);
    QVERIFY2(why.contains(reason), qPrintable(why));
    QVERIFY(!why.contains(QLatin1Char('\n')));
}

void TestYaraCondition::yaraRefusesToo_data()
{
    QTest::addColumn<QString>("condition");
    QTest::addColumn<QString>("reason");
    QTest::newRow("division by zero") << "1 \\ 0 == 0" << "division by zero";
    QTest::newRow("modulo of constant zero") << "5 % (2 - 2) == 0" << "division by zero";
    QTest::newRow("constant overflow") << "0x7FFFFFFFFFFFFFFF + 1 > 0" << "integer overflow";
    QTest::newRow("negative overflow") << "-0x7FFFFFFFFFFFFFFF - 2 < 0" << "integer overflow";
    QTest::newRow("product overflow") << "0x100000000 * 0x100000000 > 0" << "integer overflow";
    QTest::newRow("literal overflow") << "0xFFFFFFFFFFFFFFFF > 0" << "integer overflow";
    QTest::newRow("decimal overflow") << "99999999999999999999 > 0" << "integer overflow";
    QTest::newRow("KB overflow") << "9007199254740992KB > 0" << "integer overflow";
    QTest::newRow("negative shift") << "1 << -1 == 0" << "invalid operand";
    // YARA computes the constant of `a >> b` as a << b, so (1 >> 1) counts as 2 here
    QTest::newRow("right shift constant") << "(1 >> 1) * 0x7FFFFFFFFFFFFFFF > 0" << "integer overflow";
    QTest::newRow("five nested loops")
        << "for any i in (1..2) : (for any j in (1..2) : (for any k in (1..2) : (for any l in (1..2) : "
           "(for any m in (1..2) : (m == 1)))))"
        << "loop nesting limit exceeded";
}

void TestYaraCondition::yaraRefusesToo()
{
    QFETCH(QString, condition);
    QFETCH(QString, reason);
    const std::string source = "rule t { condition: " + condition.toStdString() + " }\n";
    QVERIFY(!runYara(source, handData).compiled);
    std::vector<OurRule> ours;
    QString parseError;
    // An integer literal out of range is the lexer's error, as in YARA.
    if (!compileOurs(source, &ours, &parseError)) {
        QVERIFY2(parseError.contains(reason), qPrintable(parseError));
        return;
    }
    QCOMPARE(ours.size(), size_t(1));
    QVERIFY(!ours[0].condition);
    QVERIFY2(ours[0].reason.contains(reason), qPrintable(ours[0].reason));
}

void TestYaraCondition::unusedStringRefused()
{
    const std::string source = "rule t { strings: $a = \"ab\" $ = \"cd\" $b = \"ef\" condition: $a and $b }\n";
    QVERIFY(!runYara(source, handData).compiled);
    std::vector<OurRule> ours;
    QString parseError;
    QVERIFY2(compileOurs(source, &ours, &parseError), qPrintable(parseError));
    QVERIFY(!ours[0].condition);
    QCOMPARE(ours[0].reason, QStringLiteral("unreferenced string \"$\""));
}

void TestYaraCondition::fixedOffsets_data()
{
    QTest::addColumn<QString>("condition");
    QTest::addColumn<int>("fixedA"); // -1: not fixed
    QTest::addColumn<int>("fixedB");
    QTest::newRow("at 0") << "$a at 0 and $b" << 0 << -1;
    QTest::newRow("twice the same") << "$a at 0 and $a at 0 and $b at 5" << 0 << 5;
    QTest::newRow("two offsets") << "$a at 0 and $a at 2 and $b" << -1 << -1;
    QTest::newRow("or two offsets") << "$a at 0 or $a at 2 or $b" << -1 << -1;
    QTest::newRow("counted too") << "$a at 0 and #a > 0 and $b" << -1 << -1;
    QTest::newRow("not a constant") << "$a at filesize - 12 and $b" << -1 << -1;
    QTest::newRow("constant expression") << "$a at (1 + 1) and $b" << 2 << -1;
    QTest::newRow("in a set") << "$a at 0 and any of ($a, $b)" << -1 << -1;
    QTest::newRow("loop at the same offset") << "$a at 0 and for any of ($b) : ($ at 0)" << 0 << -1;
    QTest::newRow("loop elsewhere") << "$a at 0 and for any of ($b) : ($ at 5)" << -1 << -1;
    QTest::newRow("loop without at") << "$a at 0 and for any of ($b) : ($)" << -1 << -1;
    QTest::newRow("loop at a variable, before") << "for any of ($b) : ($ at @b) and $a at 7" << 7 << -1;
    QTest::newRow("loop at a variable, after") << "$a at 7 and for any of ($b) : ($ at @b)" << -1 << -1;
}

void TestYaraCondition::fixedOffsets()
{
    QFETCH(QString, condition);
    QFETCH(int, fixedA);
    QFETCH(int, fixedB);
    // $a ("ab") occurs at 0, 2 and 7; $b ("cd") at 5 and 10.
    const QByteArray data("abab_cdab_cd");
    const std::string source =
        "rule t { strings: $a = \"ab\" $b = \"cd\" condition: " + condition.toStdString() + " }\n";
    compareFile(source, data, true, condition);

    QString why;
    std::vector<YaraConditionCompiler::StringUse> uses;
    QVERIFY2(YaraConditionCompiler::compile(onlyRule(source), {}, &why, &uses), qPrintable(why));
    QCOMPARE(uses.size(), size_t(2));
    QCOMPARE(uses[0].fixedOffset.value_or(-1), int64_t(fixedA));
    QCOMPARE(uses[1].fixedOffset.value_or(-1), int64_t(fixedB));

    // And YARA's own match lists show it: all the matches, or only the one at the fixed offset.
    const OracleResult oracle = runYara(source, data);
    QVERIFY(oracle.compiled);
    const std::vector<std::vector<int64_t>> everywhere{{0, 2, 7}, {5, 10}};
    for (size_t k = 0; k < 2; ++k) {
        std::vector<int64_t> expected;
        for (int64_t offset : everywhere[k]) {
            if (!uses[k].fixedOffset || *uses[k].fixedOffset == offset)
                expected.push_back(offset);
        }
        std::vector<int64_t> seen;
        for (const StringMatch &m : oracle.rules[0].strings[k])
            seen.push_back(m.offset);
        QCOMPARE(seen, expected);
    }
}

void TestYaraCondition::offsetsNeeded_data()
{
    QTest::addColumn<QString>("condition");
    QTest::addColumn<QString>("located"); // per string ($a, $b): 1 when the condition reads its offsets
    QTest::newRow("found and counted") << "$a and #b > 1" << "00";
    QTest::newRow("of") << "2 of them" << "00";
    QTest::newRow("at") << "$a at 0 and $b" << "10";
    QTest::newRow("in") << "$b in (0..10) and $a" << "01";
    QTest::newRow("offset") << "@a[1] < 5 and $b" << "10";
    QTest::newRow("length") << "!b[1] == 2 and $a" << "01";
    QTest::newRow("loop over indexes") << "for all i in (1..#a) : (@a[i] > 0) and $b" << "10";
    QTest::newRow("for-of counting") << "for any of them : (# > 1)" << "00";
    QTest::newRow("for-of at") << "for any of ($b) : ($ at 5) and $a" << "01";
    QTest::newRow("for-of offset") << "for all of them : (@[1] >= 0)" << "11";
}

void TestYaraCondition::offsetsNeeded()
{
    QFETCH(QString, condition);
    QFETCH(QString, located);
    compareFile(twoStringRule(condition), QByteArray("abab_cdab_cd"), true, condition);
    QString why;
    const ConditionPtr c = twoStringCondition(condition, &why);
    QVERIFY2(c, qPrintable(why));
    const std::vector<bool> needs = c->stringsNeedingOffsets(2);
    QCOMPARE(QStringLiteral("%1%2").arg(int(needs[0])).arg(int(needs[1])), located);
}

void TestYaraCondition::matchesNeeded_data()
{
    QTest::addColumn<QString>("condition");
    QTest::addColumn<QString>("needed"); // per string ($a, $b): how many matches decide it, * for all
    QTest::newRow("found") << "$a and $b" << "1 1";
    QTest::newRow("count above") << "#a > 5 and $b" << "6 1";
    QTest::newRow("count on the right") << "3 >= #a and #b == 2" << "4 3";
    QTest::newRow("zero") << "#a != 0 and $b" << "1 1";
    QTest::newRow("of") << "2 of them" << "1 1";
    QTest::newRow("for-of counting") << "for any of them : (# > 3)" << "4 4";
    QTest::newRow("count twice") << "#a > 2 and #a < 9 and $b" << "10 1";
    QTest::newRow("arithmetic") << "#a + 1 > 5 and $b" << "* 1";
    QTest::newRow("two counts") << "#a > #b" << "* *";
    QTest::newRow("loop bound") << "for all i in (1..#a) : (i > 0) and $b" << "* 1";
    QTest::newRow("located") << "#a > 1 and @a[1] < 4 and $b" << "* 1";
    QTest::newRow("for-of at") << "for any of ($b) : ($ at 5) and #a > 1" << "2 *";
}

void TestYaraCondition::matchesNeeded()
{
    QFETCH(QString, condition);
    QFETCH(QString, needed);
    // The counts capped at what is needed give YARA's answer, on data with more matches than that.
    compareFile(twoStringRule(condition), QByteArray("abab_cdab_cdabababab_cd"), true, condition);
    QString why;
    const ConditionPtr c = twoStringCondition(condition, &why);
    QVERIFY2(c, qPrintable(why));
    const std::vector<int64_t> n = c->matchesNeeded(2);
    auto text = [](int64_t v) { return v == Condition::kAllMatches ? QStringLiteral("*") : QString::number(v); };
    QCOMPARE(text(n[0]) + QLatin1Char(' ') + text(n[1]), needed);
}

void TestYaraCondition::ruleReferences()
{
    const std::string source = "rule r1 { strings: $a = \"ab\" condition: #a > 2 }\n"
                               "rule r2 { condition: not r1 }\n"
                               "rule r3 { condition: r1 and r2 or filesize > 10 }\n"
                               "rule r4 { condition: for any i in (1..2) : (r1 and i == 2) }\n";
    compareFile(source, handData, true, QStringLiteral("rules, a matching"));
    compareFile(source, QByteArray("abab"), true, QStringLiteral("rules, none matching"));

    // The index the caller gives is the one the context is asked about.
    std::vector<YaraRuleDecl> rules;
    QString why;
    QVERIFY2(parseRules(source, &rules, &why), qPrintable(why));
    const ConditionPtr c = YaraConditionCompiler::compile(
        rules[1], scopeWith([](const QByteArray &name) { return name == "r1" ? 41 : -1; }), &why);
    QVERIFY2(c, qPrintable(why));
    std::vector<int> asked;
    ConditionContext context;
    context.ruleMatched = [&asked](int rule) {
        asked.push_back(rule);
        return true;
    };
    QVERIFY(!c->evaluate(context));
    QCOMPARE(asked, std::vector<int>{41});
}

void TestYaraCondition::stringOrderFollowsDeclaration()
{
    // Anonymous strings and wildcards: the rule-local index is the declaration position.
    const std::string source = "rule t { strings: $ = \"x\" $b1 = \"b\" $ = \"a\" $b2 = \"zz\" condition: "
                               "#b1 == 2 and not $b2 and 1 of ($b*) and for 3 of them : (# > 0) }\n";
    compareFile(source, QByteArray("xbab"), true, QStringLiteral("declaration order"));

    QString why;
    const ConditionPtr c = YaraConditionCompiler::compile(onlyRule(source), {}, &why);
    QVERIFY2(c, qPrintable(why));
    std::vector<std::vector<StringMatch>> strings{{{0, 1}}, {{1, 1}, {3, 1}}, {{2, 1}}, {}};
    ConditionContext context;
    context.fileSize = 4;
    context.strings = &strings;
    QVERIFY(c->evaluate(context));
    strings[2].clear(); // the second anonymous string no longer matches
    QVERIFY(!c->evaluate(context));
}

void TestYaraCondition::randomConditions()
{
    const int cases = qEnvironmentVariableIntValue("HITSCOPE_YARA_RANDOM_CASES") > 0
                          ? qEnvironmentVariableIntValue("HITSCOPE_YARA_RANDOM_CASES")
                          : 10000;
    const uint64_t seed = 20240605;
    // Several rules share one file and one buffer: compiling and scanning with libyara is what costs.
    const int perFile = 10;
    ConditionGenerator generator(seed);
    int compiledByYara = 0;
    int refusedByBoth = 0;
    int matchedByYara = 0;
    for (int first = 0; first < cases; first += perFile) {
        const QByteArray data = generator.data();
        std::vector<std::string> conditions;
        std::string source = helperRules;
        for (int k = 0; k < perFile; ++k) {
            conditions.push_back(generator.condition());
            // Appended, not "t" + std::to_string(k): GCC 12 at -O3 warns falsely (-Wrestrict) on the latter.
            std::string name = "t";
            name += std::to_string(k);
            source += ruleText(name, ConditionGenerator::strings(), conditions.back());
        }
        const auto label = [&](int k) {
            return QStringLiteral("case %1 (seed %2): %3")
                .arg(first + k)
                .arg(seed)
                .arg(QString::fromStdString(conditions[size_t(k)]));
        };

        OracleResult oracle = runYara(source, data);
        if (!oracle.compiled) {
            // One rule YARA refuses sinks the file: find it, and require that we refuse exactly that rule.
            source = helperRules;
            for (int k = 0; k < perFile; ++k) {
                const std::string one = ruleText("t" + std::to_string(k), ConditionGenerator::strings(),
                                                 conditions[size_t(k)]);
                if (runYara(helperRules + one, data).compiled) {
                    source += one;
                    continue;
                }
                std::vector<OurRule> ours;
                QString parseError;
                const bool parsed = compileOurs(helperRules + one, &ours, &parseError);
                QVERIFY2(!parsed || !ours.back().condition,
                         qPrintable(label(k) + QStringLiteral(": libyara refused it, we accepted it")));
                ++refusedByBoth;
            }
            oracle = runYara(source, data);
            QVERIFY2(oracle.compiled, oracle.error.c_str());
        }

        std::vector<OurRule> ours;
        QString parseError;
        QVERIFY2(compileOurs(source, &ours, &parseError), qPrintable(parseError));
        QCOMPARE(ours.size(), oracle.rules.size());
        std::vector<bool> matched, matchedCounted;
        const std::vector<int64_t> values = evaluateOurs(ours, oracle, data, &matched);
        const std::vector<int64_t> countedValues = evaluateOurs(ours, oracle, data, &matchedCounted, true);
        for (size_t r = 2; r < ours.size(); ++r) { // after the two helper rules
            const int k = std::stoi(ours[r].name.substr(1));
            ++compiledByYara;
            QVERIFY2(ours[r].condition, qPrintable(label(k) + QStringLiteral(": refused: ") + ours[r].reason));
            matchedByYara += oracle.rules[r].matched ? 1 : 0;
            QVERIFY2(matched[r] == oracle.rules[r].matched,
                     qPrintable(QStringLiteral("%1\nyara says %2, we say %3 (value %4)\ndata: %5")
                                    .arg(label(k))
                                    .arg(oracle.rules[r].matched)
                                    .arg(matched[r])
                                    .arg(values[r])
                                    .arg(hex(data))));
            QVERIFY2(countedValues[r] == values[r] && matchedCounted[r] == matched[r],
                     qPrintable(QStringLiteral("%1\nwith counted strings: value %2, listed %3\ndata: %4")
                                    .arg(label(k))
                                    .arg(countedValues[r])
                                    .arg(values[r])
                                    .arg(hex(data))));
        }
    }
    qInfo("%d random conditions: %d compiled by YARA (%d of them matched), %d refused by both", cases,
          compiledByYara, matchedByYara, refusedByBoth);
    // The generator must exercise both answers and mostly valid rules, or the comparison says little.
    QVERIFY(compiledByYara > cases * 8 / 10);
    QVERIFY(matchedByYara > compiledByYara / 5 && matchedByYara < compiledByYara * 4 / 5);
}

QTEST_GUILESS_MAIN(TestYaraCondition)
#include "tst_yaracondition.moc"
