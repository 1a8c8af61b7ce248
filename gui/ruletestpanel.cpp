// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruletestpanel.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "report/hitstablemodel.h"
#include "resulttable.h"
#include "session/scanjob.h"

namespace Hitscope {

RuleTestPanel::RuleTestPanel(QWidget *parent)
    : QWidget(parent)
{
    // A few files: the engines' own batch and segment sizes, not the main window's, which suit a large scan.
    m_params.batchBytes = 0;
    m_params.segmentBytes = 0;

    m_model = new HitsTableModel(this);
    m_table = makeResultTable(QStringLiteral("testHits"), m_model, this);
    m_table->setColumnHidden(HitsTableModel::LengthColumn, true);
    m_table->setColumnWidth(HitsTableModel::FileColumn, 260);
    m_table->setColumnWidth(HitsTableModel::RuleColumn, 130);
    m_table->setColumnWidth(HitsTableModel::StringColumn, 80);
    m_table->setColumnWidth(HitsTableModel::OffsetColumn, 80);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        if (index.isValid())
            Q_EMIT hitActivated(m_model->hit(index.row()));
    });

    m_summary = new QLabel(tr("Select files, then Test on selection: the edited rules run on them, unsaved."), this);
    m_summary->setObjectName(QStringLiteral("testSummary"));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setWordWrap(true);
    m_details = new QLabel(this);
    m_details->setObjectName(QStringLiteral("testDetails"));
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setWordWrap(true);
    m_details->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("testCancel"));
    m_cancel->setEnabled(false);
    connect(m_cancel, &QPushButton::clicked, this, &RuleTestPanel::cancel);

    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_cancel);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_details);
    layout->addWidget(m_table, 1);
}

RuleTestPanel::~RuleTestPanel()
{
    // The job's destructor stops its thread; its queued signals die with it.
    if (m_job)
        m_job->cancel();
}

void RuleTestPanel::setEngine(EngineChoice engine, GpuBackend backend)
{
    m_engine = engine;
    m_backend = backend;
}

void RuleTestPanel::setLaunchParams(const LaunchParams &params)
{
    m_params = params;
}

void RuleTestPanel::setDevices(const DeviceChoice &devices)
{
    job()->setDevices(devices);
}

void RuleTestPanel::setExternals(const YaraExternals &externals)
{
    job()->setExternals(externals);
}

// Made on first use: a ScanJob starts a thread, which an editor that never tests does not need.
ScanJob *RuleTestPanel::job()
{
    if (m_job)
        return m_job;
    m_job = new ScanJob(this);
    connect(m_job, &ScanJob::hitsAvailable, this, &RuleTestPanel::onHits);
    connect(m_job, &ScanJob::ruleRejected, this,
            [this](const QString &file, int line, const QString &rule, const QString &reason) {
                m_rejections.push_back({ file, line, rule, reason });
                updateDetails();
            });
    connect(m_job, &ScanJob::problemFound, this, [this](const QByteArray &path, const QString &reason) {
        m_problems.push_back(QDir::toNativeSeparators(QFile::decodeName(path)) + QLatin1String(": ") + reason);
        updateDetails();
    });
    connect(m_job, &ScanJob::finished, this, [this](qint64 files) { onFinished(files); });
    connect(m_job, &ScanJob::failed, this, &RuleTestPanel::onFailed);
    return m_job;
}

void RuleTestPanel::start(const QString &ruleFile, const RuleSources &sources, const QByteArrayList &paths)
{
    if (m_running)
        return;
    m_model->clear();
    m_matchedFiles.clear();
    m_matchedRules.clear();
    m_rejections.clear();
    m_problems.clear();
    updateDetails();
    m_running = true;
    m_cancel->setEnabled(true);
    showSummary(paths.size() == 1 ? tr("Testing on 1 selected path…")
                                  : tr("Testing on %1 selected paths…").arg(paths.size()));
    job()->setRuleSources(sources);
    m_job->start({ ruleFile }, paths, WalkOptions(), m_params, m_engine, m_backend);
    Q_EMIT testStarted();
}

void RuleTestPanel::cancel()
{
    if (m_running && m_job)
        m_job->cancel();
}

void RuleTestPanel::onHits(const QVector<HitRow> &rows)
{
    for (const HitRow &row : rows) {
        m_matchedFiles.insert(row.path);
        m_matchedRules.insert(row.rule);
    }
    m_model->appendHits(rows);
}

QString RuleTestPanel::counts(qint64 files) const
{
    // Plain English plurals: "1 of 2 files matched 1 rule" reads better than "2 file(s)" (no translations yet).
    const auto count = [](qint64 n, const QString &one, const QString &many) -> QString {
        return QString::number(n) + QLatin1Char(' ') + (n == 1 ? one : many);
    };
    QString text = tr("%1 of %2 matched %3")
                       .arg(m_matchedFiles.size())
                       .arg(count(files, tr("file"), tr("files")),
                            count(qint64(m_matchedRules.size()), tr("rule"), tr("rules")));
    if (!m_rejections.empty())
        text += QLatin1String("; ") + count(qint64(m_rejections.size()), tr("rule rejected"), tr("rules rejected"));
    if (!m_problems.isEmpty())
        text += QLatin1String("; ") + count(m_problems.size(), tr("problem"), tr("problems"));
    return text;
}

void RuleTestPanel::onFinished(qint64 files)
{
    m_running = false;
    m_cancel->setEnabled(false);
    // Files scanned: those that could not be read are counted as problems, after the rules.
    showSummary(counts(files));
    Q_EMIT testFinished(true);
}

void RuleTestPanel::onFailed(const QString &message)
{
    m_running = false;
    m_cancel->setEnabled(false);
    QString text = message;
    if (!m_rejections.empty())
        text += QLatin1Char(' ') + (m_rejections.size() == 1 ? tr("1 rule rejected.")
                                                              : tr("%1 rules rejected.").arg(m_rejections.size()));
    showSummary(text);
    Q_EMIT testFinished(false);
}

// Which rules were refused and which files could not be scanned, under the summary that counts them.
void RuleTestPanel::updateDetails()
{
    QStringList lines;
    for (const Rejection &r : m_rejections)
        lines.push_back(
            tr("Rejected: %1:%2: rule %3: %4").arg(QFileInfo(r.file).fileName()).arg(r.line).arg(r.rule, r.reason));
    lines += m_problems;
    m_details->setText(lines.join(QLatin1Char('\n')));
    m_details->setVisible(!lines.isEmpty());
}

void RuleTestPanel::showSummary(const QString &text)
{
    m_summary->setText(text);
}

QString RuleTestPanel::summary() const
{
    return m_summary->text();
}

} // namespace Hitscope
