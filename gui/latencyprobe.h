// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QVector>

class QTimer;

namespace Hitscope {

/// Measures how late the GUI thread's event loop runs: a precise QTimer every kIntervalMs records by how much
/// each tick came after its due time. Start it when a scan starts, stop it when the scan ends, read stats().
class LatencyProbe : public QObject
{
    Q_OBJECT
public:
    static constexpr int kIntervalMs = 10;

    struct Stats
    {
        double p50Ms = 0;
        double p99Ms = 0;
        double maxMs = 0;
        int samples = 0;
    };

    explicit LatencyProbe(QObject *parent = nullptr);

    /// Clears earlier samples and starts probing.
    void start();
    void stop();
    bool isRunning() const;
    /// Of the samples so far (nearest-rank percentiles); zeros when there are none.
    Stats stats() const;

private:
    void onTick();

    QTimer *m_timer = nullptr;
    QElapsedTimer m_clock;
    qint64 m_lastNs = 0;
    QVector<double> m_latenessMs;
};

} // namespace Hitscope
