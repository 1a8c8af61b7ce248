// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QByteArray>

namespace Hitscope {

/**
 * A value of a YARA module for one file (pe.number_of_sections, pe.sections[0].name, ...), or its declaration:
 * the tree libyara's module builds, copied out while its scan context lives, so that it outlives the scan.
 * An integer, float or string the file does not have is undefined, as in yara; a structure lists its members
 * in declaration order, an array its items with their index (an index can be missing), a dictionary its
 * entries in insertion order. A function keeps its overloads' argument formats ("ss", "i", "rs"...) and its
 * return type, so that a rule's call can be checked against the module as yara checks it.
 */
struct ModuleObject
{
    enum class Kind : uint8_t { Integer, Float, String, Structure, Array, Dictionary, Function };
    Kind kind = Kind::Structure;
    QByteArray identifier; ///< empty for array items and dictionary values
    bool defined = false;  ///< integers, floats, strings
    int64_t integer = 0;
    double real = 0;
    QByteArray string;
    /// Structure members, array items, dictionary values.
    std::vector<ModuleObject> children;
    /// Per child of an array its index, of a dictionary its key (as text: QByteArray::number for arrays).
    std::vector<int> indices;
    std::vector<QByteArray> keys;
    /// Arrays and dictionaries: the declaration of their items (no value).
    std::vector<ModuleObject> prototype;
    /// Functions: per overload its argument format, and the kind of what it returns.
    std::vector<QByteArray> argumentFormats;
    Kind returns = Kind::Integer;

    /// The member, item or value named so, or null.
    const ModuleObject *member(const QByteArray &name) const
    {
        for (const ModuleObject &c : children)
            if (c.identifier == name)
                return &c;
        return nullptr;
    }
};

} // namespace Hitscope
