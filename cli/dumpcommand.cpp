// SPDX-License-Identifier: GPL-3.0-or-later
#include "dumpcommand.h"

#include <cstdio>
#include <string>

#include <QFile>
#include <QFileInfo>

#include "cliargs.h"
#include "modules/moduleprinter.h"
#include "modules/modulereader.h"
#include "util/jsonescape.h"

using namespace Hitscope;

int runDumpCommand(const CliArgs &args)
{
    const QByteArrayList modules = args.modules.isEmpty() ? ModuleReader::fileModules() : args.modules;
    ModuleReader reader(modules);
    if (!reader.isValid()) {
        std::fprintf(stderr, "hitscope-cli: %s\n", reader.errorString().toLocal8Bit().constData());
        return 1;
    }
    int status = 0;
    auto problem = [&](const QByteArray &path, const QString &why) {
        std::fprintf(stderr, "hitscope-cli: %s: %s\n", path.constData(), why.toLocal8Bit().constData());
        status = 2;
    };
    std::vector<ModuleReader::Module> data;
    for (const QByteArray &path : args.paths) {
        const QString name = QString::fromLocal8Bit(path);
        if (QFileInfo(name).isDir()) {
            problem(path, QStringLiteral("is a folder (dump reads files)"));
            continue;
        }
        QFile file(name);
        if (!file.open(QIODevice::ReadOnly)) {
            problem(path, file.errorString());
            continue;
        }
        // Mapped, not read: a module reads a few headers of a large file, not all of it.
        const qint64 size = file.size();
        const uchar *bytes = size > 0 ? file.map(0, size) : nullptr;
        QByteArray copy;
        if (size > 0 && !bytes) {
            copy = file.readAll();
            if (copy.size() != size) {
                problem(path, file.errorString());
                continue;
            }
            bytes = reinterpret_cast<const uchar *>(copy.constData());
        }
        QString error;
        if (!reader.read(bytes, size_t(size), data, &error)) {
            problem(path, error);
            continue;
        }
        if (args.json) {
            std::string line = "{\"type\":\"modules\",\"file\":";
            appendJsonString(line, path);
            line += ",\"modules\":{";
            for (size_t m = 0; m < data.size(); ++m) {
                if (m)
                    line += ',';
                appendJsonString(line, data[m].name);
                line += ':';
                line += ModulePrinter::json(data[m].root).toStdString();
            }
            line += "}}\n";
            std::fwrite(line.data(), 1, line.size(), stdout);
            continue;
        }
        QByteArray text;
        if (args.paths.size() > 1)
            text += "==> " + path + " <==\n";
        for (const ModuleReader::Module &m : data)
            text += ModulePrinter::yaraText(m.root) + '\n';
        std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
    }
    return status;
}
