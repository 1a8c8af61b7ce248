// SPDX-License-Identifier: GPL-3.0-or-later
#include "rulecost.h"

#include <algorithm>

#include "automata/atomextractor.h"
#include "automata/atomprefilter.h"
#include "automata/patterncatalog.h"

namespace Hitscope {

namespace {

using Node = Regex::Node;
using Kind = RuleCostWarning::Kind;

// `.`, `[^x]`, `??`: a repeat of such a set skips over whatever is there.
bool isBroad(const Regex &re, const Node &repeat)
{
    const Node &child = re.nodes[size_t(repeat.children.front())];
    return child.type == Node::Type::Bytes && child.bytes.count() >= 128;
}

bool isLongGap(const Regex &re, const Node &n)
{
    return n.type == Node::Type::Repeat && !n.children.empty() && isBroad(re, n)
        && (n.max < 0 || n.max >= RuleCost::kLargeJump);
}

// The long gap a match may begin with (through concatenations, zero-width items and alternatives), or -1.
int leadingGap(const Regex &re, int node, int depth)
{
    const Node &n = re.nodes[size_t(node)];
    if (depth > 64)
        return -1;
    if (isLongGap(re, n))
        return node;
    if (n.type == Node::Type::Concat) {
        for (int c : n.children) {
            const Node::Type t = re.nodes[size_t(c)].type;
            if (t != Node::Type::Empty && t != Node::Type::Assert)
                return leadingGap(re, c, depth + 1);
        }
    } else if (n.type == Node::Type::Alternate) {
        for (int c : n.children)
            if (const int g = leadingGap(re, c, depth + 1); g >= 0)
                return g;
    }
    return -1;
}

// The longest gap below `node` but `skip` (an unbounded one counts as the longest), or -1.
int longestGap(const Regex &re, int node, int skip, int depth)
{
    const Node &n = re.nodes[size_t(node)];
    if (depth > 64)
        return -1;
    int best = node != skip && isLongGap(re, n) ? node : -1;
    auto longer = [&](int a, int b) {
        const int ma = re.nodes[size_t(a)].max, mb = re.nodes[size_t(b)].max;
        return ma < 0 ? mb >= 0 : mb >= 0 && ma > mb;
    };
    for (int c : n.children)
        if (const int g = longestGap(re, c, skip, depth + 1); g >= 0 && (best < 0 || longer(g, best)))
            best = g;
    return best;
}

// Alternatives at the top of the pattern (nested ones flattened): YARA's forms of a string.
int forms(const Regex &re, int node, int depth)
{
    const Node &n = re.nodes[size_t(node)];
    if (n.type != Node::Type::Alternate || depth > 64)
        return 1;
    int total = 0;
    for (int c : n.children)
        total += forms(re, c, depth + 1);
    return total;
}

bool hasCaselessLetter(const Regex &re)
{
    return std::any_of(re.nodes.begin(), re.nodes.end(), [](const Node &n) {
        if (n.type != Node::Type::Bytes || n.bytes.count() != 2)
            return false;
        for (int c = 'a'; c <= 'z'; ++c)
            if (n.bytes.test(size_t(c)) && n.bytes.test(size_t(c - 32)))
                return true;
        return false;
    });
}

// An atom as people read it: printable bytes as they are, others as \xNN, letters of either case as [aA], any
// other set as ?.
QString atomText(const AtomExtractor::Atom &atom)
{
    QString out;
    for (const ByteSet &set : atom) {
        if (set.count() == 1) {
            const int b = int(set._Find_first());
            out += b >= 32 && b < 127 && b != '"' && b != '\\' ? QString(QChar(b))
                                                              : QStringLiteral("\\x%1").arg(b, 2, 16, QLatin1Char('0'));
        } else if (set.count() == 2 && set._Find_first() >= 'A' && set._Find_first() <= 'Z'
                   && set.test(set._Find_first() + 32)) {
            out += QStringLiteral("[%1%2]").arg(QChar(int(set._Find_first()))).arg(QChar(int(set._Find_first()) + 32));
        } else {
            out += QLatin1Char('?');
        }
    }
    return out;
}

// A YARA string by its id; a list rule's one pattern as such.
QString who(const Pattern &pattern)
{
    return pattern.yara ? pattern.id : QStringLiteral("pattern");
}

QString bytesWord(int n)
{
    return n == 1 ? QStringLiteral("1 byte") : QStringLiteral("%1 bytes").arg(n);
}

// "an unbounded repeat of almost any byte ([2-])", "a repeat of up to 300 bytes of almost any byte ([0-300])".
QString gapText(const QString &what, const Node &n)
{
    if (n.max < 0)
        return QStringLiteral("an unbounded %1 of almost any byte ([%2-])").arg(what).arg(n.min);
    return QStringLiteral("a %1 of up to %2 bytes of almost any byte ([%3-%4])").arg(what).arg(n.max).arg(n.min).arg(n.max);
}

PatternInfo infoOf(const RuleSet &rules, int p, const PatternCatalog *catalog)
{
    if (catalog)
        return catalog->patterns[size_t(p)];
    PatternInfo info;
    info.minLength = rules.patterns[size_t(p)].regex.minLength();
    info.maxLength = rules.patterns[size_t(p)].regex.maxLength();
    return info;
}

// What the CPU engine does with the pattern: screened for its atoms (or found whole), or walked byte by byte.
bool walksEveryByte(const RuleSet &rules, int p, const PatternCatalog *catalog)
{
    if (catalog) {
        const int group = catalog->patterns[size_t(p)].group;
        const DfaGroup &g = catalog->groups[size_t(group)];
        return !g.tableless && !(catalog->prefilter && catalog->prefilter->covers(group));
    }
    return !AtomPrefilter::suits(rules.patterns[size_t(p)], infoOf(rules, p, catalog));
}

void atomWarnings(const RuleSet &rules, int p, const PatternCatalog *catalog, std::vector<RuleCostWarning> &out)
{
    const Pattern &pattern = rules.patterns[size_t(p)];
    const AtomExtractor::Result r = AtomExtractor::extract(pattern.regex);
    auto add = [&](Kind kind, const QString &text) {
        out.push_back({ pattern.ruleIndex, p, kind, who(pattern) + QStringLiteral(": ") + text });
    };
    // The weakest atom is the one that brings the most candidates.
    const auto shortest = std::min_element(r.atoms.begin(), r.atoms.end(),
                                           [](const auto &a, const auto &b) { return a.size() < b.size(); });
    if (walksEveryByte(rules, p, catalog)) {
        if (r.atoms.empty())
            add(Kind::NoAtom, QStringLiteral("no atom to look for: its automaton walks every byte"));
        else if (AtomPrefilter::windowReach(pattern, infoOf(rules, p, catalog)) < 0)
            add(Kind::NoAtom, QStringLiteral("its matches reach further than windows around its atom (\"%1\") "
                                             "can: its automaton walks every byte")
                                  .arg(atomText(*shortest)));
        else
            add(Kind::NoAtom, QStringLiteral("no atom rare enough to look for (the best is \"%1\"): its automaton "
                                             "walks every byte")
                                  .arg(atomText(*shortest)));
        return;
    }
    // An xor string is screened by the deltas of its forms, not by atoms per key.
    if (r.atoms.empty() || (pattern.yara && !pattern.yara->xorForms.empty()))
        return;
    if (int(shortest->size()) < RuleCost::kShortAtom)
        add(Kind::ShortAtom, QStringLiteral("its atom is %1 (\"%2\"): it is checked wherever that occurs")
                                 .arg(bytesWord(int(shortest->size())), atomText(*shortest)));
    else if (r.quality < RuleCost::kCommonAtomBits)
        add(Kind::CommonAtom, QStringLiteral("its atom \"%1\" is of common bytes: it is checked wherever they occur")
                                  .arg(atomText(*shortest)));
}

void shapeWarnings(const RuleSet &rules, int p, std::vector<RuleCostWarning> &out)
{
    const Pattern &pattern = rules.patterns[size_t(p)];
    const Regex &re = pattern.regex;
    auto add = [&](Kind kind, const QString &text) {
        out.push_back({ pattern.ruleIndex, p, kind, who(pattern) + QStringLiteral(": ") + text });
    };
    const int lead = leadingGap(re, re.root, 0);
    if (lead >= 0)
        add(Kind::LeadingRepeat, QStringLiteral("starts with %1, like .*: each match's start is looked for far back")
                                     .arg(gapText(QStringLiteral("repeat"), re.nodes[size_t(lead)])));
    if (const int gap = longestGap(re, re.root, lead, 0); gap >= 0)
        add(Kind::LargeJump, QStringLiteral("%1: each candidate is followed that far")
                                 .arg(gapText(QStringLiteral("jump"), re.nodes[size_t(gap)])));
    const int n = forms(re, re.root, 0);
    if (n <= RuleCost::kManyForms)
        return;
    const QString nocase = hasCaselessLetter(re) ? QStringLiteral(", each of either case") : QString();
    if (pattern.yara && !pattern.yara->xorForms.empty()) {
        const auto [lo, hi] = pattern.yara->xorKeys;
        add(Kind::ManyForms, QStringLiteral("%1 forms (xor keys %2-%3%4)%5")
                                 .arg(n)
                                 .arg(lo)
                                 .arg(hi)
                                 .arg(pattern.yara->xorForms.size() > 1 ? QStringLiteral(", ascii and wide") : QString(),
                                      nocase));
    } else {
        add(Kind::ManyForms, QStringLiteral("%1 alternative forms%2").arg(n).arg(nocase));
    }
}

} // namespace

std::vector<RuleCostWarning> RuleCost::analyzeRule(const RuleSet &rules, int rule, const PatternCatalog *catalog)
{
    std::vector<RuleCostWarning> out;
    for (int p : rules.rules[size_t(rule)].patterns) {
        if (!rules.patterns[size_t(p)].regex.isValid())
            continue;
        if (catalog && (size_t(p) >= catalog->patterns.size() || catalog->patterns[size_t(p)].group < 0))
            continue;
        atomWarnings(rules, p, catalog, out);
        shapeWarnings(rules, p, out);
    }
    return out;
}

std::vector<RuleCostWarning> RuleCost::analyze(const RuleSet &rules, const PatternCatalog *catalog)
{
    std::vector<RuleCostWarning> out;
    for (size_t r = 0; r < rules.rules.size(); ++r) {
        std::vector<RuleCostWarning> w = analyzeRule(rules, int(r), catalog);
        out.insert(out.end(), std::make_move_iterator(w.begin()), std::make_move_iterator(w.end()));
    }
    return out;
}

} // namespace Hitscope
