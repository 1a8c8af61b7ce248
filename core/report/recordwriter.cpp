// SPDX-License-Identifier: GPL-3.0-or-later
#include "recordwriter.h"

#include <algorithm>
#include <cstdio>

#include "scan/ruleprofile.h"
#include "util/jsonescape.h"

namespace Hitscope {

namespace {

const char kHex[] = "0123456789ABCDEF";

// Match data as yara prints it: printable ASCII as is, other bytes as \xNN.
void appendData(std::string &out, const QByteArray &data)
{
    for (const char ch : data) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 32 && c <= 126) {
            out += char(c);
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
}

// Hex strings' data as yara prints it: at most 64 bytes as "4D 5A", then " ..." when there is more.
void appendHexData(std::string &out, const QByteArray &data)
{
    const qsizetype shown = std::min<qsizetype>(64, data.size());
    for (qsizetype i = 0; i < shown; ++i) {
        const auto c = static_cast<unsigned char>(data[i]);
        if (i)
            out += ' ';
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
    if (data.size() > 64)
        out += " ...";
}

} // namespace

void RecordWriter::hit(std::string &out, const QByteArray &file, const QString &rule, const QString &string,
                       int64_t offset, int64_t length)
{
    out += "{\"type\":\"hit\",\"file\":";
    appendJsonString(out, file);
    out += ",\"rule\":";
    appendJsonString(out, rule.toUtf8());
    out += ",\"string\":";
    appendJsonString(out, string.toUtf8());
    out += ",\"offset\":" + std::to_string(offset) + ",\"length\":" + std::to_string(length) + "}\n";
}

void RecordWriter::match(std::string &out, const QByteArray &file, const QString &rule, const QString &ns,
                         const QStringList &tags, const std::vector<MatchString> &strings)
{
    out += "{\"type\":\"match\",\"file\":";
    appendJsonString(out, file);
    out += ",\"rule\":";
    appendJsonString(out, rule.toUtf8());
    out += ",\"namespace\":";
    appendJsonString(out, ns.toUtf8());
    out += ",\"tags\":[";
    for (qsizetype t = 0; t < tags.size(); ++t) {
        if (t)
            out += ',';
        appendJsonString(out, tags[t].toUtf8());
    }
    out += "],\"strings\":[";
    for (size_t i = 0; i < strings.size(); ++i) {
        const MatchString &s = strings[i];
        out += i ? ",{\"id\":" : "{\"id\":";
        appendJsonString(out, s.id.toUtf8());
        out += ",\"offset\":" + std::to_string(s.offset) + ",\"length\":" + std::to_string(s.length) + ",\"data\":";
        appendJsonString(out, s.data);
        out += '}';
    }
    out += "]}\n";
}

void RecordWriter::console(std::string &out, const QByteArray &file, const QByteArray &message)
{
    out += "{\"type\":\"console\",\"file\":";
    appendJsonString(out, file);
    out += ",\"message\":";
    appendJsonString(out, message);
    out += "}\n";
}

void RecordWriter::problem(std::string &out, const QByteArray &file, const QString &reason)
{
    out += "{\"type\":\"problem\",\"file\":";
    appendJsonString(out, file);
    out += ",\"reason\":";
    appendJsonString(out, reason.toUtf8());
    out += "}\n";
}

void RecordWriter::rejection(std::string &out, const QString &file, int line, const QString &rule,
                             const QString &reason)
{
    out += "{\"type\":\"rejection\",\"file\":";
    appendJsonString(out, file.toUtf8());
    out += ",\"line\":" + std::to_string(line) + ",\"rule\":";
    appendJsonString(out, rule.toUtf8());
    out += ",\"reason\":";
    appendJsonString(out, reason.toUtf8());
    out += "}\n";
}

void RecordWriter::summary(std::string &out, const Summary &s)
{
    out += "{\"type\":\"summary\",\"files\":" + std::to_string(s.files) + ",\"bytes\":" + std::to_string(s.bytes)
        + ",\"hits\":" + std::to_string(s.hits) + ",\"problems\":" + std::to_string(s.problems)
        + ",\"rejections\":" + std::to_string(s.rejections) + ",\"batches\":" + std::to_string(s.batches)
        + ",\"wall_ms\":" + std::to_string(s.wallMs) + ",\"cancelled\":" + (s.cancelled ? "true" : "false")
        + ",\"engine\":";
    appendJsonString(out, s.engine.toUtf8());
    out += ",\"exit_code\":" + std::to_string(s.exitCode) + "}\n";
}

void RecordWriter::profile(std::string &out, const RuleProfileRow &row)
{
    auto ms = [](double v) {
        char text[32];
        std::snprintf(text, sizeof text, "%.3f", v);
        return std::string(text);
    };
    out += "{\"type\":\"profile\",\"rule\":";
    appendJsonString(out, row.name.toUtf8());
    out += ",\"file\":";
    appendJsonString(out, row.file.toUtf8());
    out += ",\"line\":" + std::to_string(row.line)
        + ",\"engine_ms\":" + (row.engineMs ? ms(*row.engineMs) : std::string("null"))
        + ",\"host_ms\":" + ms(row.hostMs) + ",\"condition_ms\":" + ms(row.conditionMs)
        + ",\"resolve_ms\":" + ms(row.resolveMs) + ",\"total_ms\":" + ms(row.totalMs())
        + ",\"hits\":" + std::to_string(row.hits) + ",\"files\":" + std::to_string(row.files) + ",\"reasons\":[";
    for (qsizetype i = 0; i < row.reasons.size(); ++i) {
        if (i)
            out += ',';
        appendJsonString(out, row.reasons[i].toUtf8());
    }
    out += "]}\n";
}

void RecordWriter::shard(std::string &out, int index, int count, const QByteArrayList &paths, const QStringList &rules)
{
    out += "{\"type\":\"shard\",\"index\":" + std::to_string(index) + ",\"count\":" + std::to_string(count)
        + ",\"paths\":[";
    for (qsizetype i = 0; i < paths.size(); ++i) {
        if (i)
            out += ',';
        appendJsonString(out, paths[i]);
    }
    out += "],\"rules\":[";
    for (qsizetype i = 0; i < rules.size(); ++i) {
        if (i)
            out += ',';
        appendJsonString(out, rules[i].toUtf8());
    }
    out += "]}\n";
}

void RecordWriter::yaraString(std::string &out, int64_t offset, const QString &id, const QByteArray &data, bool hex)
{
    char head[32];
    std::snprintf(head, sizeof head, "0x%llx:", static_cast<unsigned long long>(offset));
    out += head;
    out += id.toStdString();
    out += ": ";
    if (hex)
        appendHexData(out, data);
    else
        appendData(out, data);
    out += '\n';
}

} // namespace Hitscope
