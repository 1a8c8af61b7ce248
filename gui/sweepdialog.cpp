// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweepdialog.h"

#include <atomic>
#include <cmath>
#include <limits>

#include <QCloseEvent>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>

#include "formatting.h"
#include "qcustomplotinclude.h"
#include "scan/filewalker.h"

namespace Hitscope {

namespace {

constexpr int64_t KiB = 1024;
constexpr int64_t MiB = 1024 * 1024;

QString valueText(SweepDialog::Axis axis, int64_t value)
{
    switch (axis) {
    case SweepDialog::Axis::WorkerGroups:
        return value == 0 ? SweepDialog::tr("auto") : QString::number(value);
    case SweepDialog::Axis::SegmentBytes:
    case SweepDialog::Axis::BatchBytes:
        return Format::bytes(value);
    case SweepDialog::Axis::WorkgroupSize:
        break;
    }
    return QString::number(value);
}

QString rateText(double bytesPerSecond)
{
    return SweepDialog::tr("%1/s").arg(Format::bytes(int64_t(bytesPerSecond)));
}

} // namespace

SweepDialog::SweepDialog(const QStringList &ruleFiles, const QByteArrayList &targets, EngineChoice engine,
                         const LaunchParams &baseParams, QWidget *parent)
    : QDialog(parent)
    , m_ruleFiles(ruleFiles)
    , m_targets(targets)
    , m_engine(engine)
    , m_base(baseParams)
    , m_job(new ScanJob(this))
{
    setWindowTitle(tr("Parameter sweep"));

    m_xCombo = new QComboBox(this);
    m_yCombo = new QComboBox(this);
    for (Axis axis : { Axis::WorkgroupSize, Axis::WorkerGroups, Axis::SegmentBytes, Axis::BatchBytes }) {
        m_xCombo->addItem(axisName(axis), int(axis));
        m_yCombo->addItem(axisName(axis), int(axis));
    }
    m_sampleMiB = new QSpinBox(this);
    m_sampleMiB->setRange(1, 4096);
    m_sampleMiB->setValue(64);
    m_sampleMiB->setSuffix(tr(" MiB"));
    m_sampleMiB->setToolTip(tr("Each cell scans the first files of the targets, up to this many bytes"));

    auto *form = new QFormLayout;
    form->addRow(tr("Horizontal axis:"), m_xCombo);
    form->addRow(tr("Vertical axis:"), m_yCombo);
    form->addRow(tr("Sample:"), m_sampleMiB);

    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(480, 320);
    setupPlot();

    m_status = new QLabel(this);
    m_status->setWordWrap(true);

    auto *buttons = new QDialogButtonBox(this);
    m_start = buttons->addButton(tr("Start"), QDialogButtonBox::ActionRole);
    m_cancel = buttons->addButton(tr("Cancel sweep"), QDialogButtonBox::ActionRole);
    m_useBest = buttons->addButton(tr("Use best"), QDialogButtonBox::ActionRole);
    m_useBest->setToolTip(tr("Make the fastest cell's parameters the current launch parameters"));
    buttons->addButton(QDialogButtonBox::Close);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_status);
    layout->addWidget(buttons);

    connect(m_start, &QPushButton::clicked, this, &SweepDialog::onStart);
    connect(m_cancel, &QPushButton::clicked, this, &SweepDialog::onCancel);
    connect(m_useBest, &QPushButton::clicked, this, &SweepDialog::onUseBest);
    connect(buttons, &QDialogButtonBox::rejected, this, &SweepDialog::reject);
    connect(m_job, &ScanJob::batchFinished, this, &SweepDialog::onBatchFinished);
    connect(m_job, &ScanJob::finished, this,
            [this](qint64, qint64 bytes, qint64, double wallMs) { onCellFinished(bytes, wallMs); });
    connect(m_job, &ScanJob::failed, this, &SweepDialog::onCellFailed);
    connect(m_plot, &QCustomPlot::mouseMove, this, &SweepDialog::onPlotMouseMove);
    const auto axesEdited = [this] {
        m_xValues = defaultValues(xAxis());
        m_yValues = defaultValues(yAxis());
        resetGrid();
    };
    connect(m_xCombo, &QComboBox::currentIndexChanged, this, axesEdited);
    connect(m_yCombo, &QComboBox::currentIndexChanged, this, axesEdited);

