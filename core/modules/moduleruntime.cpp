// SPDX-License-Identifier: GPL-3.0-or-later
#include "modules/moduleruntime.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <unordered_map>

#include <fcntl.h>
#include <unistd.h>

#include "modules/libyara.h"
#include "modules/moduleregexes.h"
#include "util/preadfully.h"

namespace Hitscope {

namespace {

constexpr int64_t U = ModuleAccess::Undefined;
/// A file copy up to this size is kept for the next file.
constexpr size_t kKeptBuffer = size_t(64) << 20;

YR_OBJECT *object(int64_t handle)
{
    return reinterpret_cast<YR_OBJECT *>(static_cast<intptr_t>(handle));
}

int64_t handle(const YR_OBJECT *o)
{
    return o ? static_cast<int64_t>(reinterpret_cast<intptr_t>(o)) : U;
}

// yara/object.c's lookups (not exported by libyara.so), from the public layout.
YR_OBJECT *lookupField(const YR_OBJECT *structure, const char *name)
{
    for (const YR_STRUCTURE_MEMBER *m = reinterpret_cast<const YR_OBJECT_STRUCTURE *>(structure)->members; m;
         m = m->next)
        if (std::strcmp(m->object->identifier, name) == 0)
            return m->object;
    return nullptr;
}

int arrayLength(const YR_OBJECT *array)
{
    const YR_ARRAY_ITEMS *items = reinterpret_cast<const YR_OBJECT_ARRAY *>(array)->items;
    return items ? items->length : 0;
}

YR_OBJECT *arrayItem(const YR_OBJECT *array, int index)
{
    const YR_ARRAY_ITEMS *items = reinterpret_cast<const YR_OBJECT_ARRAY *>(array)->items;
    if (index < 0 || !items || items->capacity <= index)
        return nullptr;
    return items->objects[index];
}

YR_OBJECT *dictItem(const YR_OBJECT *dictionary, const char *key)
{
    const YR_DICTIONARY_ITEMS *items = reinterpret_cast<const YR_OBJECT_DICTIONARY *>(dictionary)->items;
    if (!items)
        return nullptr;
    for (int i = 0; i < items->used; ++i)
        if (std::strcmp(items->objects[i].key->c_string, key) == 0)
            return items->objects[i].obj;
    return nullptr;
}

/// A function's result, kept for the rest of the file. Its handle is its index with this bit set: no object's
/// address has it.
constexpr int64_t kResultTag = int64_t(1) << 62;

struct Result
{
    int8_t type = OBJECT_TYPE_INTEGER;
    bool defined = false;
    int64_t integer = 0;
    double real = 0;
    QByteArray text;
};

/// The modules of one file while libyara's scan context lives.
class LiveAccess final : public ModuleAccess
{
public:
    LiveAccess(YR_SCAN_CONTEXT *context, const std::vector<std::pair<QByteArray, YR_OBJECT *>> &roots,
               const std::vector<RE *> &regexes)
        : m_context(context)
        , m_roots(roots)
        , m_regexes(regexes)
    {
    }

    int64_t root(const QByteArray &module) const override
    {
        for (const auto &[name, o] : m_roots)
            if (name == module)
                return handle(o);
        return U;
    }

    int64_t field(int64_t structure, int place, const QByteArray &name) const override
    {
        if (structure == U || (structure & kResultTag) || object(structure)->type != OBJECT_TYPE_STRUCTURE)
            return U;
        // A structure lists its members in declaration order, as the schema does: each structure's members are
        // listed once per file, and then found by their place (pe has a hundred; a thousand rules read them).
        auto [it, added] = m_members.try_emplace(object(structure));
        if (added)
            for (const YR_STRUCTURE_MEMBER *m = reinterpret_cast<const YR_OBJECT_STRUCTURE *>(object(structure))->members;
                 m; m = m->next)
                it->second.push_back(m->object);
        const std::vector<YR_OBJECT *> &members = it->second;
        if (place >= 0 && size_t(place) < members.size() && name == members[size_t(place)]->identifier)
            return handle(members[size_t(place)]);
        return handle(lookupField(object(structure), name.constData()));
    }

