// SPDX-License-Identifier: GPL-3.0-or-later
#include "profileprinter.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "scan/ruleprofile.h"

using namespace Hitscope;

namespace {

constexpr int kColumns = 10;
// Rank and the figures are right-aligned; rule, file:line and reasons left-aligned, the reasons last, unpadded.
constexpr bool kRight[kColumns] = { true, false, false, true, true, true, true, true, true, false };

std::string ms(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", v);
    return text;
}

using Line = std::vector<std::string>;

Line rowLine(const RuleProfileRow &row, size_t rank)
{
    return { std::to_string(rank),
             row.name.toStdString(),
             QStringLiteral("%1:%2").arg(row.file).arg(row.line).toStdString(),
             row.engineMs ? ms(*row.engineMs) : std::string("-"),
             ms(row.conditionMs),
             ms(row.resolveMs),
             ms(row.totalMs()),
             std::to_string(row.hits),
             std::to_string(row.files),
             row.reasons.join(QLatin1String("; ")).toStdString() };
}

Line totalLine(const RuleProfile &profile)
{
    RuleProfileRow sum;
    sum.engineMs = profile.engineSplit ? std::optional<double>(0) : std::nullopt;
    for (const RuleProfileRow &row : profile.rows) {
        if (sum.engineMs)
            *sum.engineMs += row.engineMs.value_or(0);
        sum.hostMs += row.hostMs;
        sum.conditionMs += row.conditionMs;
        sum.resolveMs += row.resolveMs;
        sum.hits += row.hits;
        sum.files += row.files;
    }
    Line line = rowLine(sum, 0);
    line[0].clear();
    line[1] = QStringLiteral("all %1 rules").arg(profile.rows.size()).toStdString();
    line[2].clear();
    line[9].clear();
    return line;
}

} // namespace

std::string ProfilePrinter::table(const RuleProfile &profile, int top)
{
    std::vector<Line> lines;
    lines.push_back({ "rank", "rule", "file:line", "engine ms", "condition ms", "resolve ms", "total ms", "hits",
                      "files", "reasons" });
    const size_t shown = top > 0 ? std::min(profile.rows.size(), size_t(top)) : profile.rows.size();
    for (size_t i = 0; i < shown; ++i)
        lines.push_back(rowLine(profile.rows[i], i + 1));
    lines.push_back(totalLine(profile));
    size_t width[kColumns] = {};
    for (const Line &line : lines)
        for (int c = 0; c < kColumns; ++c)
            width[c] = std::max(width[c], line[size_t(c)].size());
    std::string out;
    for (const Line &line : lines) {
        std::string text;
        for (int c = 0; c < kColumns; ++c) {
            const std::string &cell = line[size_t(c)];
            if (c > 0)
                text += "  ";
            if (c == kColumns - 1) {
                text += cell;
                break;
            }
            const std::string pad(width[c] - cell.size(), ' ');
            text += kRight[c] ? pad + cell : cell + pad;
        }
        while (!text.empty() && text.back() == ' ')
            text.pop_back();
        out += text + '\n';
    }
    return out;
}

QStringList ProfilePrinter::notes(const RuleProfile &profile, int top)
{
    QStringList out;
    const size_t shown = top > 0 ? std::min(profile.rows.size(), size_t(top)) : profile.rows.size();
    out << QStringLiteral("profile of %1 rules, the slowest %2 first (--profile-top N shows N, 0 all); times are "
                          "milliseconds of work summed over threads")
               .arg(profile.rows.size())
               .arg(shown);
    if (!profile.engineSplit)
        out << QStringLiteral("profile: a GPU's kernels cannot be split per rule (engine ms '-'): engine time per "
                              "rule is measured with --engine cpu; total ms here counts the host's share of the "
                              "engine (its checks around what the GPU marked: JSON host_ms), conditions and "
                              "resolving");
    return out;
}
