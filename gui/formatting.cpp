// SPDX-License-Identifier: GPL-3.0-or-later
#include "formatting.h"

#include <cmath>

#include <QCoreApplication>

namespace Hitscope::Format {

QString bytes(int64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    int unit = 0;
    while (std::abs(v) >= 1024 && unit < 4) {
        v /= 1024;
        ++unit;
    }
    if (unit == 0)
        return QStringLiteral("%1 B").arg(bytes);
    return QStringLiteral("%1 %2").arg(v, 0, 'f', v < 10 ? 2 : 1).arg(QLatin1String(units[unit]));
}

QString duration(double ms)
{
    if (!std::isfinite(ms) || ms < 0)
        return QStringLiteral("–");
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(qRound(ms));
    const qint64 s = qRound64(ms / 1000);
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    if (s < 3600)
        return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2:%3").arg(s / 3600).arg((s / 60) % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10,
                                                                                                       QLatin1Char('0'));
}

} // namespace Hitscope::Format
