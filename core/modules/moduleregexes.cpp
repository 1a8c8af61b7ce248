// SPDX-License-Identifier: GPL-3.0-or-later
#include "modules/moduleregexes.h"

#include <mutex>
#include <vector>

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

} // namespace Hitscope
