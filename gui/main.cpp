// SPDX-License-Identifier: GPL-3.0-or-later
// hitscope [--rules FILE]... [--engine auto|gpu|cpu] [--scan] [PATH]...
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "launchparamspanel.h"
#include "mainwindow.h"
#include "rulesetpanel.h"
#include "dropzone.h"

int main(int argc, char **argv)
{
    // The desktop application needs a display: no headless platform here (that is for the CLI and tests).
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("hitscope"));
    QApplication::setOrganizationName(QStringLiteral("Hitscope"));
    QApplication::setApplicationVersion(QStringLiteral(HITSCOPE_VERSION));
    QApplication::setApplicationDisplayName(QStringLiteral("Hitscope"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate("main", "Scans folders against rule sets, live."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption rules({QStringLiteral("r"), QStringLiteral("rules")},
                                   QApplication::translate("main", "Load a rule file (repeatable)."),
                                   QStringLiteral("FILE"));
    const QCommandLineOption scan(QStringLiteral("scan"),
                                  QApplication::translate("main", "Start scanning the given paths at once."));
    const QCommandLineOption engine(QStringLiteral("engine"),
                                    QApplication::translate("main", "Engine: auto (default), gpu or cpu."),
                                    QStringLiteral("E"), QStringLiteral("auto"));
    parser.addOptions({rules, scan, engine});
    parser.addPositionalArgument(QStringLiteral("PATH"), QApplication::translate("main", "Folders or files to scan."),
                                 QStringLiteral("[PATH...]"));
    parser.process(app);

    Hitscope::EngineChoice engineChoice = Hitscope::EngineChoice::Auto;
    const QString engineName = parser.value(engine).toLower();
    if (engineName == QLatin1String("cpu"))
        engineChoice = Hitscope::EngineChoice::Cpu;
    else if (engineName == QLatin1String("gpu"))
        engineChoice = Hitscope::EngineChoice::Gpu;
    else if (engineName != QLatin1String("auto")) {
        std::fprintf(stderr, "hitscope: --engine must be auto, gpu or cpu, not '%s'\n", qPrintable(engineName));
        return 1;
    }

    Hitscope::MainWindow window;
    window.launchParamsPanel()->setEngine(engineChoice);
    window.ruleSetPanel()->addRuleFiles(parser.values(rules));
    window.dropZone()->addPaths(parser.positionalArguments());
    window.show();
    if (parser.isSet(scan))
        QTimer::singleShot(0, &window, &Hitscope::MainWindow::onScan);
    return app.exec();
}
