// SPDX-License-Identifier: GPL-3.0-or-later
#include "modulereader.h"

#include "modules/libyara.h"

namespace Hitscope {

namespace {

ModuleObject::Kind kindOf(int8_t type)
{
    switch (type) {
    case OBJECT_TYPE_INTEGER:
        return ModuleObject::Kind::Integer;
    case OBJECT_TYPE_FLOAT:
        return ModuleObject::Kind::Float;
    case OBJECT_TYPE_STRING:
        return ModuleObject::Kind::String;
    case OBJECT_TYPE_ARRAY:
        return ModuleObject::Kind::Array;
    case OBJECT_TYPE_DICTIONARY:
        return ModuleObject::Kind::Dictionary;
    case OBJECT_TYPE_FUNCTION:
        return ModuleObject::Kind::Function;
    default:
        return ModuleObject::Kind::Structure;
    }
}

void copyObject(const YR_OBJECT *o, ModuleObject &out)
{
    out.kind = kindOf(o->type);
    if (o->identifier)
        out.identifier = o->identifier;
    switch (o->type) {
    case OBJECT_TYPE_INTEGER:
        out.defined = o->value.i != int64_t(YR_UNDEFINED);
        out.integer = out.defined ? o->value.i : 0;
        break;
    case OBJECT_TYPE_FLOAT:
        // yara's own test (object.c prints a float as undefined when its bits are YR_UNDEFINED's).
        out.defined = o->value.i != int64_t(YR_UNDEFINED);
        out.real = out.defined ? o->value.d : 0;
        break;
    case OBJECT_TYPE_STRING:
        out.defined = o->value.ss != nullptr;
        if (out.defined)
            out.string = QByteArray(o->value.ss->c_string, qsizetype(o->value.ss->length));
        break;
    case OBJECT_TYPE_STRUCTURE:
        for (const YR_STRUCTURE_MEMBER *m = reinterpret_cast<const YR_OBJECT_STRUCTURE *>(o)->members; m;
             m = m->next) {
            out.children.emplace_back();
            copyObject(m->object, out.children.back());
        }
        break;
    case OBJECT_TYPE_ARRAY: {
        const auto *array = reinterpret_cast<const YR_OBJECT_ARRAY *>(o);
        if (array->prototype_item) {
            out.prototype.emplace_back();
            copyObject(array->prototype_item, out.prototype.back());
        }
        if (const YR_ARRAY_ITEMS *items = array->items) {
            for (int i = 0; i < items->length; ++i) {
                if (!items->objects[i])
                    continue;
                out.children.emplace_back();
                copyObject(items->objects[i], out.children.back());
                out.indices.push_back(i);
            }
        }
        break;
    }
    case OBJECT_TYPE_DICTIONARY: {
        const auto *dict = reinterpret_cast<const YR_OBJECT_DICTIONARY *>(o);
        if (dict->prototype_item) {
            out.prototype.emplace_back();
            copyObject(dict->prototype_item, out.prototype.back());
        }
        if (const YR_DICTIONARY_ITEMS *items = dict->items) {
            for (int i = 0; i < items->used; ++i) {
                out.children.emplace_back();
                copyObject(items->objects[i].obj, out.children.back());
                const SIZED_STRING *key = items->objects[i].key;
                out.keys.push_back(QByteArray(key->c_string, qsizetype(key->length)));
            }
        }
        break;
    }
    case OBJECT_TYPE_FUNCTION: {
        const auto *f = reinterpret_cast<const YR_OBJECT_FUNCTION *>(o);
        for (int k = 0; k < YR_MAX_OVERLOADED_FUNCTIONS && f->prototypes[k].arguments_fmt; ++k)
            out.argumentFormats.push_back(f->prototypes[k].arguments_fmt);
        if (f->return_obj)
            out.returns = kindOf(f->return_obj->type);
        break;
    }
    default:
        break;
    }
}

} // namespace

struct ModuleReader::Private
{
    LibyaraUse libyara;
    YR_RULES *rules = nullptr;
    YR_SCANNER *scanner = nullptr;
    QByteArrayList modules;
    std::vector<Module> *out = nullptr;
};

QByteArrayList ModuleReader::fileModules()
{
    return { "pe", "elf", "math", "hash", "dotnet", "time", "console", "magic", "macho", "dex" };
}

namespace {

int scanCallback(YR_SCAN_CONTEXT *, int message, void *data, void *user)
{
    if (message == CALLBACK_MSG_MODULE_IMPORTED) {
        auto *d = static_cast<ModuleReader::Private *>(user);
        const auto *object = static_cast<const YR_OBJECT *>(data);
        ModuleReader::Module module;
        module.name = object->identifier;
        copyObject(object, module.root);
        d->out->push_back(std::move(module));
    }
    return CALLBACK_CONTINUE;
}

} // namespace

ModuleReader::ModuleReader(const QByteArrayList &modules)
    : d(std::make_unique<Private>())
{
    d->modules = modules;
    if (!d->libyara.ok()) {
        m_error = QStringLiteral("libyara failed to initialize");
        return;
    }
    QByteArray text;
    for (const QByteArray &m : modules) {
        if (!fileModules().contains(m) && m != "tests") {
            m_error = QStringLiteral("unknown module '%1'").arg(QString::fromUtf8(m));
            return;
        }
        text += "import \"" + m + "\"\n";
    }
    // A condition that reads nothing: libyara still loads every imported module for each file.
    text += "rule hitscope_modules { condition: false }\n";
    const QString error = compileLibyaraRules(text, &d->rules);
    if (!error.isEmpty()) {
        m_error = QStringLiteral("libyara could not compile the module imports: %1").arg(error);
        return;
    }
    if (yr_scanner_create(d->rules, &d->scanner) != ERROR_SUCCESS) {
        m_error = QStringLiteral("libyara: out of memory");
        return;
    }
    yr_scanner_set_callback(d->scanner, scanCallback, d.get());
}

ModuleReader::~ModuleReader()
{
    if (d->scanner)
        yr_scanner_destroy(d->scanner);
    if (d->rules)
        yr_rules_destroy(d->rules);
}

bool ModuleReader::read(const uint8_t *data, size_t size, std::vector<Module> &out, QString *error)
{
    out.clear();
    if (!d->scanner) {
        if (error)
            *error = m_error;
        return false;
    }
    d->out = &out;
    const int rc = yr_scanner_scan_mem(d->scanner, data, size);
    d->out = nullptr;
    if (rc != ERROR_SUCCESS) {
        out.clear();
        if (error)
            *error = QStringLiteral("libyara error %1 while reading the modules").arg(rc);
        return false;
    }
    // libyara reports them in import order; keep `modules`' order whatever it does.
    std::vector<Module> ordered;
    for (const QByteArray &m : d->modules)
        for (Module &got : out)
            if (got.name == m)
                ordered.push_back(std::move(got));
    out = std::move(ordered);
    return true;
}

} // namespace Hitscope
