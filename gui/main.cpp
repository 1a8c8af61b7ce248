// SPDX-License-Identifier: GPL-3.0-or-later
// hitscope [--rules FILE]... [--engine auto|gpu|cpu] [--backend auto|vulkan|opengl] [--scan] [--measure-latency]
//          [PATH]...
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QSignalBlocker>
#include <QTimer>

#include "latencyprobe.h"
#include "launchparamspanel.h"
#include "mainwindow.h"
#include "report/hitstablemodel.h"
#include "rulesetpanel.h"
#include "dropzone.h"
#include "session/scanjob.h"
#include "settings.h"
#include "util/heaptuning.h"

int main(int argc, char **argv)
{
    Hitscope::keepFreedHeapMemory();
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
    const QCommandLineOption backend(
        QStringLiteral("backend"),
        QApplication::translate("main", "GPU backend: auto (default: Vulkan, then OpenGL), vulkan or opengl."),
        QStringLiteral("B"), QStringLiteral("auto"));
    const QCommandLineOption devices(
        QStringLiteral("devices"),
        QApplication::translate("main", "GPUs to scan on: all (default: every hardware GPU) or device numbers, such as 0,1."),
        QStringLiteral("LIST"), QStringLiteral("all"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QApplication::translate("main", "When the scan started with --scan ends, save the window as a PNG image and quit."),
        QStringLiteral("FILE"));
    const QCommandLineOption view(
        QStringLiteral("view"),
        QApplication::translate("main", "Show this view of the results: files (the top file selected), hits, rules or problems."),
        QStringLiteral("NAME"));
    const QCommandLineOption edit(
        QStringLiteral("edit"), QApplication::translate("main", "Open a rule file in the rule editor."),
        QStringLiteral("FILE"));
    const QCommandLineOption profile(
        QStringLiteral("profile"),
        QApplication::translate("main", "Measure what each rule costs (Tools > Profile rules; the Profile tab)."));
    const QCommandLineOption measureLatency(
        QStringLiteral("measure-latency"),
        QApplication::translate("main", "Print the GUI thread's event-loop latency during a scan to stdout when it ends."));
    parser.addOptions({rules, scan, engine, backend, devices, screenshot, view, edit, profile, measureLatency});
    parser.addPositionalArgument(QStringLiteral("PATH"), QApplication::translate("main", "Folders or files to scan."),
                                 QStringLiteral("[PATH...]"));
    parser.process(app);

    Hitscope::Settings *settings = Hitscope::Settings::instance();
    Hitscope::EngineChoice engineChoice = settings->engine();
    if (parser.isSet(engine)) {
        const QString engineName = parser.value(engine);
        if (!Hitscope::parseEngineChoice(engineName, &engineChoice)) {
            std::fprintf(stderr, "hitscope: --engine must be auto, gpu or cpu, not '%s'\n", qPrintable(engineName));
            return 1;
        }
    }

    Hitscope::GpuBackend backendChoice = settings->backend();
    if (parser.isSet(backend)) {
        // The CLI's spelling (parseGpuBackend); "null" is a test device, not a choice.
        const QString backendName = parser.value(backend).toLower();
        if (!Hitscope::parseGpuBackend(backendName, &backendChoice) || backendChoice == Hitscope::GpuBackend::Null) {
            std::fprintf(stderr, "hitscope: --backend must be auto, vulkan or opengl, not '%s'\n",
                         qPrintable(backendName));
            return 1;
        }
    }

    if (parser.isSet(devices)) {
        Hitscope::DeviceChoice choice;
        QString why;
        if (!Hitscope::DeviceChoice::parse(parser.value(devices), &choice, &why)) {
            std::fprintf(stderr, "hitscope: --devices: %s\n", qPrintable(why));
            return 1;
        }
    }

    // The last session's setup, unless the command line says otherwise (--rules, --engine, --backend and PATHs win).
    // Read before the window exists: its change signals write the settings back as they are restored.
    const QVector<Hitscope::RuleFileSetting> savedRules = settings->ruleFiles();
    const Hitscope::LaunchParams savedParams = settings->launchParams();

    Hitscope::MainWindow window;
    const QString viewName = parser.value(view);
    if (!viewName.isEmpty() && !window.showView(viewName)) {
        std::fprintf(stderr, "hitscope: --view must be one of %s, not '%s'\n",
                     qPrintable(Hitscope::MainWindow::viewNames().join(QLatin1String(", "))), qPrintable(viewName));
        return 1;
    }
    window.launchParamsPanel()->setParams(savedParams);
    window.launchParamsPanel()->setEngine(engineChoice);
    window.launchParamsPanel()->setBackend(backendChoice);
    if (parser.isSet(devices))
        window.launchParamsPanel()->setDevicesText(parser.value(devices));
    if (parser.isSet(rules)) {
        window.ruleSetPanel()->addRuleFiles(parser.values(rules));
    } else {
        for (const Hitscope::RuleFileSetting &rule : savedRules) {
            Hitscope::RuleSetPanel *panel = window.ruleSetPanel();
            if (panel->addRuleFiles({rule.path}) && !rule.enabled)
                panel->setEnabledAt(int(panel->ruleFiles().size()) - 1, false);
        }
    }
    window.dropZone()->addPaths(parser.positionalArguments());
    if (parser.isSet(measureLatency)) {
        // MainWindow connected first, so its probe has stopped when these run.
        const auto print = [&window] {
            const Hitscope::LatencyProbe::Stats s = window.latencyProbe()->stats();
            std::printf("gui-latency p50=%.3f p99=%.3f max=%.3f samples=%d hits=%d\n", s.p50Ms, s.p99Ms, s.maxMs,
                        s.samples, window.hitsModel()->totalHits());
            std::fflush(stdout);
        };
        QObject::connect(window.scanJob(), &Hitscope::ScanJob::finished, &window, print);
        QObject::connect(window.scanJob(), &Hitscope::ScanJob::failed, &window, print);
    }
    if (parser.isSet(screenshot)) {
        // For the documentation's pictures: the window as it is once the scan has ended and the charts drew.
        const QString file = parser.value(screenshot);
        auto save = [&window, file, viewName] {
            if (!viewName.isEmpty())
                window.showView(viewName); // again: its content came with the scan
            QTimer::singleShot(700, &window, [&window, file] {
                const bool saved = window.grab().save(file, "PNG");
                if (!saved)
                    std::fprintf(stderr, "hitscope: cannot write %s\n", qPrintable(file));
                QCoreApplication::exit(saved ? 0 : 1);
            });
        };
        QObject::connect(window.scanJob(), &Hitscope::ScanJob::finished, &window, save);
        QObject::connect(window.scanJob(), &Hitscope::ScanJob::failed, &window, save);
    }
    if (parser.isSet(profile)) {
        // For this session: the setting (Tools > Profile rules) stays as the user left it.
        const QSignalBlocker keepSetting(window.profileRulesAction());
        window.profileRulesAction()->setChecked(true);
    }
    window.show();
    if (parser.isSet(edit))
        window.openRuleEditor(QFileInfo(parser.value(edit)).absoluteFilePath());
    if (parser.isSet(scan))
        QTimer::singleShot(0, &window, &Hitscope::MainWindow::onScan);
    return app.exec();
}