    int64_t item(int64_t array, int64_t index) const override
    {
        if (array == U || index == U || (array & kResultTag) || object(array)->type != OBJECT_TYPE_ARRAY)
            return U;
        return handle(arrayItem(object(array), int(index)));
    }

    int64_t entry(int64_t dictionary, const QByteArray &key) const override
    {
        if (dictionary == U || (dictionary & kResultTag) || object(dictionary)->type != OBJECT_TYPE_DICTIONARY)
            return U;
        return handle(dictItem(object(dictionary), key.constData()));
    }

    int64_t length(int64_t container) const override
    {
        if (container == U || (container & kResultTag))
            return 0;
        const YR_OBJECT *o = object(container);
        if (o->type == OBJECT_TYPE_ARRAY)
            return arrayLength(o);
        if (o->type == OBJECT_TYPE_DICTIONARY) {
            const YR_DICTIONARY_ITEMS *items = reinterpret_cast<const YR_OBJECT_DICTIONARY *>(o)->items;
            return items ? items->used : 0;
        }
        return 0;
    }

    int64_t entryAt(int64_t dictionary, int64_t i, QByteArray *key) const override
    {
        if (length(dictionary) <= i || i < 0 || object(dictionary)->type != OBJECT_TYPE_DICTIONARY)
            return U;
        const auto &e = reinterpret_cast<const YR_OBJECT_DICTIONARY *>(object(dictionary))->items->objects[i];
        if (!e.obj)
            return U;
        *key = QByteArray::fromRawData(e.key->c_string, qsizetype(e.key->length));
        return handle(e.obj);
    }

    int64_t integer(int64_t o) const override
    {
        if (o == U)
            return U;
        if (o & kResultTag) {
            const Result &r = m_results[size_t(o & ~kResultTag)];
            return r.defined && r.type == OBJECT_TYPE_INTEGER ? r.integer : U;
        }
        return object(o)->type == OBJECT_TYPE_INTEGER ? object(o)->value.i : U;
    }

    int64_t real(int64_t o) const override
    {
        if (o == U)
            return U;
        double d = 0;
        if (o & kResultTag) {
            const Result &r = m_results[size_t(o & ~kResultTag)];
            if (!r.defined || r.type != OBJECT_TYPE_FLOAT)
                return U;
            d = r.real;
        } else {
            if (object(o)->type != OBJECT_TYPE_FLOAT)
                return U;
            d = object(o)->value.d;
        }
        return std::isnan(d) ? U : std::bit_cast<int64_t>(d);
    }

    bool string(int64_t o, QByteArray *out) const override
    {
        if (o == U)
            return false;
        if (o & kResultTag) {
            const Result &r = m_results[size_t(o & ~kResultTag)];
            if (!r.defined || r.type != OBJECT_TYPE_STRING)
                return false;
            *out = r.text;
            return true;
        }
        const YR_OBJECT *x = object(o);
        if (x->type != OBJECT_TYPE_STRING || !x->value.ss)
            return false;
        // The object lives as long as the modules, longer than any evaluation that reads it.
        *out = QByteArray::fromRawData(x->value.ss->c_string, qsizetype(x->value.ss->length));
        return true;
    }

