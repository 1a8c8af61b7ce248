// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QByteArray>

namespace Hitscope {

/// Thrown by ModuleAccess::unloaded() when a condition first reads a module: the caller then has libyara parse
/// the file and evaluates again while the modules live (RuleEvaluator). It never crosses libyara's C frames.
struct ModulesNeeded
{
};

/// One argument of a module function call, by the letter of its format ('i', 'f', 's', 'r').
struct ModuleArgument
{
    int64_t value = 0;              ///< 'i': the integer; 'f': the double's bits
    const QByteArray *text = nullptr; ///< 's'
    int regex = -1;                 ///< 'r': its ModuleRegexes number
};

/**
 * What a condition reads of one file's YARA modules. Objects are opaque handles; Undefined (YARA's
 * YR_UNDEFINED, ConditionProgram::Undefined) stands for no object, and every read of it gives Undefined, as
 * YARA's virtual machine does (OP_OBJ_FIELD, OP_INDEX_ARRAY, OP_LOOKUP_DICT, OP_OBJ_VALUE, OP_CALL).
 */
class ModuleAccess
{
public:
    static constexpr int64_t Undefined = int64_t(0xFFFABADAFABADAFFULL);

    virtual ~ModuleAccess() = default;
    /// The module's top structure; Undefined when it is not loaded for this file.
    virtual int64_t root(const QByteArray &module) const = 0;
    /// The member `name` of a structure, declared at `place` among its members (found by name otherwise).
    virtual int64_t field(int64_t structure, int place, const QByteArray &name) const = 0;
    /// Item `index` of an array (YARA casts the index to int), Undefined where there is none.
    virtual int64_t item(int64_t array, int64_t index) const = 0;
    virtual int64_t entry(int64_t dictionary, const QByteArray &key) const = 0;
    /// Items of an array (its highest index + 1) or entries of a dictionary; 0 for Undefined.
    virtual int64_t length(int64_t container) const = 0;
    /// Entry `i` of a dictionary in insertion order: its value (Undefined when none) and its key.
    virtual int64_t entryAt(int64_t dictionary, int64_t i, QByteArray *key) const = 0;
    /// An integer's value (Undefined when it has none).
    virtual int64_t integer(int64_t object) const = 0;
    /// A float's bits, Undefined when it is NaN (YARA's undefined float).
    virtual int64_t real(int64_t object) const = 0;
    /// A string's bytes; false when it is undefined.
    virtual bool string(int64_t object, QByteArray *out) const = 0;
    /// Calls the overload of `function` whose format is `format` and returns the object holding its result,
    /// read at once (the next call may change it); Undefined when the call failed.
    virtual int64_t call(int64_t function, const QByteArray &format, const ModuleArgument *arguments) const = 0;
    /// YARA's `entrypoint`: the entry point's file offset of a PE or ELF file, Undefined for others.
    virtual int64_t entryPoint() const = 0;

    /// An access of a file whose modules are not loaded yet: every read throws ModulesNeeded.
    static const ModuleAccess &unloaded();
    /// An access of a file whose modules could not be loaded: every value is Undefined.
    static const ModuleAccess &none();
};

} // namespace Hitscope
