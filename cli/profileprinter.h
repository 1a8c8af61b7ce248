// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

#include <QStringList>

namespace Hitscope {
struct RuleProfile;
}

/**
 * The --profile table: the slowest rules first, a column per figure (engine, condition and resolve time, their
 * total, hits, files) and their reasons, then a line of totals over every rule.
 */
class ProfilePrinter
{
public:
    /// The table's lines (each ending in a newline), of at most `top` rules (0: all).
    static std::string table(const Hitscope::RuleProfile &profile, int top);
    /// What the user should know to read the table (a GPU's engine time), for stderr's notices.
    static QStringList notes(const Hitscope::RuleProfile &profile, int top);
};
