// SPDX-License-Identifier: GPL-3.0-or-later
#include "telemetrylog.h"

namespace Hitscope {

TelemetryLog::TelemetryLog(QObject *parent)
    : QObject(parent)
{
}

const BatchTelemetry *TelemetryLog::find(int index) const
{
    const auto it = m_byIndex.constFind(index);
    return it == m_byIndex.cend() ? nullptr : &m_batches[*it];
}

void TelemetryLog::append(const BatchTelemetry &telemetry)
{
    m_byIndex.insert(telemetry.index, m_batches.size());
    m_batches.push_back(telemetry);
    Q_EMIT batchAdded(telemetry);
}

void TelemetryLog::clear()
{
    m_batches.clear();
    m_byIndex.clear();
    Q_EMIT cleared();
}

} // namespace Hitscope
