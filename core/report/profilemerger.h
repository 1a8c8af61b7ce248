// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <QJsonObject>
#include <QString>

#include "scan/ruleprofile.h"

namespace Hitscope {

/**
 * The profile records of a sharded scan's parts (`--profile --json`), summed per rule (by name, file and line):
 * times, hits and files add up; engine_ms stays null where a part's is; the reasons measured in a part (many
 * matches, a slow condition) are measured again on the sums, the others kept once. ShardMerger writes them before
 * the summary, slowest first, as one scan would.
 */
class ProfileMerger
{
public:
    /// A part's profile record; false with `error` when a field is missing.
    bool add(const QJsonObject &record, QString *error);
    bool empty() const { return m_rows.empty(); }
    /// The merged records; `bytes`: the bytes all parts scanned.
    void write(std::string &out, int64_t bytes) const;

private:
    std::map<std::tuple<QString, QString, int>, size_t> m_index; ///< (rule, file, line) -> m_rows
    std::vector<RuleProfileRow> m_rows; ///< in the order first seen, with the reasons not measured
};

} // namespace Hitscope