    int64_t call(int64_t function, const QByteArray &format, const ModuleArgument *arguments) const override
    {
        if (function == U || (function & kResultTag) || object(function)->type != OBJECT_TYPE_FUNCTION)
            return U;
        auto *f = reinterpret_cast<YR_OBJECT_FUNCTION *>(object(function));
        // The same call in the same file gives the same result (the modules' functions read only the file and
        // their arguments): computed once per file, as hash and math ranges are meant to be.
        std::string &key = m_key;
        key.clear();
        key.append(reinterpret_cast<const char *>(&f), sizeof f);
        key.append(format.constData(), size_t(format.size()));
        for (qsizetype k = 0; k < format.size(); ++k) {
            const ModuleArgument &a = arguments[k];
            if (format[k] == 's') {
                const uint32_t n = uint32_t(a.text->size());
                key.append(reinterpret_cast<const char *>(&n), sizeof n).append(a.text->constData(), n);
            } else if (format[k] == 'r') {
                if (a.regex < 0 || size_t(a.regex) >= m_regexes.size() || !m_regexes[size_t(a.regex)])
                    return U;
                key.append(reinterpret_cast<const char *>(&a.regex), sizeof a.regex);
            } else {
                key.append(reinterpret_cast<const char *>(&a.value), sizeof a.value);
            }
        }
        // The console's functions write each time they are called, as in yara: never taken from the memo.
        const bool console = f->parent && f->parent->identifier && std::strcmp(f->parent->identifier, "console") == 0;
        const auto known = console ? m_memo.end() : m_memo.find(key);
        if (known != m_memo.end())
            return known->second;

        YR_MODULE_FUNC code = nullptr;
        for (int k = 0; k < YR_MAX_OVERLOADED_FUNCTIONS && f->prototypes[k].arguments_fmt; ++k)
            if (format == f->prototypes[k].arguments_fmt)
                code = f->prototypes[k].code;
        if (!code || format.size() > YR_MAX_FUNCTION_ARGS)
            return U;
        YR_VALUE args[YR_MAX_FUNCTION_ARGS];
        std::vector<std::vector<char>> texts;
        texts.reserve(size_t(format.size()));
        for (qsizetype k = 0; k < format.size(); ++k) {
            const ModuleArgument &a = arguments[k];
            switch (format[k]) {
            case 's': {
                // A SIZED_STRING: length, flags, the bytes and a terminating zero, as libyara builds them.
                std::vector<char> &buffer = texts.emplace_back(sizeof(SIZED_STRING) + size_t(a.text->size()) + 1, '\0');
                auto *ss = reinterpret_cast<SIZED_STRING *>(buffer.data());
                ss->length = uint32_t(a.text->size());
                ss->flags = 0;
                std::memcpy(ss->c_string, a.text->constData(), size_t(a.text->size()));
                args[k].ss = ss;
                break;
            }
            case 'r':
                args[k].re = m_regexes[size_t(a.regex)];
                break;
            case 'f':
                args[k].d = std::bit_cast<double>(a.value);
                break;
            default:
                args[k].i = a.value;
                break;
            }
        }
        Result r;
        if (code(args, m_context, f) == ERROR_SUCCESS && f->return_obj) {
            const YR_OBJECT *out = f->return_obj;
            r.type = out->type;
            if (out->type == OBJECT_TYPE_INTEGER) {
                r.integer = out->value.i;
                r.defined = true; // YR_UNDEFINED stays in the value, as in YARA's stack
            } else if (out->type == OBJECT_TYPE_FLOAT) {
                r.real = out->value.d;
                r.defined = true;
            } else if (out->type == OBJECT_TYPE_STRING && out->value.ss) {
                r.text = QByteArray(out->value.ss->c_string, qsizetype(out->value.ss->length));
                r.defined = true;
            }
        }
        m_results.push_back(std::move(r));
        const int64_t h = kResultTag | int64_t(m_results.size() - 1);
        if (!console)
            m_memo.emplace(key, h);
        return h;
    }

