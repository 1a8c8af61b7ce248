// SPDX-License-Identifier: GPL-3.0-or-later
#include "profilemerger.h"

#include <QJsonArray>

#include "report/recordwriter.h"

namespace Hitscope {

bool ProfileMerger::add(const QJsonObject &record, QString *error)
{
    for (const char *field : { "rule", "file", "line", "engine_ms", "host_ms", "condition_ms", "resolve_ms", "hits",
                               "files", "reasons" }) {
        if (!record.contains(QLatin1String(field))) {
            *error = QStringLiteral("a profile record without \"%1\"").arg(QLatin1String(field));
            return false;
        }
    }
    const QString rule = record.value(QLatin1String("rule")).toString();
    const QString file = record.value(QLatin1String("file")).toString();
    const int line = record.value(QLatin1String("line")).toInt();
    const auto [it, fresh] = m_index.emplace(std::make_tuple(rule, file, line), m_rows.size());
    if (fresh) {
        RuleProfileRow row;
        row.name = rule;
        row.file = file;
        row.line = line;
        row.engineMs = 0.0;
        for (const QJsonValue &v : record.value(QLatin1String("reasons")).toArray())
            if (!RuleProfile::isMeasuredReason(v.toString()))
                row.reasons << v.toString();
        m_rows.push_back(std::move(row));
    }
    RuleProfileRow &row = m_rows[it->second];
    const QJsonValue engine = record.value(QLatin1String("engine_ms"));
    if (engine.isNull())
        row.engineMs.reset();
    else if (row.engineMs)
        *row.engineMs += engine.toDouble();
    row.hostMs += record.value(QLatin1String("host_ms")).toDouble();
    row.conditionMs += record.value(QLatin1String("condition_ms")).toDouble();
    row.resolveMs += record.value(QLatin1String("resolve_ms")).toDouble();
    row.hits += record.value(QLatin1String("hits")).toInteger();
    row.files += record.value(QLatin1String("files")).toInteger();
    return true;
}

void ProfileMerger::write(std::string &out, int64_t bytes) const
{
    RuleProfile profile;
    profile.rows = m_rows;
    for (RuleProfileRow &row : profile.rows)
        row.reasons = RuleProfile::measuredReasons(row, bytes) + row.reasons;
    // Equal totals keep the first part's order.
    profile.sort();
    for (const RuleProfileRow &row : profile.rows)
        RecordWriter::profile(out, row);
}

} // namespace Hitscope
