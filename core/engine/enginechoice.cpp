// SPDX-License-Identifier: GPL-3.0-or-later
#include "enginechoice.h"

namespace Hitscope {

bool parseEngineChoice(const QString &name, EngineChoice *choice)
{
    const QString n = name.toLower();
    if (n == QLatin1String("auto"))
        *choice = EngineChoice::Auto;
    else if (n == QLatin1String("gpu"))
        *choice = EngineChoice::Gpu;
    else if (n == QLatin1String("cpu"))
        *choice = EngineChoice::Cpu;
    else
        return false;
    return true;
}

QString engineChoiceName(EngineChoice choice)
{
    switch (choice) {
    case EngineChoice::Gpu:
        return QStringLiteral("gpu");
    case EngineChoice::Cpu:
        return QStringLiteral("cpu");
    case EngineChoice::Auto:
        break;
    }
    return QStringLiteral("auto");
}

} // namespace Hitscope
