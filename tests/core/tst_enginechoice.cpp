// SPDX-License-Identifier: GPL-3.0-or-later
// The one parser of engine names, shared by the CLI's and the GUI's --engine, the GUI's settings and the bench.
#include <QTest>

#include "engine/enginechoice.h"

using namespace Hitscope;

class TestEngineChoice : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void namesRoundTrip()
    {
        for (EngineChoice e : { EngineChoice::Auto, EngineChoice::Gpu, EngineChoice::Cpu }) {
            EngineChoice back = EngineChoice::Auto;
            QVERIFY(parseEngineChoice(engineChoiceName(e), &back));
            QCOMPARE(back, e);
        }
    }

    void caseDoesNotMatterAndOtherNamesAreRefused()
    {
        EngineChoice e = EngineChoice::Auto;
        QVERIFY(parseEngineChoice(QStringLiteral("GPU"), &e));
        QCOMPARE(e, EngineChoice::Gpu);
        for (const QString &bad : { QString(), QStringLiteral("vulkan"), QStringLiteral("gpu "), QStringLiteral("c") }) {
            e = EngineChoice::Cpu;
            QVERIFY(!parseEngineChoice(bad, &e));
            QCOMPARE(e, EngineChoice::Cpu); // untouched
        }
    }
};

QTEST_GUILESS_MAIN(TestEngineChoice)
#include "tst_enginechoice.moc"
