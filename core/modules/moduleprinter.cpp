// SPDX-License-Identifier: GPL-3.0-or-later
#include "moduleprinter.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "util/jsonescape.h"

namespace Hitscope {

namespace {

void printText(const ModuleObject &o, int indent, bool withIdentifier, QByteArray &out)
{
    const QByteArray tabs(qMin(indent, 31), '\t');
    if (withIdentifier && o.kind != ModuleObject::Kind::Function) {
        out += tabs;
        out += o.identifier;
    }
    switch (o.kind) {
    case ModuleObject::Kind::Float:
        if (o.defined) {
            char buffer[512];
            std::snprintf(buffer, sizeof buffer, " = %f", o.real);
            out += buffer;
        } else {
            out += " = YR_UNDEFINED";
        }
        break;
    case ModuleObject::Kind::Integer:
        if (o.defined) {
            out += " = ";
            out += QByteArray::number(qlonglong(o.integer));
        } else {
            out += " = YR_UNDEFINED";
        }
        break;
    case ModuleObject::Kind::String:
        if (!o.defined) {
            out += " = YR_UNDEFINED";
            break;
        }
        out += " = \"";
        for (char c : o.string) {
            const auto b = uint8_t(c);
            if (b >= 0x20 && b < 0x7f) {
                out += c;
            } else {
                char hex[5];
                std::snprintf(hex, sizeof hex, "\\x%02x", b);
                out += hex;
            }
        }
        out += '"';
        break;
    case ModuleObject::Kind::Structure:
        for (const ModuleObject &m : o.children) {
            if (m.kind == ModuleObject::Kind::Function)
                continue;
            out += '\n';
            printText(m, indent + 1, true, out);
        }
        break;
    case ModuleObject::Kind::Array:
        for (size_t i = 0; i < o.children.size(); ++i) {
            out += '\n';
            out += tabs;
            out += "\t[";
            out += QByteArray::number(o.indices[i]);
            out += ']';
            printText(o.children[i], indent + 1, false, out);
        }
        break;
    case ModuleObject::Kind::Dictionary:
        for (size_t i = 0; i < o.children.size(); ++i) {
            // yara prints the key as a C string: up to its first zero byte.
            const QByteArray &key = o.keys[i];
            const qsizetype nul = key.indexOf('\0');
            out += '\n';
            out += tabs;
            out += '\t';
            out += nul < 0 ? key : key.left(nul);
            printText(o.children[i], indent + 1, false, out);
        }
        break;
    case ModuleObject::Kind::Function:
        break;
    }
}

void printJson(const ModuleObject &o, std::string &out)
{
    switch (o.kind) {
    case ModuleObject::Kind::Integer:
        out += o.defined ? std::to_string(o.integer) : std::string("null");
        break;
    case ModuleObject::Kind::Float:
        out += o.defined && std::isfinite(o.real) ? QByteArray::number(o.real, 'g', 17).toStdString()
                                                  : std::string("null");
        break;
    case ModuleObject::Kind::String:
        if (!o.defined) {
            out += "null";
        } else if (isValidUtf8(o.string)) {
            appendJsonString(out, o.string);
        } else {
            // Bytes that are not text (a rich header's clear data, a resource name): exact, as hex.
            out += "{\"hex\":\"" + o.string.toHex().toStdString() + "\"}";
        }
        break;
    case ModuleObject::Kind::Structure: {
        out += '{';
        bool first = true;
        for (const ModuleObject &m : o.children) {
            if (m.kind == ModuleObject::Kind::Function)
                continue;
            if (!first)
                out += ',';
            first = false;
            appendJsonString(out, m.identifier);
            out += ':';
            printJson(m, out);
        }
        out += '}';
        break;
    }
    case ModuleObject::Kind::Array: {
        out += '[';
        int next = 0;
        for (size_t i = 0; i < o.children.size(); ++i) {
            for (; next < o.indices[i]; ++next)
                out += next ? ",null" : "null";
            if (next)
                out += ',';
            printJson(o.children[i], out);
            ++next;
        }
        out += ']';
        break;
    }
    case ModuleObject::Kind::Dictionary:
        out += '{';
        for (size_t i = 0; i < o.children.size(); ++i) {
            if (i)
                out += ',';
            appendJsonString(out, o.keys[i]);
            out += ':';
            printJson(o.children[i], out);
        }
        out += '}';
        break;
    case ModuleObject::Kind::Function:
        out += "null";
        break;
    }
}

} // namespace

QByteArray ModulePrinter::yaraText(const ModuleObject &module)
{
    QByteArray out;
    printText(module, 0, true, out);
    return out;
}

QByteArray ModulePrinter::json(const ModuleObject &module)
{
    std::string out;
    printJson(module, out);
    return QByteArray::fromStdString(out);
}

} // namespace Hitscope