    // The classic pair: how wide a workgroup, how many of them.
    setAxes(Axis::WorkgroupSize, Axis::WorkerGroups);
}

SweepDialog::~SweepDialog()
{
    if (m_running)
        m_job->cancel();
}

QString SweepDialog::axisName(Axis axis)
{
    switch (axis) {
    case Axis::WorkgroupSize:
        return tr("Workgroup size");
    case Axis::WorkerGroups:
        return tr("Worker groups");
    case Axis::SegmentBytes:
        return tr("Segment size");
    case Axis::BatchBytes:
        return tr("Batch size");
    }
    return {};
}

std::vector<int64_t> SweepDialog::defaultValues(Axis axis)
{
    switch (axis) {
    case Axis::WorkgroupSize:
        return { 32, 64, 128, 256, 512 };
    case Axis::WorkerGroups:
        return { 0, 1, 4, 16, 64 };
    case Axis::SegmentBytes:
        return { 1 * KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB };
    case Axis::BatchBytes:
        return { 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB };
    }
    return {};
}

LaunchParams SweepDialog::withValue(LaunchParams params, Axis axis, int64_t value)
{
    switch (axis) {
    case Axis::WorkgroupSize:
        params.workgroupSize = int(value);
        break;
    case Axis::WorkerGroups:
        params.workerGroups = int(value);
        break;
    case Axis::SegmentBytes:
        params.segmentBytes = value;
        break;
    case Axis::BatchBytes:
        params.batchBytes = value;
        break;
    }
    return params;
}

void SweepDialog::setAxes(Axis x, Axis y, std::vector<int64_t> xValues, std::vector<int64_t> yValues)
{
    {
        const QSignalBlocker bx(m_xCombo);
        const QSignalBlocker by(m_yCombo);
        m_xCombo->setCurrentIndex(m_xCombo->findData(int(x)));
        m_yCombo->setCurrentIndex(m_yCombo->findData(int(y)));
    }
    m_xValues = xValues.empty() ? defaultValues(x) : std::move(xValues);
    m_yValues = yValues.empty() ? defaultValues(y) : std::move(yValues);
    resetGrid();
}

void SweepDialog::setSampleMiB(int mib)
{
    m_sampleMiB->setValue(mib);
}

SweepDialog::Axis SweepDialog::xAxis() const
{
    return Axis(m_xCombo->currentData().toInt());
}

SweepDialog::Axis SweepDialog::yAxis() const
{
    return Axis(m_yCombo->currentData().toInt());
}

LaunchParams SweepDialog::cellParams(int column, int row) const
{
    return withValue(withValue(m_base, xAxis(), m_xValues[size_t(column)]), yAxis(), m_yValues[size_t(row)]);
}

double SweepDialog::throughput(int column, int row) const
{
    if (column < 0 || row < 0 || column >= columns() || row >= rows())
        return 0;
    return m_cells[size_t(row * columns() + column)].throughput;
}

QString SweepDialog::cellToolTip(int column, int row) const
{
    if (column < 0 || row < 0 || column >= columns() || row >= rows())
        return {};
    const Cell &cell = m_cells[size_t(row * columns() + column)];
    QString text = axisName(xAxis()) + QLatin1String(": ") + valueText(xAxis(), m_xValues[size_t(column)])
        + QLatin1Char('\n') + axisName(yAxis()) + QLatin1String(": ") + valueText(yAxis(), m_yValues[size_t(row)])
        + QLatin1Char('\n');
    if (!cell.done)
        return text + tr("not measured");
    text += tr("%1 in %2: %3").arg(Format::bytes(cell.bytes), Format::duration(cell.wallMs), rateText(cell.throughput));
    if (row * columns() + column == m_best)
        text += QLatin1Char('\n') + tr("fastest cell");
    return text;
}

LaunchParams SweepDialog::bestParams() const
{
    if (m_best < 0)
        return m_base;
    return cellParams(m_best % columns(), m_best / columns());
}

