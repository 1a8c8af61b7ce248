// SPDX-License-Identifier: GPL-3.0-or-later
#include "batchtimeline.h"

#include <algorithm>

#include <QMouseEvent>
#include <QTimer>
#include <QVBoxLayout>

#include "qcustomplotinclude.h"
#include "report/telemetrylog.h"

namespace Hitscope {

namespace {
constexpr int kWindow = 300; // batches kept and shown, as the charts

QColor stageColor(BatchTelemetry::StageId stage)
{
    switch (stage) {
    case BatchTelemetry::Read:
        return QColor(0x29, 0x80, 0xb9);
    case BatchTelemetry::Prepare:
        return QColor(0x95, 0xa5, 0xa6);
    case BatchTelemetry::Scan:
        return QColor(0xd3, 0x54, 0x00);
    case BatchTelemetry::Starts:
        return QColor(0x8e, 0x44, 0xad);
    default:
        return QColor(0x27, 0xae, 0x60);
    }
}
} // namespace

BatchTimeline::BatchTimeline(const TelemetryLog *log, QWidget *parent)
    : QWidget(parent)
    , m_log(log)
{
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("timelinePlot"));
    m_plot->setAntialiasedElements(QCP::aeNone);
    QCPAxis *batches = m_plot->yAxis;
    QCPAxis *time = m_plot->xAxis;
    batches->setLabel(tr("Batch"));
    batches->setRangeReversed(true); // the first batch on top, as a Gantt chart reads
    time->setLabel(tr("ms since the scan started"));
    const QString names[BatchTelemetry::NUM_STAGES] = { tr("read"), tr("prepare"), tr("scan"), tr("starts"),
                                                         tr("resolve") };
    // A batch's stages run one after another, with waits between: each stage is stacked on the gap before it,
    // which is stacked on the stage before that.
    QCPBars *below = nullptr;
    for (int k = 0; k < BatchTelemetry::NUM_STAGES; ++k) {
        for (QCPBars **bars : { &m_gaps[k], &m_stages[k] }) {
            *bars = new QCPBars(batches, time);
            (*bars)->setWidth(0.8);
            (*bars)->setStackingGap(0);
            if (below)
                (*bars)->moveAbove(below);
            below = *bars;
        }
        m_gaps[k]->setPen(Qt::NoPen);
        m_gaps[k]->setBrush(Qt::NoBrush);
        m_gaps[k]->setName(QString());
        m_gaps[k]->removeFromLegend();
        const QColor c = stageColor(BatchTelemetry::StageId(k));
        m_stages[k]->setName(names[k]);
        m_stages[k]->setPen(Qt::NoPen);
        m_stages[k]->setBrush(c);
    }
    // The stages' legend in one row above the bars, not over them.
    m_plot->legend->setVisible(true);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
    m_highlight = new QCPItemRect(m_plot);
    m_highlight->setPen(QPen(QColor(0xf1, 0xc4, 0x0f), 1.5));
    m_highlight->setBrush(QColor(0xf1, 0xc4, 0x0f, 50));
    m_highlight->setVisible(false);

    m_replotTimer = new QTimer(this);
    m_replotTimer->setSingleShot(true);
    m_replotTimer->setInterval(33); // about 30 redraws a second, as the charts
    connect(m_replotTimer, &QTimer::timeout, this, [this] { m_plot->replot(QCustomPlot::rpQueuedReplot); });
    connect(m_plot, &QCustomPlot::mousePress, this, &BatchTimeline::onMousePress);
    connect(log, &TelemetryLog::batchAdded, this, &BatchTimeline::addBatch);
    connect(log, &TelemetryLog::cleared, this, &BatchTimeline::clear);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    setMinimumHeight(140);
    clear();
}

void BatchTimeline::addBatch(const BatchTelemetry &t)
{
    const double key = t.index;
    double end = 0; // where the row's bars reach so far
    for (int k = 0; k < BatchTelemetry::NUM_STAGES; ++k) {
        const BatchTelemetry::Stage &s = t.stages[k];
        const double began = std::max(end, s.began);
        const double ended = std::max(began, s.ended);
        m_gaps[k]->addData(key, began - end);
        m_stages[k]->addData(key, ended - began);
        end = ended;
    }
    m_lastIndex = std::max(m_lastIndex, t.index);
    m_lastEnd = std::max(m_lastEnd, end);
    const double oldest = m_lastIndex - kWindow;
    for (int k = 0; k < BatchTelemetry::NUM_STAGES; ++k) {
        m_gaps[k]->data()->removeBefore(oldest);
        m_stages[k]->data()->removeBefore(oldest);
    }
    // The window's batches, at least a few rows, and their times: from the first one's read to the last end.
    const double first = m_gaps[0]->data()->isEmpty() ? 0 : m_gaps[0]->data()->begin()->value;
    m_plot->yAxis->setRange(std::max(-0.5, m_lastIndex - kWindow + 0.5), std::max(m_lastIndex + 0.5, 4.5));
    m_plot->xAxis->setRange(first, std::max(first + 1, m_lastEnd * 1.02));
    scheduleReplot();
}

void BatchTimeline::clear()
{
    for (int k = 0; k < BatchTelemetry::NUM_STAGES; ++k) {
        m_gaps[k]->data()->clear();
        m_stages[k]->data()->clear();
    }
    m_lastIndex = -1;
    m_lastEnd = 0;
    m_selected = -1;
    m_highlight->setVisible(false);
    m_plot->yAxis->setRange(-0.5, 4.5);
    m_plot->xAxis->setRange(0, 100);
    scheduleReplot();
}

void BatchTimeline::selectBatch(int index)
{
    m_selected = index;
    m_highlight->setVisible(index >= 0);
    if (index >= 0) {
        m_highlight->topLeft->setCoords(m_plot->xAxis->range().lower, index - 0.5);
        m_highlight->bottomRight->setCoords(m_plot->xAxis->range().upper, index + 0.5);
    }
    scheduleReplot();
}

void BatchTimeline::onMousePress(QMouseEvent *event)
{
    const int index = qRound(m_plot->yAxis->pixelToCoord(event->position().y()));
    if (index < 0 || index > m_lastIndex || !m_log->find(index))
        return;
    selectBatch(index);
    Q_EMIT batchSelected(index);
}

void BatchTimeline::scheduleReplot()
{
    if (!m_replotTimer->isActive())
        m_replotTimer->start();
}

} // namespace Hitscope
