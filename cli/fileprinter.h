// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>

#include "engine/hit.h"

namespace Hitscope {
struct Pattern;
struct RuleSet;
}
struct CliArgs;
class OutputBuffer;

/**
 * Prints a scanned file's result as the CLI was asked: JSON records (--json), yara's count (-c), or yara's
 * RULE PATH lines with their -s string lines, in yara's order.
 */
class FilePrinter
{
public:
    /// `oneFile`: the scan is of a single file (yara -c then prints a bare count).
    FilePrinter(const CliArgs &args, const Hitscope::RuleSet &rules, OutputBuffer &out, bool oneFile);
    void print(const Hitscope::FileResult &file);

private:
    class Previews;
    void warnCapped(const Hitscope::FileResult &file) const;
    void printJson(const Hitscope::FileResult &file, Previews &previews);
    void printRules(const Hitscope::FileResult &file, Previews &previews);
    /// A list rule's lines: one per start, its longest match (as yara prints them).
    void printListStrings(const Hitscope::FileResult &file, int rule, Previews &previews);
    /// A rule's hits grouped by string in declaration order, each ascending (yara's order).
    template<typename F>
    void forRuleHits(const Hitscope::FileResult &file, int rule, F &&visit) const;

    const CliArgs &m_args;
    const Hitscope::RuleSet &m_rules;
    OutputBuffer &m_out;
    const bool m_oneFile;
};
