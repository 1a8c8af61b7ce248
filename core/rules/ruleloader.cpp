// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruleloader.h"

#include <QFileInfo>

#include "rules/rulelistloader.h"
#include "rules/yaraloader.h"

namespace Hitscope {

RuleSet RuleLoader::loadFiles(const QStringList &paths)
{
    RuleSet all;
    // One loader for every YARA file: they share YARA's default namespace, so rules may refer to rules of
    // earlier files, and indices stay those of `all`.
    YaraLoader yara(all);
    for (const QString &path : paths) {
        const QString suffix = QFileInfo(path).suffix().toLower();
        if (suffix == QLatin1String("yar") || suffix == QLatin1String("yara")) {
            yara.load(path);
            continue;
        }
        all.append(RuleListLoader::load(path));
    }
    return all;
}

} // namespace Hitscope
