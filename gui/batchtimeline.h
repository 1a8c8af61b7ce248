// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

#include "engine/batchtelemetry.h"

class QCPBars;
class QCPItemRect;
class QCustomPlot;
class QMouseEvent;
class QTimer;

namespace Hitscope {

class TelemetryLog;

/**
 * Where the time of each batch went: a row per batch, a bar per stage of its path (read, prepare, scan on the GPU
 * or CPU, starts, resolve) on the scan's clock, so that overlapping batches and the stage that holds the others
 * up show at a glance. Plots what `log` receives, clears with it, keeps the last window of batches. A click on a
 * batch selects it (batchSelected(), and selectBatch() from the other charts).
 */
class BatchTimeline : public QWidget
{
    Q_OBJECT
public:
    explicit BatchTimeline(const TelemetryLog *log, QWidget *parent = nullptr);

    QCustomPlot *plot() const { return m_plot; }
    /// The bars of one stage (for tests): one per batch plotted.
    QCPBars *stageBars(BatchTelemetry::StageId stage) const { return m_stages[stage]; }
    /// The selected batch, or -1.
    int selectedBatch() const { return m_selected; }

public Q_SLOTS:
    /// Highlights the batch's row (-1: none); does not emit batchSelected().
    void selectBatch(int index);

Q_SIGNALS:
    void batchSelected(int index);

private:
    void addBatch(const BatchTelemetry &t);
    void clear();
    void onMousePress(QMouseEvent *event);
    void scheduleReplot();

    const TelemetryLog *m_log;
    QCustomPlot *m_plot = nullptr;
    // Per stage, the gap before it (transparent) and the stage, stacked along the batch's row.
    QCPBars *m_gaps[BatchTelemetry::NUM_STAGES] = {};
    QCPBars *m_stages[BatchTelemetry::NUM_STAGES] = {};
    QCPItemRect *m_highlight = nullptr;
    QTimer *m_replotTimer = nullptr;
    int m_selected = -1;
    int m_lastIndex = -1;
    double m_lastEnd = 0; // the latest end of any stage plotted
};

} // namespace Hitscope
