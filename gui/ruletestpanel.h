// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <set>
#include <vector>

#include <QByteArrayList>
#include <QWidget>

#include "engine/devicechoice.h"
#include "engine/enginechoice.h"
#include "engine/launchparams.h"
#include "gpu/gpudeviceinfo.h"
#include "report/hitrow.h"
#include "rules/rulesources.h"
#include "rules/ruleset.h"
#include "rules/yaraconditioncompiler.h"

class QLabel;
class QPushButton;
class QTableView;

namespace Hitscope {

class HitsTableModel;
class ScanJob;

/**
 * The rule editor's "Test on selection": scans a few files with one rule file (its unsaved text given through
 * RuleSources) on a ScanJob of its own, and shows the hits in a small table with a summary line, the rules
 * rejected and the files that could not be scanned, and a Cancel button while it runs. Every start() ends with one testFinished().
 */
class RuleTestPanel : public QWidget
{
    Q_OBJECT
public:
    explicit RuleTestPanel(QWidget *parent = nullptr);
    ~RuleTestPanel() override;

    /// Scans `paths` (files, or folders walked as a scan walks them) with the rules of `ruleFile`, read through
    /// `sources`. Ignored while a test runs.
    void start(const QString &ruleFile, const Hitscope::RuleSources &sources, const QByteArrayList &paths);
    bool isRunning() const { return m_running; }

    void setEngine(Hitscope::EngineChoice engine, Hitscope::GpuBackend backend = Hitscope::GpuBackend::Auto);
    void setLaunchParams(const Hitscope::LaunchParams &params);
    void setDevices(const Hitscope::DeviceChoice &devices);
    void setExternals(const Hitscope::YaraExternals &externals);

    HitsTableModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    /// "2 of 3 files matched 3 rules; 1 rule rejected", or why the test failed.
    QString summary() const;
    /// The last test's files that could not be scanned, as "path: reason".
    QStringList problems() const { return m_problems; }
    /// The last test's rejected rules (the front end's and the compiler's).
    const std::vector<Rejection> &rejections() const { return m_rejections; }

public Q_SLOTS:
    void cancel();

Q_SIGNALS:
    void testStarted();
    /// `ok`: the scan ended (with or without hits); false when it failed or was cancelled (summary() says why).
    void testFinished(bool ok);
    /// A hit row was double-clicked (to show its bytes).
    void hitActivated(const Hitscope::HitRow &hit);

private:
    ScanJob *job();
    void onHits(const QVector<Hitscope::HitRow> &rows);
    void onFinished(qint64 files);
    void onFailed(const QString &message);
    void updateDetails();
    void showSummary(const QString &text);
    QString counts(qint64 files) const;

    ScanJob *m_job = nullptr;
    HitsTableModel *m_model = nullptr;
    QTableView *m_table = nullptr;
    QLabel *m_summary = nullptr;
    QLabel *m_details = nullptr;
    QPushButton *m_cancel = nullptr;
    bool m_running = false;
    Hitscope::EngineChoice m_engine = Hitscope::EngineChoice::Auto;
    Hitscope::GpuBackend m_backend = Hitscope::GpuBackend::Auto;
    Hitscope::LaunchParams m_params;
    std::set<QByteArray> m_matchedFiles;
    std::set<QString> m_matchedRules;
    std::vector<Rejection> m_rejections;
    QStringList m_problems;
};

} // namespace Hitscope
