// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QElapsedTimer>
#include <QVector>
#include <QWidget>

#include "engine/batchtelemetry.h"

class QCPAbstractItem;
class QCPAxisRect;
class QCPGraph;
class QCPLegend;
class QCustomPlot;
class QMouseEvent;
class QTimer;

namespace Hitscope {

class TelemetryLog;

/**
 * Live per-batch charts, one point per batch, stacked on a shared batch axis: occupancy, bytes moved (up and
 * down), hit density, throughput, GPU and wall time. Scrolls over the last window of batches, marks the batches
 * where launch parameters changed, and shows a batch's numbers as a tooltip. Bursts of batches are coalesced into
 * one queued replot, at most about 30 per second. Plots what `log` (the window's one store of a scan's
 * telemetry) receives, and clears with it.
 */
class BatchCharts : public QWidget
{
    Q_OBJECT
public:
    enum Metric { Occupancy, BytesUp, BytesDown, HitDensity, Throughput, GpuTime, WallTime, NUM_METRICS };

    explicit BatchCharts(const TelemetryLog *log, QWidget *parent = nullptr);

    /// Batches plotted since the last clear() (the plot itself keeps only the scrolling window).
    int pointCount() const { return m_points; }
    int markerCount() const { return m_markerCount; }
    QCPGraph *graph(Metric metric) const { return m_graphs[metric]; }
    /// The series of the device in that slot (BatchTelemetry::deviceSlot; one per device of a --devices scan),
    /// null until it ran a batch. Slot 0's is graph(metric).
    QCPGraph *graph(Metric metric, int deviceSlot) const;
    QCustomPlot *plot() const { return m_plot; }

    /// Asks for OpenGL drawing (off by default). Returns whether the plot now draws with OpenGL; false, with
    /// `why` set when asked for, where the platform has no OpenGL or QCustomPlot was built without it: the plot
    /// then keeps drawing in software.
    bool setOpenGl(bool on, QString *why = nullptr);
    bool openGl() const;
    /// The selected batch, or -1.
    int selectedBatch() const { return m_selected; }

public Q_SLOTS:
    /// Marks the batch in every panel (-1: none); does not emit batchSelected().
    void selectBatch(int index);

Q_SIGNALS:
    /// A click on a batch in any panel.
    void batchSelected(int index);

protected:
    void changeEvent(QEvent *event) override;

private:
    struct Marker
    {
        double key;
        QVector<QCPAbstractItem *> items;
    };

    void addBatch(const BatchTelemetry &telemetry);
    void clear();
    QCPAxisRect *addPanel(const QString &title);
    QCPGraph *graphFor(Metric metric, int deviceSlot);
    QCPGraph *addGraph(QCPAxisRect *rect, const QString &name, const QColor &color);
    void addMarker(double key);
    void scheduleReplot();
    void replotNow();
    void updateRanges();
    void applyPalette();
    void onMouseMove(QMouseEvent *event);

    const TelemetryLog *m_log;
    QCustomPlot *m_plot = nullptr;
    QVector<QCPAxisRect *> m_rects;
    QCPGraph *m_graphs[NUM_METRICS] = {};
    QVector<QVector<QCPGraph *>> m_deviceGraphs; // slot 1 on, per metric (null until that device ran a batch)
    QVector<QCPLegend *> m_deviceLegends;        // made for those series in panels that had none
    QVector<Marker> m_markers;
    QVector<QCPAbstractItem *> m_selection; // a line per panel at the selected batch
    int m_selected = -1;
    QTimer *m_replotTimer = nullptr;
    QElapsedTimer m_sinceReplot;
    double m_lastKey = -1;
    int m_points = 0;
    int m_markerCount = 0;
};

} // namespace Hitscope
