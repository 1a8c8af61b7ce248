// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruleloader.h"

#include <QFileInfo>

#include "rules/rulelistloader.h"
#include "rules/yaraloader.h"

namespace Hitscope {

namespace {

QByteArray readAll(const RuleSources &sources, const QString &path)
{
    QByteArray data;
    sources.read(path, &data);
    return data;
}

} // namespace

RuleSet RuleLoader::loadFiles(const QStringList &paths, const YaraExternals &externals, const RuleSources &sources)
{
    RuleSet all;
    // One loader for every YARA file: they share YARA's default namespace, so rules may refer to rules of
    // earlier files, and indices stay those of `all`.
    YaraLoader yara(all, externals, sources);
    for (const QString &path : paths) {
        const QString suffix = QFileInfo(path).suffix().toLower();
        if (suffix == QLatin1String("yar") || suffix == QLatin1String("yara")) {
            yara.load(path);
            continue;
        }
        QByteArray head;
        if (suffix != QLatin1String("tsv") && sources.read(path, &head, nullptr, 1 << 20)
            && YaraLoader::looksLikeYara(head)) {
            all.notes.push_back(QStringLiteral("%1: read as YARA rules").arg(path));
            yara.load(path);
            continue;
        }
        RuleSet list = sources.hasText(path) ? RuleListLoader::loadFromData(path, readAll(sources, path))
                                             : RuleListLoader::load(path);
        if (suffix != QLatin1String("txt") && suffix != QLatin1String("tsv") && suffix != QLatin1String("ioc"))
            list.notes.push_back(QStringLiteral("%1: read as a list of %2, one per line").arg(path,
                                 suffix == QLatin1String("tsv") ? QStringLiteral("regexes") : QStringLiteral("literals")));
        all.append(std::move(list));
    }
    return all;
}

} // namespace Hitscope
