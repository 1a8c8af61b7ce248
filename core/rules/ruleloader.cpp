// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruleloader.h"

#include <QFileInfo>

#include "rules/rulelistloader.h"

namespace Hitscope {

RuleSet RuleLoader::loadFiles(const QStringList &paths)
{
    RuleSet all;
    for (const QString &path : paths) {
        const QString suffix = QFileInfo(path).suffix().toLower();
        if (suffix == QLatin1String("yar") || suffix == QLatin1String("yara")) {
            RuleSet one;
            one.rejections.push_back({ path, 0, {}, QStringLiteral("YARA rule files are not supported yet") });
            all.append(std::move(one));
            continue;
        }
        all.append(RuleListLoader::load(path));
    }
    return all;
}

} // namespace Hitscope