void SweepDialog::setupPlot()
{
    m_plot->axisRect()->setupFullAxesBox(true);
    m_map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    m_scale = new QCPColorScale(m_plot);
    m_plot->plotLayout()->addElement(0, 1, m_scale);
    m_scale->setType(QCPAxis::atRight);
    m_scale->axis()->setLabel(tr("Throughput (MiB/s)"));
    m_map->setColorScale(m_scale);
    QCPColorGradient gradient(QCPColorGradient::gpThermal);
    gradient.setNanHandling(QCPColorGradient::nhTransparent); // cells not measured yet stay blank
    m_map->setGradient(gradient);
    m_map->setInterpolate(false);
    // Keep the plot's margins and the scale's in step, so the scale lines up with the map.
    auto *group = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);

    m_bestRect = new QCPItemRect(m_plot);
    m_bestRect->setPen(QPen(Qt::cyan, 3));
    m_bestRect->setBrush(Qt::NoBrush);
    m_bestRect->setVisible(false);
}

void SweepDialog::resetGrid()
{
    m_cells.assign(m_xValues.size() * m_yValues.size(), Cell{});
    m_best = -1;

    const int nx = columns();
    const int ny = rows();
    m_map->data()->setSize(nx, ny);
    m_map->data()->setRange(QCPRange(0, std::max(0, nx - 1)), QCPRange(0, std::max(0, ny - 1)));
    m_map->data()->fill(std::numeric_limits<double>::quiet_NaN());

    const auto ticker = [](Axis axis, const std::vector<int64_t> &values) {
        QSharedPointer<QCPAxisTickerText> t(new QCPAxisTickerText);
        for (size_t i = 0; i < values.size(); ++i)
            t->addTick(double(i), valueText(axis, values[i]));
        return t;
    };
    m_plot->xAxis->setTicker(ticker(xAxis(), m_xValues));
    m_plot->yAxis->setTicker(ticker(yAxis(), m_yValues));
    m_plot->xAxis->setLabel(axisName(xAxis()));
    m_plot->yAxis->setLabel(axisName(yAxis()));
    m_plot->xAxis->setRange(-0.5, nx - 0.5);
    m_plot->yAxis->setRange(-0.5, ny - 0.5);
    m_scale->setDataRange(QCPRange(0, 1));
    m_bestRect->setVisible(false);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    updateControls();
}

QByteArrayList SweepDialog::collectSample(int64_t limitBytes, QString *error) const
{
    // Whole files, in walk order, until the limit: the sample stays the same for every cell.
    QByteArrayList files;
    int64_t total = 0;
    std::atomic_bool full = false;
    FileWalker walker;
    walker.walk(
        m_targets,
        [&](const FileEntry &entry) {
            if (entry.size <= 0 || full)
                return;
            files.push_back(entry.path);
            total += entry.size;
            if (total >= limitBytes)
                full = true;
        },
        [](const FileProblem &) {}, &full);
    if (files.isEmpty())
        *error = tr("The targets hold no readable, non-empty file to sample.");
    return files;
}

bool SweepDialog::onStart()
{
    if (m_running)
        return false;
    if (m_ruleFiles.isEmpty() || m_targets.isEmpty()) {
        m_status->setText(m_ruleFiles.isEmpty() ? tr("No rule set is enabled.") : tr("There is nothing to scan."));
        return false;
    }
    QString error;
    m_sample = collectSample(int64_t(m_sampleMiB->value()) * MiB, &error);
    if (m_sample.isEmpty()) {
        m_status->setText(error);
        return false;
    }
    resetGrid();
    m_running = true;
    m_cancelRequested = false;
    m_current = 0;
    updateControls();
    startCell();
    return true;
}

void SweepDialog::startCell()
{
    const int column = m_current % columns();
    const int row = m_current / columns();
    m_status->setText(tr("Cell %1 of %2: %3 %4, %5 %6")
                          .arg(m_current + 1)
                          .arg(m_cells.size())
                          .arg(axisName(xAxis()), valueText(xAxis(), m_xValues[size_t(column)]),
                               axisName(yAxis()), valueText(yAxis(), m_yValues[size_t(row)])));
    m_job->start(m_ruleFiles, m_sample, {}, cellParams(column, row), m_engine, m_backend);
}

void SweepDialog::onBatchFinished(const BatchTelemetry &telemetry)
{
    if (!m_running || m_current < 0)
        return;
    Cell &cell = m_cells[size_t(m_current)];
    cell.bytes += telemetry.bytes;
    cell.wallMs += telemetry.wallMs;
}

