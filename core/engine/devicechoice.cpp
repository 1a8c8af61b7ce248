// SPDX-License-Identifier: GPL-3.0-or-later
#include "devicechoice.h"

#include <QStringList>


namespace Hitscope {

bool DeviceChoice::parse(const QString &text, DeviceChoice *choice, QString *error)
{
    const QString t = text.trimmed();
    if (t.isEmpty() || t.compare(QLatin1String("all"), Qt::CaseInsensitive) == 0) {
        *choice = DeviceChoice();
        return true;
    }
    DeviceChoice c;
    c.all = false;
    for (const QString &part : t.split(QLatin1Char(','))) {
        bool ok = false;
        const int index = part.trimmed().toInt(&ok);
        if (!ok || index < 0) {
            *error = QStringLiteral("devices must be 'all' or device numbers such as 0,1 (see hitscope-cli devices), "
                                    "not '%1'")
                         .arg(text);
            return false;
        }
        c.indices.push_back(index);
    }
    *choice = c;
    return true;
}

QString DeviceChoice::toString() const
{
    if (all)
        return QStringLiteral("all");
    QStringList parts;
    for (int i : indices)
        parts.push_back(QString::number(i));
    return parts.join(QLatin1Char(','));
}

} // namespace Hitscope
