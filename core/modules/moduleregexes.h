// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>

namespace Hitscope {

/**
 * The regular expressions rules give module functions (pe.exports(/^Dll/), pe.imports(/kernel32/i, /^Virtual/)),
 * numbered once per process: a condition keeps the number, and each ModuleRuntime has libyara compile the
 * expression as YARA's compiler does and hands the function libyara's own compiled form.
 */
class ModuleRegexes
{
public:
    struct Entry
    {
        QByteArray pattern; ///< as the rule's lexer read it, between the slashes
        bool nocase = false;
        bool dotAll = false;
    };

    /// The number of this expression (the same expression, the same number).
    static int id(const Entry &entry);
    static Entry entry(int id);
    /// The expression as a rule's text writes it (`/pattern/is`), for libyara's compiler.
    static QByteArray ruleText(int id);
    /// Why libyara refuses the expression as a function argument (its regex compiler has limits of its own,
    /// such as 128 alternatives), or nothing; each number is checked once.
    static QString check(int id);
};

} // namespace Hitscope