void SweepDialog::onCellFinished(qint64 bytes, double wallMs)
{
    if (!m_running)
        return;
    Cell &cell = m_cells[size_t(m_current)];
    // Per-batch wall times leave out rule compilation and the walk, which no launch parameter changes;
    // a run without telemetry falls back to the whole run's figures.
    if (cell.bytes <= 0 || cell.wallMs <= 0) {
        cell.bytes = bytes;
        cell.wallMs = wallMs;
    }
    cell.wallMs = std::max(cell.wallMs, 1e-3); // a tiny sample can finish within the clock's resolution
    cell.throughput = double(cell.bytes) / (cell.wallMs / 1000.0);
    cell.done = true;
    m_map->data()->setCell(m_current % columns(), m_current / columns(), cell.throughput / double(MiB));
    updateBest();

    if (m_cancelRequested) {
        finishSweep(tr("Sweep stopped."));
        return;
    }
    if (++m_current >= int(m_cells.size())) {
        finishSweep(tr("Sweep finished: fastest cell at %1.").arg(rateText(m_cells[size_t(m_best)].throughput)));
        Q_EMIT sweepFinished();
        return;
    }
    // Queued: the job accepts a new start only once its finished() has been delivered.
    QMetaObject::invokeMethod(this, [this] {
        if (m_running && !m_cancelRequested)
            startCell();
        else if (m_running)
            finishSweep(tr("Sweep stopped."));
    }, Qt::QueuedConnection);
}

void SweepDialog::onCellFailed(const QString &message)
{
    if (!m_running)
        return;
    const bool stopped = m_cancelRequested;
    finishSweep(stopped ? tr("Sweep stopped.") : tr("Sweep failed: %1").arg(message));
    if (!stopped)
        qWarning("Hitscope sweep failed: %s", qPrintable(message));
    Q_EMIT sweepFailed(stopped ? tr("Sweep stopped.") : message);
}

void SweepDialog::finishSweep(const QString &status)
{
    m_running = false;
    m_current = -1;
    m_status->setText(status);
    updateControls();
}

void SweepDialog::updateBest()
{
    m_best = -1;
    double lo = std::numeric_limits<double>::max();
    double hi = 0;
    for (size_t i = 0; i < m_cells.size(); ++i) {
        if (!m_cells[i].done)
            continue;
        lo = std::min(lo, m_cells[i].throughput);
        hi = std::max(hi, m_cells[i].throughput);
        if (m_best < 0 || m_cells[i].throughput > m_cells[size_t(m_best)].throughput)
            m_best = int(i);
    }
    if (m_best >= 0) {
        lo /= double(MiB);
        hi /= double(MiB);
        m_scale->setDataRange(QCPRange(lo, hi > lo ? hi : lo + 1));
        const double x = m_best % columns();
        const double y = m_best / columns();
        m_bestRect->topLeft->setCoords(x - 0.5, y + 0.5);
        m_bestRect->bottomRight->setCoords(x + 0.5, y - 0.5);
        m_bestRect->setVisible(true);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    updateControls();
}

void SweepDialog::updateControls()
{
    m_start->setEnabled(!m_running);
    m_cancel->setEnabled(m_running);
    m_useBest->setEnabled(!m_running && m_best >= 0);
    m_xCombo->setEnabled(!m_running);
    m_yCombo->setEnabled(!m_running);
    m_sampleMiB->setEnabled(!m_running);
}

void SweepDialog::onCancel()
{
    if (!m_running)
        return;
    m_cancelRequested = true;
    m_status->setText(tr("Stopping after the current batch…"));
    m_job->cancel();
}

void SweepDialog::onUseBest()
{
    if (m_best < 0)
        return;
    Q_EMIT paramsChosen(bestParams());
}

void SweepDialog::onPlotMouseMove(QMouseEvent *event)
{
    int column = 0;
    int row = 0;
    const QPointF pos = event->position();
    m_map->data()->coordToCell(m_plot->xAxis->pixelToCoord(pos.x()), m_plot->yAxis->pixelToCoord(pos.y()), &column,
                               &row);
    const QString text = cellToolTip(column, row);
    if (text.isEmpty() || !m_plot->axisRect()->rect().contains(pos.toPoint()))
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
}

void SweepDialog::closeEvent(QCloseEvent *event)
{
    onCancel();
    QDialog::closeEvent(event);
}

void SweepDialog::reject()
{
    onCancel();
    QDialog::reject();
}

} // namespace Hitscope
