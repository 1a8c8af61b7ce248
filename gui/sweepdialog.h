// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include <QByteArrayList>
#include <QDialog>
#include <QStringList>

#include "engine/launchparams.h"
#include "session/scanjob.h"

class QCPColorMap;
class QCPColorScale;
class QCPItemRect;
class QComboBox;
class QCustomPlot;
class QLabel;
class QMouseEvent;
class QPushButton;
class QSpinBox;

namespace Hitscope {

/// Runs a sample of the targets under a grid of two launch parameters, one cell after the other through a
/// single ScanJob, and shows the throughput of each cell as a heat map. "Use best" emits paramsChosen().
class SweepDialog : public QDialog
{
    Q_OBJECT
public:
    enum class Axis { WorkgroupSize, WorkerGroups, SegmentBytes, BatchBytes };

    SweepDialog(const QStringList &ruleFiles, const QByteArrayList &targets, EngineChoice engine,
                const LaunchParams &baseParams, QWidget *parent = nullptr);
    ~SweepDialog() override;

    static QString axisName(Axis axis);
    static std::vector<int64_t> defaultValues(Axis axis);
    static LaunchParams withValue(LaunchParams params, Axis axis, int64_t value);

    /// Picks the axes; the values default to the full range of each axis unless given.
    void setAxes(Axis x, Axis y, std::vector<int64_t> xValues = {}, std::vector<int64_t> yValues = {});
    void setSampleMiB(int mib);
    /// The GPU backend the cells run on (the main window's choice); Auto by default.
    void setBackend(GpuBackend backend) { m_backend = backend; }

    bool isRunning() const { return m_running; }
    int columns() const { return int(m_xValues.size()); }
    int rows() const { return int(m_yValues.size()); }
    /// Bytes per second of a finished cell; 0 for a cell not (yet) measured.
    double throughput(int column, int row) const;
    QString cellToolTip(int column, int row) const;
    /// The params of the fastest measured cell (the base params when none was measured).
    LaunchParams bestParams() const;
    QPushButton *useBestButton() const { return m_useBest; }

public Q_SLOTS:
    /// Collects the sample and starts the first cell; false (with the reason in the status line) if it cannot.
    bool onStart();
    void onCancel();
    void onUseBest();

Q_SIGNALS:
    void paramsChosen(const Hitscope::LaunchParams &params);
    void sweepFinished();
    void sweepFailed(const QString &message);

protected:
    void closeEvent(QCloseEvent *event) override;
    void reject() override;

private:
    struct Cell
    {
        int64_t bytes = 0;
        double wallMs = 0;
        double throughput = 0;
        bool done = false;
    };

    QByteArrayList collectSample(int64_t limitBytes, QString *error) const;
    void setupPlot();
    void resetGrid();
    void startCell();
    void onBatchFinished(const BatchTelemetry &telemetry);
    void onCellFinished(qint64 bytes, double wallMs);
    void onCellFailed(const QString &message);
    void onPlotMouseMove(QMouseEvent *event);
    void finishSweep(const QString &status);
    void updateBest();
    void updateControls();
    Axis xAxis() const;
    Axis yAxis() const;
    LaunchParams cellParams(int column, int row) const;

    QStringList m_ruleFiles;
    QByteArrayList m_targets;
    EngineChoice m_engine;
    GpuBackend m_backend = GpuBackend::Auto;
    LaunchParams m_base;

    QComboBox *m_xCombo = nullptr;
    QComboBox *m_yCombo = nullptr;
    QSpinBox *m_sampleMiB = nullptr;
    QPushButton *m_start = nullptr;
    QPushButton *m_cancel = nullptr;
    QPushButton *m_useBest = nullptr;
    QLabel *m_status = nullptr;
    QCustomPlot *m_plot = nullptr;
    QCPColorMap *m_map = nullptr;
    QCPColorScale *m_scale = nullptr;
    QCPItemRect *m_bestRect = nullptr;

    ScanJob *m_job = nullptr;
    std::vector<int64_t> m_xValues;
    std::vector<int64_t> m_yValues;
    std::vector<Cell> m_cells; // row-major: row * columns + column
    QByteArrayList m_sample;
    int m_current = -1;
    int m_best = -1;
    bool m_running = false;
    bool m_cancelRequested = false;
};

} // namespace Hitscope