    int64_t entryPoint() const override
    {
        // Computed by libyara as it walked the file (ModuleRuntime gives it the data when a rule reads it).
        return m_context ? int64_t(m_context->entry_point) : U;
    }

private:
    YR_SCAN_CONTEXT *m_context;
    const std::vector<std::pair<QByteArray, YR_OBJECT *>> &m_roots;
    const std::vector<RE *> &m_regexes; ///< by ModuleRegexes number
    mutable std::map<std::string, int64_t, std::less<>> m_memo;
    mutable std::string m_key; ///< kept between calls: a lookup allocates nothing
    mutable std::unordered_map<const YR_OBJECT *, std::vector<YR_OBJECT *>> m_members;
    mutable std::vector<Result> m_results;
};

/// Every read needs the modules loaded.
class UnloadedAccess final : public ModuleAccess
{
public:
    int64_t root(const QByteArray &) const override { throw ModulesNeeded(); }
    int64_t field(int64_t, int, const QByteArray &) const override { throw ModulesNeeded(); }
    int64_t item(int64_t, int64_t) const override { throw ModulesNeeded(); }
    int64_t entry(int64_t, const QByteArray &) const override { throw ModulesNeeded(); }
    int64_t length(int64_t) const override { throw ModulesNeeded(); }
    int64_t entryAt(int64_t, int64_t, QByteArray *) const override { throw ModulesNeeded(); }
    int64_t integer(int64_t) const override { throw ModulesNeeded(); }
    int64_t real(int64_t) const override { throw ModulesNeeded(); }
    bool string(int64_t, QByteArray *) const override { throw ModulesNeeded(); }
    int64_t call(int64_t, const QByteArray &, const ModuleArgument *) const override { throw ModulesNeeded(); }
    int64_t entryPoint() const override { throw ModulesNeeded(); }
};

/// A file whose modules could not be loaded: nothing is defined.
class NoAccess final : public ModuleAccess
{
public:
    int64_t root(const QByteArray &) const override { return U; }
    int64_t field(int64_t, int, const QByteArray &) const override { return U; }
    int64_t item(int64_t, int64_t) const override { return U; }
    int64_t entry(int64_t, const QByteArray &) const override { return U; }
    int64_t length(int64_t) const override { return 0; }
    int64_t entryAt(int64_t, int64_t, QByteArray *) const override { return U; }
    int64_t integer(int64_t) const override { return U; }
    int64_t real(int64_t) const override { return U; }
    bool string(int64_t, QByteArray *) const override { return false; }
    int64_t call(int64_t, const QByteArray &, const ModuleArgument *) const override { return U; }
    int64_t entryPoint() const override { return U; }
};

} // namespace

const ModuleAccess &ModuleAccess::unloaded()
{
    static const UnloadedAccess access;
    return access;
}

const ModuleAccess &ModuleAccess::none()
{
    static const NoAccess access;
    return access;
}

struct ModuleRuntime::Private
{
    LibyaraUse libyara;
    YR_RULES *rules = nullptr;
    YR_SCANNER *scanner = nullptr;
    size_t modules = 0;
    bool entryPoint = false;

