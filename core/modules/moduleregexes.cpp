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
    const Entry e = entry(id);
    QByteArray pattern = e.pattern;
    pattern.replace("/", "\\/"); // the lexer reads \/ as /
    const QByteArray text = "import \"pe\"\nrule r { condition: pe.exports(/" + pattern + "/" + (e.nocase ? "i" : "")
        + (e.dotAll ? "s" : "") + ") }\n";
    QString error;
    const LibyaraUse libyara;
    YR_COMPILER *compiler = nullptr;
    if (!libyara.ok() || yr_compiler_create(&compiler) != ERROR_SUCCESS) {
        error = QStringLiteral("libyara could not be used to check it");
    } else {
        if (yr_compiler_add_string(compiler, text.constData(), nullptr) != 0) {
            char message[256] = {};
            yr_compiler_get_error_message(compiler, message, sizeof message);
            error = QString::fromUtf8(message);
        }
        yr_compiler_destroy(compiler);
    }
    std::lock_guard guard(checked);
    results.emplace(id, error);
    return error;
}

} // namespace Hitscope
