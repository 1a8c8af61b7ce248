// SPDX-License-Identifier: GPL-3.0-or-later
// `hitscope-cli dump`: the YARA modules' data of real files, compared byte for byte with `yara -D` (the
// oracle), for PE (EFI applications from shim-unsigned), .NET (mono's mscorlib.dll) and ELF (system binaries)
// files that packaging/setup.sh installs, and JSON that carries the same values.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include "modules/modulereader.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

int run(const QString &program, const QStringList &arguments, QByteArray *out, QByteArray *err = nullptr)
{
    QProcess p;
    p.start(program, arguments);
    if (!p.waitForFinished(120000))
        return -1;
    *out = p.readAllStandardOutput();
    if (err)
        *err = p.readAllStandardError();
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

/// Files of each format from Debian packages the set-up installs (PE, .NET, ELF executable and library).
const QStringList kSamples = {
    QStringLiteral("/usr/lib/shim/shimx64.efi"),
    QStringLiteral("/usr/lib/shim/mmx64.efi"),
    QStringLiteral("/usr/lib/mono/4.5/mscorlib.dll"),
    QStringLiteral("/usr/bin/yara"),
    QStringLiteral("/usr/lib/x86_64-linux-gnu/libyara.so.9"),
};

} // namespace

class TestModuleDump : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    QString m_imports;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        QByteArray text;
        for (const QByteArray &m : ModuleReader::fileModules())
            text += "import \"" + m + "\"\n";
        text += "rule nothing { condition: false }\n";
        m_imports = m_tmp.filePath(QStringLiteral("imports.yar"));
        QVERIFY(TestUtil::writeFile(m_imports, text));
        for (const QString &f : kSamples)
            QVERIFY2(QFile::exists(f), qPrintable(f + QStringLiteral(" is missing: run packaging/setup.sh")));
    }

    void sameTextAsYara_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString &f : kSamples)
            QTest::newRow(qPrintable(f)) << f;
    }

    void sameTextAsYara()
    {
        QFETCH(QString, file);
        QByteArray want, got;
        QCOMPARE(run(QStringLiteral("yara"), { QStringLiteral("-D"), m_imports, file }, &want), 0);
        QCOMPARE(run(QStringLiteral(HITSCOPE_CLI), { QStringLiteral("dump"), file }, &got), 0);
        QVERIFY(want.count('\n') > 300); // the modules print their data, not only their names
        if (got != want) {
            const QByteArrayList a = want.split('\n'), b = got.split('\n');
            for (qsizetype i = 0; i < std::min(a.size(), b.size()); ++i)
                if (a[i] != b[i]) {
                    qWarning() << "line" << i + 1 << "yara:" << a[i] << "hitscope:" << b[i];
                    break;
                }
        }
        QCOMPARE(got.size(), want.size());
        QVERIFY(got == want);
    }

    void oneModuleAndJson()
    {
        // --module pe alone prints what yara prints for an import of pe alone; --json the same values.
        const QString efi = kSamples.front();
        const QString peOnly = m_tmp.filePath(QStringLiteral("pe.yar"));
        QVERIFY(TestUtil::writeFile(peOnly, "import \"pe\"\nrule nothing { condition: false }\n"));
        QByteArray want, got, json;
        QCOMPARE(run(QStringLiteral("yara"), { QStringLiteral("-D"), peOnly, efi }, &want), 0);
        QCOMPARE(run(QStringLiteral(HITSCOPE_CLI), { QStringLiteral("dump"), QStringLiteral("-m"), QStringLiteral("pe"), efi },
                     &got),
                 0);
        QVERIFY(got == want);
        QCOMPARE(run(QStringLiteral(HITSCOPE_CLI),
                     { QStringLiteral("dump"), QStringLiteral("--json"), QStringLiteral("--module"), QStringLiteral("pe"), efi },
                     &json),
                 0);
        QCOMPARE(json.count('\n'), 1);
        QJsonParseError error;
        const QJsonObject record = QJsonDocument::fromJson(json, &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QCOMPARE(record.value(QLatin1String("type")).toString(), QStringLiteral("modules"));
        QCOMPARE(record.value(QLatin1String("file")).toString(), efi);
        const QJsonObject pe = record.value(QLatin1String("modules")).toObject().value(QLatin1String("pe")).toObject();
        const QJsonArray sections = pe.value(QLatin1String("sections")).toArray();
        QVERIFY(!sections.isEmpty());
        QCOMPARE(pe.value(QLatin1String("number_of_sections")).toInteger(), qint64(sections.size()));
        // The text says the same: "\tnumber_of_sections = N" and each section's name.
        QVERIFY(want.contains(QByteArray("\tnumber_of_sections = " + QByteArray::number(sections.size()) + '\n')));
        for (const QJsonValue &s : sections)
            QVERIFY(want.contains(QByteArray("\t\t\tname = \"" + s.toObject().value(QLatin1String("name")).toString().toUtf8() + '"')));
        QVERIFY(pe.value(QLatin1String("entry_point")).isDouble());
    }

    void badInputIsNamedAndTheRestDumped()
    {
        const QString unreadable = m_tmp.filePath(QStringLiteral("secret.bin"));
        QVERIFY(TestUtil::writeFile(unreadable, "MZ"));
        QVERIFY(::chmod(QFile::encodeName(unreadable).constData(), 0) == 0);
        const bool root = QFile(unreadable).open(QIODevice::ReadOnly);
        QByteArray out, err;
        const QString missing = m_tmp.filePath(QStringLiteral("missing.exe"));
        QCOMPARE(run(QStringLiteral(HITSCOPE_CLI),
                     { QStringLiteral("dump"), QStringLiteral("-m"), QStringLiteral("elf"), missing, kSamples.last(), unreadable },
                     &out, &err),
                 2);
        QVERIFY2(err.contains(QFile::encodeName(missing)), err.constData());
        if (!root)
            QVERIFY2(err.contains(QFile::encodeName(unreadable)), err.constData());
        QVERIFY(out.contains(QByteArray("==> " + QFile::encodeName(kSamples.last()) + " <==\nelf\n")));
        QVERIFY(out.contains("\ttype = 3")); // a shared object (ET_DYN)

        QCOMPARE(run(QStringLiteral(HITSCOPE_CLI), { QStringLiteral("dump"), QStringLiteral("-m"), QStringLiteral("cuckoo"), kSamples.front() },
                     &out, &err),
                 1);
        QVERIFY2(err.contains("unknown module 'cuckoo'"), err.constData());
        QCOMPARE(run(QStringLiteral(HITSCOPE_CLI), { QStringLiteral("dump") }, &out, &err), 1);
        QVERIFY2(err.contains("no file to dump"), err.constData());
    }
};

QTEST_GUILESS_MAIN(TestModuleDump)

#include "tst_moduledump.moc"
