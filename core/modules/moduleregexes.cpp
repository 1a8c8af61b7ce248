// SPDX-License-Identifier: GPL-3.0-or-later
#include "modules/moduleregexes.h"

#include <map>
#include <mutex>
#include <vector>

#include "modules/libyara.h"

namespace Hitscope {

namespace {

std::mutex &lock()
{
    static std::mutex m;
    return m;
}

std::vector<ModuleRegexes::Entry> &entries()
{
    static std::vector<ModuleRegexes::Entry> all;
    return all;
}

} // namespace

int ModuleRegexes::id(const Entry &entry)
{
    std::lock_guard guard(lock());
    std::vector<Entry> &all = entries();
    for (size_t i = 0; i < all.size(); ++i)
        if (all[i].pattern == entry.pattern && all[i].nocase == entry.nocase && all[i].dotAll == entry.dotAll)
            return int(i);
    all.push_back(entry);
    return int(all.size() - 1);
}

ModuleRegexes::Entry ModuleRegexes::entry(int id)
{
    std::lock_guard guard(lock());
    return entries().at(size_t(id));
}

QByteArray ModuleRegexes::ruleText(int id)
{
    const Entry e = entry(id);
    QByteArray pattern = e.pattern;
    pattern.replace("/", "\\/"); // the lexer reads \/ as /
    return "/" + pattern + "/" + (e.nocase ? "i" : "") + (e.dotAll ? "s" : "");
}

QString ModuleRegexes::check(int id)
{
    static std::mutex checked;
    static std::map<int, QString> results;
    {
        std::lock_guard guard(checked);
        const auto it = results.find(id);
        if (it != results.end())
            return it->second;
    }
    const LibyaraUse libyara;
    const QString error = libyara.ok()
        ? compileLibyaraRules("import \"pe\"\nrule r { condition: pe.exports(" + ruleText(id) + ") }\n")
        : QStringLiteral("libyara could not be used to check it");
    std::lock_guard guard(checked);
    results.emplace(id, error);
    return error;
}

} // namespace Hitscope