    // One run.
    const uint8_t *data = nullptr;
    size_t size = 0;
    int firstCalls = 0;
    YR_MEMORY_BLOCK block {};
    YR_MEMORY_BLOCK_ITERATOR iterator {};
    std::vector<std::pair<QByteArray, YR_OBJECT *>> roots;
    /// libyara's compiled regex arguments, by ModuleRegexes number (null for numbers not used here).
    std::vector<RE *> regexes;
    std::vector<int> regexIds; ///< in the order of the capturing rules
    size_t captured = 0;
    bool capturing = false;
    YR_MODULE_FUNC exportsCode = nullptr;
    const std::function<void(const ModuleAccess &)> *evaluate = nullptr;
    std::vector<QByteArray> *console = nullptr;
    bool evaluated = false;
    std::exception_ptr failure;
    std::vector<uint8_t> buffer; ///< the file, where the scan did not keep it whole
};

namespace {

const uint8_t *fetchNothing(YR_MEMORY_BLOCK *)
{
    return nullptr;
}

const uint8_t *fetchData(YR_MEMORY_BLOCK *block)
{
    // yara maps an empty file as no data: the modules then read nothing, and hash or math give undefined.
    const auto *d = static_cast<ModuleRuntime::Private *>(block->context);
    return d->size ? d->data : nullptr;
}

// libyara's scan first walks the blocks for strings, then runs the rules, whose imports load the modules, which
// ask the iterator for the first block again. The rule has no strings: its walk is given a block without data
// (skipped, as libyara skips a block it cannot fetch), and the modules the file itself. Where a rule reads
// `entrypoint`, which libyara computes during that walk, the walk gets the data too.
YR_MEMORY_BLOCK *firstBlock(YR_MEMORY_BLOCK_ITERATOR *iterator)
{
    auto *d = static_cast<ModuleRuntime::Private *>(iterator->context);
    d->block.size = d->size;
    d->block.base = 0;
    d->block.context = d;
    d->block.fetch_data = ++d->firstCalls == 1 && !d->entryPoint ? fetchNothing : fetchData;
    iterator->last_error = ERROR_SUCCESS;
    return &d->block;
}

YR_MEMORY_BLOCK *nextBlock(YR_MEMORY_BLOCK_ITERATOR *iterator)
{
    iterator->last_error = ERROR_SUCCESS;
    return nullptr;
}

uint64_t fileSize(YR_MEMORY_BLOCK_ITERATOR *iterator)
{
    return static_cast<ModuleRuntime::Private *>(iterator->context)->size;
}

// A regex argument must be libyara's compiled form, which its compiler makes and does not export: each one is
// compiled into a rule `pe.exports(/.../)`, and one scan of no data, with the pe module's exports(regex)
// replaced by this function, collects them in rule order. Those rules are then disabled.
int captureRegex(YR_VALUE *args, YR_SCAN_CONTEXT *context, YR_OBJECT_FUNCTION *function)
{
    auto *d = static_cast<ModuleRuntime::Private *>(context->user_data);
    if (d->captured < d->regexIds.size())
        d->regexes[size_t(d->regexIds[d->captured++])] = args[0].re;
    function->return_obj->value.i = YR_UNDEFINED;
    return ERROR_SUCCESS;
}

int scanCallback(YR_SCAN_CONTEXT *context, int message, void *data, void *user)
{
    auto *d = static_cast<ModuleRuntime::Private *>(user);
    if (message == CALLBACK_MSG_CONSOLE_LOG) {
        if (d->console && data)
            d->console->push_back(QByteArray(static_cast<const char *>(data)));
        return CALLBACK_CONTINUE;
    }
    if (message != CALLBACK_MSG_MODULE_IMPORTED)
        return CALLBACK_CONTINUE;
    auto *module = static_cast<YR_OBJECT *>(data);
    if (d->capturing) {
        if (std::strcmp(module->identifier, "pe") == 0)
            for (YR_STRUCTURE_MEMBER *m = reinterpret_cast<YR_OBJECT_STRUCTURE *>(module)->members; m; m = m->next)
                if (std::strcmp(m->object->identifier, "exports") == 0 && m->object->type == OBJECT_TYPE_FUNCTION) {
                    auto *f = reinterpret_cast<YR_OBJECT_FUNCTION *>(m->object);
                    for (int k = 0; k < YR_MAX_OVERLOADED_FUNCTIONS && f->prototypes[k].arguments_fmt; ++k)
                        if (std::strcmp(f->prototypes[k].arguments_fmt, "r") == 0)
                            f->prototypes[k].code = captureRegex;
                }
        return CALLBACK_CONTINUE;
    }
    d->roots.emplace_back(QByteArray(module->identifier), module);
    if (d->roots.size() < d->modules)
        return CALLBACK_CONTINUE;
    // Every module is loaded: this is the one moment their objects and functions live.
    d->evaluated = true;
    try {
        const LiveAccess access(context, d->roots, d->regexes);
        (*d->evaluate)(access);
    } catch (...) {
        d->failure = std::current_exception(); // rethrown once libyara has returned
    }
    return CALLBACK_CONTINUE;
}

} // namespace

ModuleRuntime::ModuleRuntime(std::vector<QByteArray> modules, bool entryPoint, std::vector<int> regexes)
    : d(std::make_unique<Private>())
{
    d->entryPoint = entryPoint;
    // `entrypoint` alone still needs a scan that reaches the callback, and regexes are captured through pe.
    if (modules.empty() || (!regexes.empty() && std::find(modules.begin(), modules.end(), "pe") == modules.end()))
        modules.push_back("pe");
    if (!d->libyara.ok()) {
        m_error = QStringLiteral("libyara failed to initialize");
        return;
    }
    QByteArray text;
    for (const QByteArray &m : modules) {
        if (m == "cuckoo") {
            m_error = QStringLiteral("the cuckoo module reads a sandbox report, not the file: not supported");
            return;
        }
        text += "import \"" + m + "\"\n";
    }
    d->modules = modules.size();
    text += "rule hitscope_modules { condition: false }\n";
    for (int id : regexes) {
        text += "rule hitscope_regex_" + QByteArray::number(id) + " { condition: pe.exports("
            + ModuleRegexes::ruleText(id) + ") }\n";
        if (size_t(id) >= d->regexes.size())
            d->regexes.resize(size_t(id) + 1, nullptr);
    }
    d->regexIds = regexes;
    const QString error = compileLibyaraRules(text, &d->rules);
    if (!error.isEmpty()) {
        m_error = QStringLiteral("libyara could not load the modules: %1").arg(error);
        return;
    }
    if (yr_scanner_create(d->rules, &d->scanner) != ERROR_SUCCESS) {
        m_error = QStringLiteral("libyara: out of memory");
        return;
    }
    yr_scanner_set_callback(d->scanner, scanCallback, d.get());
    yr_scanner_set_flags(d->scanner, SCAN_FLAGS_NO_TRYCATCH);
    d->iterator.context = d.get();
    d->iterator.first = firstBlock;
    d->iterator.next = nextBlock;
    d->iterator.file_size = fileSize;
    if (regexes.empty())
        return;
    d->capturing = true;
    d->data = nullptr;
    d->size = 0;
    d->firstCalls = 0;
    yr_scanner_scan_mem_blocks(d->scanner, &d->iterator);
    d->capturing = false;
    if (d->captured != regexes.size()) {
        m_error = QStringLiteral("libyara did not compile the regular expressions given to module functions");
        return;
    }
    YR_RULE *rule = nullptr;
    yr_rules_foreach(d->rules, rule)
    {
        if (std::strncmp(rule->identifier, "hitscope_regex_", 15) == 0)
            yr_rule_disable(rule);
    }
}

ModuleRuntime::~ModuleRuntime()
{
    if (d->scanner)
        yr_scanner_destroy(d->scanner);
    if (d->rules)
        yr_rules_destroy(d->rules);
}

bool ModuleRuntime::run(const QByteArray &path, int64_t size, std::span<const uint8_t> known,
                        const std::function<void(const ModuleAccess &)> &evaluate, QString *error,
                        std::vector<QByteArray> *console)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = why;
        return false;
    };
    if (!d->scanner)
        return fail(m_error);
    // Read, not mapped: a file truncated since it was scanned must not fault inside libyara (which would
    // longjmp across this evaluation), and libyara's own signal handlers are off (SCAN_FLAGS_NO_TRYCATCH).
    const uint8_t *data = known.data();
    if (size > 0 && int64_t(known.size()) < size) {
        const int fd = ::open(path.constData(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return fail(QStringLiteral("cannot open %1 to read its modules: %2")
                            .arg(QString::fromLocal8Bit(path), QString::fromLocal8Bit(std::strerror(errno))));
        d->buffer.resize(size_t(size));
        const int64_t got = preadFully(fd, d->buffer.data(), size, 0);
        ::close(fd);
        if (got != size)
            return fail(QStringLiteral("cannot read %1 to read its modules: it changed since it was scanned")
                            .arg(QString::fromLocal8Bit(path)));
        data = d->buffer.data();
    }
    static const uint8_t empty = 0;
    d->data = data ? data : &empty;
    d->size = size_t(std::max<int64_t>(size, 0));
    d->roots.clear();
    d->firstCalls = 0;
    d->console = console;
    d->evaluate = &evaluate;
    d->evaluated = false;
    d->failure = nullptr;
    d->iterator.last_error = ERROR_SUCCESS;
    // libyara computes the entry point only while it is undefined, and a scanner keeps it from its last scan
    // (yara makes one scanner per file).
    d->scanner->entry_point = YR_UNDEFINED;
    const int rc = yr_scanner_scan_mem_blocks(d->scanner, &d->iterator);
    d->evaluate = nullptr;
    if (d->buffer.capacity() > kKeptBuffer)
        std::vector<uint8_t>().swap(d->buffer); // a large file's copy is not kept for the next ones
    if (d->failure)
        std::rethrow_exception(d->failure);
    if (!d->evaluated)
        return fail(QStringLiteral("libyara error %1 while loading the modules of %2").arg(rc).arg(QString::fromLocal8Bit(path)));
    return true;
}

} // namespace Hitscope
