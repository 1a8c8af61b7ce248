// SPDX-License-Identifier: GPL-3.0-or-later
#include "modules/moduleschema.h"

#include <map>
#include <mutex>

#include "modules/modulereader.h"

namespace Hitscope {

const ModuleObject *ModuleSchema::declaration(const QByteArray &module)
{
    // Each module declares every field before it reads the file: the tree read from no data is the declaration.
    static std::map<QByteArray, ModuleObject> declarations;
    static std::once_flag once;
    std::call_once(once, [] {
        QByteArrayList names = ModuleReader::fileModules();
        names.append("tests"); // YARA's own test suite's module (Debian's libyara has it)
        ModuleReader reader(names);
        std::vector<ModuleReader::Module> modules;
        static const uint8_t nothing = 0;
        if (reader.read(&nothing, 0, modules))
            for (ModuleReader::Module &m : modules)
                declarations.emplace(m.name, std::move(m.root));
    });
    const auto it = declarations.find(module);
    return it == declarations.end() ? nullptr : &it->second;
}

} // namespace Hitscope
