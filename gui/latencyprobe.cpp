// SPDX-License-Identifier: GPL-3.0-or-later
#include "latencyprobe.h"

#include <algorithm>
#include <cmath>

#include <QTimer>

namespace Hitscope {

LatencyProbe::LatencyProbe(QObject *parent)
    : QObject(parent)
    , m_timer(new QTimer(this))
{
    m_timer->setTimerType(Qt::PreciseTimer);
    m_timer->setInterval(kIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &LatencyProbe::onTick);
}

void LatencyProbe::start()
{
    m_latenessMs.clear();
    m_latenessMs.reserve(4096);
    m_clock.start();
    m_lastNs = 0;
    m_timer->start();
}

void LatencyProbe::stop()
{
    m_timer->stop();
}

bool LatencyProbe::isRunning() const
{
    return m_timer->isActive();
}

void LatencyProbe::onTick()
{
    // Each tick is due kIntervalMs after the previous one; what comes on top is time the loop was busy.
    const qint64 now = m_clock.nsecsElapsed();
    const double lateMs = double(now - m_lastNs) / 1e6 - kIntervalMs;
    m_lastNs = now;
    m_latenessMs.push_back(std::max(0.0, lateMs));
}

LatencyProbe::Stats LatencyProbe::stats() const
{
    Stats s;
    if (m_latenessMs.isEmpty())
        return s;
    QVector<double> sorted = m_latenessMs;
    std::sort(sorted.begin(), sorted.end());
    const auto rank = [&](double q) {
        const qsizetype i = qsizetype(std::ceil(q * double(sorted.size()))) - 1;
        return sorted.at(std::clamp<qsizetype>(i, 0, sorted.size() - 1));
    };
    s.p50Ms = rank(0.50);
    s.p99Ms = rank(0.99);
    s.maxMs = sorted.constLast();
    s.samples = int(sorted.size());
    return s;
}

} // namespace Hitscope
