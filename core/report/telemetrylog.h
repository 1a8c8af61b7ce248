// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QHash>
#include <QObject>
#include <QVector>

#include "engine/batchtelemetry.h"

namespace Hitscope {

/**
 * The per-batch telemetry of one scan, in the order the batches finished: the one store the GUI's views read
 * (the charts, their tooltips, the export). Lives on the GUI thread.
 */
class TelemetryLog : public QObject
{
    Q_OBJECT
public:
    explicit TelemetryLog(QObject *parent = nullptr);

    const QVector<BatchTelemetry> &batches() const { return m_batches; }
    /// The batch of that index, or null.
    const BatchTelemetry *find(int index) const;

public Q_SLOTS:
    void append(const Hitscope::BatchTelemetry &telemetry);
    /// A new scan starts.
    void clear();

Q_SIGNALS:
    void batchAdded(const Hitscope::BatchTelemetry &telemetry);
    void cleared();

private:
    QVector<BatchTelemetry> m_batches;
    QHash<int, qsizetype> m_byIndex;
};

} // namespace Hitscope
