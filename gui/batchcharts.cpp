// SPDX-License-Identifier: GPL-3.0-or-later
#include "batchcharts.h"

#include <algorithm>

#include <QEvent>
#include <QGuiApplication>
#include <QTimer>
#include <QtGui/private/qguiapplication_p.h>
#include <qpa/qplatformintegration.h>
#include <QToolTip>
#include <QVBoxLayout>

#include "formatting.h"
#include "qcustomplotinclude.h"
#include "report/telemetrylog.h"

namespace Hitscope {

namespace {

constexpr double kWindow = 300;   // batches kept and shown
constexpr double kMinSpan = 20;   // the axis never shows fewer batches than this
constexpr int kMinReplotMs = 33;  // about 30 Hz

const QColor kMarkerColor(0xe6, 0x7e, 0x22);

} // namespace

BatchCharts::BatchCharts(const TelemetryLog *log, QWidget *parent)
    : QWidget(parent)
    , m_log(log)
{
    connect(log, &TelemetryLog::batchAdded, this, &BatchCharts::addBatch);
    connect(log, &TelemetryLog::cleared, this, &BatchCharts::clear);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("batchPlot"));
    m_plot->setMouseTracking(true);
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setAntialiasedElements(QCP::aeNone);
    m_plot->plotLayout()->clear();
    m_plot->plotLayout()->setRowSpacing(0);

    auto *margins = new QCPMarginGroup(m_plot);
    QCPAxisRect *occupancy = addPanel(tr("Occupancy %"));
    QCPAxisRect *moved = addPanel(tr("Moved MiB"));
    QCPAxisRect *density = addPanel(tr("Hits/MiB"));
    QCPAxisRect *throughput = addPanel(tr("GB/s"));
    QCPAxisRect *time = addPanel(tr("Time ms"));
    for (QCPAxisRect *rect : std::as_const(m_rects))
        rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);

    m_graphs[Occupancy] = addGraph(occupancy, tr("occupancy"), QColor(0x29, 0x80, 0xb9));
    m_graphs[BytesUp] = addGraph(moved, tr("up (uploaded)"), QColor(0x8e, 0x44, 0xad));
    m_graphs[BytesDown] = addGraph(moved, tr("down (read back)"), QColor(0x16, 0xa0, 0x85));
    m_graphs[HitDensity] = addGraph(density, tr("hit density"), QColor(0xc0, 0x39, 0x2b));
    m_graphs[Throughput] = addGraph(throughput, tr("throughput"), QColor(0x27, 0xae, 0x60));
    m_graphs[GpuTime] = addGraph(time, tr("GPU"), QColor(0xd3, 0x54, 0x00));
    m_graphs[WallTime] = addGraph(time, tr("wall"), QColor(0x7f, 0x8c, 0x8d));

    // Legends only where a panel holds two series.
    for (QCPAxisRect *rect : {moved, time}) {
        auto *legend = new QCPLegend;
        rect->insetLayout()->addElement(legend, Qt::AlignTop | Qt::AlignRight);
        legend->setLayer(QStringLiteral("legend"));
        legend->setIconSize(14, 8);
        legend->setRowSpacing(-2);
        legend->setBorderPen(Qt::NoPen);
        legend->setBrush(QColor(255, 255, 255, 170));
        for (QCPGraph *g : m_graphs) {
            if (g->keyAxis()->axisRect() == rect)
                legend->addItem(new QCPPlottableLegendItem(legend, g));
        }
    }

    // Only the bottom panel labels the shared batch axis.
    for (int i = 0; i < m_rects.size(); ++i) {
        QCPAxis *x = m_rects[i]->axis(QCPAxis::atBottom);
        const bool last = i == m_rects.size() - 1;
        x->setTickLabels(last);
        if (last)
            x->setLabel(tr("Batch"));
    }

    m_replotTimer = new QTimer(this);
    m_replotTimer->setSingleShot(true);
    connect(m_replotTimer, &QTimer::timeout, this, &BatchCharts::replotNow);
    connect(m_plot, &QCustomPlot::mouseMove, this, &BatchCharts::onMouseMove);
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent *event) {
        QCPAxisRect *rect = m_plot->axisRectAt(event->position());
        if (!rect)
            return;
        const int index = qRound(rect->axis(QCPAxis::atBottom)->pixelToCoord(event->position().x()));
        if (!m_log->find(index))
            return;
        selectBatch(index);
        Q_EMIT batchSelected(index);
    });
    m_sinceReplot.start();

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);

    applyPalette();
    updateRanges();
    m_plot->replot();
}

void BatchCharts::selectBatch(int index)
{
    if (m_selection.isEmpty()) {
        for (QCPAxisRect *rect : std::as_const(m_rects)) {
            auto *line = new QCPItemStraightLine(m_plot);
            line->setClipAxisRect(rect);
            for (QCPItemPosition *p : { line->point1, line->point2 })
                p->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            line->setPen(QPen(QColor(0xf1, 0xc4, 0x0f), 2));
            m_selection.push_back(line);
        }
    }
    m_selected = index;
    for (QCPAbstractItem *item : std::as_const(m_selection)) {
        auto *line = static_cast<QCPItemStraightLine *>(item);
        line->setVisible(index >= 0);
        line->point1->setCoords(index, 0);
        line->point2->setCoords(index, 1);
    }
    scheduleReplot();
}

QCPGraph *BatchCharts::graph(Metric metric, int deviceSlot) const
{
    if (deviceSlot <= 0)
        return m_graphs[metric];
    return deviceSlot <= m_deviceGraphs.size() ? m_deviceGraphs[deviceSlot - 1][metric] : nullptr;
}

QCPGraph *BatchCharts::graphFor(Metric metric, int deviceSlot)
{
    if (deviceSlot <= 0)
        return m_graphs[metric];
    while (m_deviceGraphs.size() < deviceSlot)
        m_deviceGraphs.push_back(QVector<QCPGraph *>(NUM_METRICS, nullptr));
    QCPGraph *&g = m_deviceGraphs[deviceSlot - 1][metric];
    if (g)
        return g;
    const QCPGraph *first = m_graphs[metric];
    QCPAxisRect *rect = first->keyAxis()->axisRect();
    // The first device's colour, shaded per device, and a marker shape of its own.
    const QColor color = first->pen().color().darker(100 + 40 * deviceSlot);
    g = addGraph(rect, tr("%1, device %2").arg(first->name()).arg(deviceSlot), color);
    static const QCPScatterStyle::ScatterShape shapes[] = { QCPScatterStyle::ssSquare, QCPScatterStyle::ssTriangle,
                                                            QCPScatterStyle::ssDiamond, QCPScatterStyle::ssCross };
    g->setScatterStyle(QCPScatterStyle(shapes[(deviceSlot - 1) % 4], color, color, 5));
    QCPLegend *legend = nullptr;
    for (int i = 0; i < rect->insetLayout()->elementCount() && !legend; ++i)
        legend = qobject_cast<QCPLegend *>(rect->insetLayout()->elementAt(i));
    if (!legend) {
        legend = new QCPLegend;
        rect->insetLayout()->addElement(legend, Qt::AlignTop | Qt::AlignRight);
        legend->setLayer(QStringLiteral("legend"));
        legend->setIconSize(14, 8);
        legend->setBorderPen(Qt::NoPen);
        legend->setBrush(QColor(255, 255, 255, 170));
        legend->addItem(new QCPPlottableLegendItem(legend, m_graphs[metric]));
        m_deviceLegends.push_back(legend);
    }
    legend->addItem(new QCPPlottableLegendItem(legend, g));
    return g;
}

QCPAxisRect *BatchCharts::addPanel(const QString &title)
{
    auto *rect = new QCPAxisRect(m_plot);
    rect->setupFullAxesBox(false);
    rect->axis(QCPAxis::atTop)->setVisible(false);
    rect->axis(QCPAxis::atRight)->setVisible(false);
    rect->axis(QCPAxis::atLeft)->setLabel(title);
    rect->axis(QCPAxis::atLeft)->ticker()->setTickCount(3);
    rect->setRangeDrag({});
    rect->setRangeZoom({});
    m_plot->plotLayout()->addElement(int(m_rects.size()), 0, rect);
    m_rects.push_back(rect);
    return rect;
}

QCPGraph *BatchCharts::addGraph(QCPAxisRect *rect, const QString &name, const QColor &color)
{
    QCPGraph *g = m_plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    g->setName(name);
    // Thin, opaque, no fills: cheap to draw for dense series.
    g->setPen(QPen(color, 1.5));
    g->setLineStyle(QCPGraph::lsLine);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 4));
    return g;
}

bool BatchCharts::setOpenGl(bool on, QString *why)
{
    if (!on) {
        if (m_plot->openGl())
            m_plot->setOpenGl(false);
        return false;
    }
    // QCustomPlot makes a context of its own; on a platform without OpenGL (offscreen, minimal) that is not
    // worth trying.
    QPlatformIntegration *platform = QGuiApplicationPrivate::platformIntegration();
    if (!platform || !platform->hasCapability(QPlatformIntegration::OpenGL)) {
        if (why)
            *why = tr("the %1 platform offers no OpenGL").arg(QGuiApplication::platformName());
        return false;
    }
    if (!m_plot->openGl())
        m_plot->setOpenGl(true);
    if (!m_plot->openGl()) {
        // setOpenGl() fell back to software: no context, or a QCustomPlot built without QCUSTOMPLOT_USE_OPENGL
        // (as Debian's is).
        if (why)
            *why = tr("QCustomPlot could not make an OpenGL context (or was built without OpenGL support)");
        return false;
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    return true;
}

bool BatchCharts::openGl() const
{
    return m_plot->openGl();
}

void BatchCharts::addBatch(const BatchTelemetry &t)
{
    const double key = t.index;
    constexpr double mib = 1 << 20;
    // A series per device: which device ran which batch, and how each does.
    const int slot = t.deviceSlot;
    graphFor(Occupancy, slot)->addData(key, t.occupancy * 100);
    graphFor(BytesUp, slot)->addData(key, double(t.bytesUploadedData + t.bytesUploadedTables) / mib);
    graphFor(BytesDown, slot)->addData(key, double(t.bytesReadBack) / mib);
    graphFor(HitDensity, slot)->addData(key, t.hitDensity());
    graphFor(Throughput, slot)->addData(key, t.throughputGBs());
    graphFor(GpuTime, slot)->addData(key, t.gpuMs);
    graphFor(WallTime, slot)->addData(key, t.wallMs);
    if (t.paramsChanged && m_points > 0)
        addMarker(key);
    m_lastKey = std::max(m_lastKey, key);
    ++m_points;

    const double oldest = m_lastKey - kWindow;
    for (QCPGraph *g : m_graphs)
        g->data()->removeBefore(oldest);
    for (const auto &row : std::as_const(m_deviceGraphs))
        for (QCPGraph *g : row)
            if (g)
                g->data()->removeBefore(oldest);
    while (!m_markers.isEmpty() && m_markers.first().key < oldest) {
        for (QCPAbstractItem *item : std::as_const(m_markers.first().items))
            m_plot->removeItem(item);
        m_markers.removeFirst();
    }
    scheduleReplot();
}

void BatchCharts::clear()
{
    for (QCPGraph *g : m_graphs)
        g->data()->clear();
    // The next scan may run on other devices.
    for (const auto &row : std::as_const(m_deviceGraphs)) {
        for (QCPGraph *g : row) {
            if (!g)
                continue;
            // Legends of our own (inset in a panel) are not the plot's: their items go first.
            QCPLayoutInset *inset = g->keyAxis()->axisRect()->insetLayout();
            for (int i = 0; i < inset->elementCount(); ++i)
                if (auto *legend = qobject_cast<QCPLegend *>(inset->elementAt(i)))
                    legend->removeItem(legend->itemWithPlottable(g));
            m_plot->removeGraph(g);
        }
    }
    m_deviceGraphs.clear();
    for (QCPLegend *legend : std::as_const(m_deviceLegends))
        legend->layout()->remove(legend);
    m_deviceLegends.clear();
    for (const Marker &m : std::as_const(m_markers)) {
        for (QCPAbstractItem *item : m.items)
            m_plot->removeItem(item);
    }
    m_markers.clear();
    selectBatch(-1);
    m_lastKey = -1;
    m_points = 0;
    m_markerCount = 0;
    scheduleReplot();
}

void BatchCharts::addMarker(double key)
{
    Marker marker{key, {}};
    for (QCPAxisRect *rect : std::as_const(m_rects)) {
        auto *line = new QCPItemStraightLine(m_plot);
        line->setClipAxisRect(rect);
        line->setPen(QPen(kMarkerColor, 1, Qt::DashLine));
        for (QCPItemPosition *p : {line->point1, line->point2}) {
            p->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            p->setTypeY(QCPItemPosition::ptAxisRectRatio);
            p->setAxisRect(rect);
        }
        line->point1->setCoords(key, 0);
        line->point2->setCoords(key, 1);
        marker.items.push_back(line);
    }
    auto *label = new QCPItemText(m_plot);
    QCPAxisRect *top = m_rects.first();
    label->setClipAxisRect(top);
    label->position->setAxes(top->axis(QCPAxis::atBottom), top->axis(QCPAxis::atLeft));
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setAxisRect(top);
    label->position->setCoords(key, 0);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setPadding(QMargins(3, 1, 3, 1));
    label->setColor(kMarkerColor);
    label->setText(tr("params changed"));
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 0.85);
    label->setFont(f);
    marker.items.push_back(label);
    m_markers.push_back(marker);
    ++m_markerCount;
}

void BatchCharts::scheduleReplot()
{
    if (m_replotTimer->isActive())
        return;
    // Allow at least twice the last replot's cost between replots, so a slow machine is not saturated.
    const int budget = std::max(kMinReplotMs, int(2 * m_plot->replotTime()));
    m_replotTimer->start(std::max<qint64>(0, budget - m_sinceReplot.elapsed()));
}

void BatchCharts::replotNow()
{
    updateRanges();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    m_sinceReplot.restart();
}

void BatchCharts::updateRanges()
{
    const double upper = std::max(m_lastKey, kMinSpan - 1) + 0.5;
    const QCPRange keys(std::max(-0.5, upper - kWindow), upper);
    for (QCPAxisRect *rect : std::as_const(m_rects))
        rect->axis(QCPAxis::atBottom)->setRange(keys);
    for (QCPAxisRect *rect : std::as_const(m_rects)) {
        double top = 0;
        const QList<QCPGraph *> graphs = rect->graphs();
        for (QCPGraph *g : graphs) {
            bool found = false;
            const QCPRange r = g->getValueRange(found, QCP::sdBoth, keys);
            if (found)
                top = std::max(top, r.upper);
        }
        rect->axis(QCPAxis::atLeft)->setRange(0, top > 0 ? top * 1.15 : 1);
    }
}

void BatchCharts::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void BatchCharts::applyPalette()
{
    const QPalette pal = palette();
    const QColor fg = pal.color(QPalette::WindowText);
    QColor grid = pal.color(QPalette::Mid);
    grid.setAlpha(90);
    m_plot->setBackground(pal.brush(QPalette::Base));
    for (QCPAxisRect *rect : std::as_const(m_rects)) {
        rect->setBackground(pal.brush(QPalette::Base));
        for (QCPAxis *axis : rect->axes()) {
            axis->setBasePen(QPen(fg, 1));
            axis->setTickPen(QPen(fg, 1));
            axis->setSubTickPen(QPen(fg, 1));
            axis->setTickLabelColor(fg);
            axis->setLabelColor(fg);
            axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
            axis->grid()->setZeroLinePen(Qt::NoPen);
        }
    }
}

void BatchCharts::onMouseMove(QMouseEvent *event)
{
    QCPAxisRect *rect = m_plot->axisRectAt(event->position());
    if (!rect || m_log->batches().isEmpty()) {
        QToolTip::hideText();
        return;
    }
    const int index = qRound(rect->axis(QCPAxis::atBottom)->pixelToCoord(event->position().x()));
    const BatchTelemetry *found = index >= m_lastKey - kWindow ? m_log->find(index) : nullptr;
    if (!found) {
        QToolTip::hideText();
        return;
    }
    const BatchTelemetry &t = *found;
    QString text = tr("<b>Batch %1</b>%2<br>%3 files, %4 (%5 segments)<br>"
                      "Occupancy: %6%<br>Up: %7, down: %8<br>Hits: %9 (%10 per MiB)<br>"
                      "Throughput: %11 GB/s<br>GPU: %12 ms, wall: %13 ms<br>%14 %15")
                       .arg(t.index)
                       .arg(t.paramsChanged ? tr(" — <span style='color:#e67e22'>params changed</span>") : QString())
                       .arg(t.files)
                       .arg(Format::bytes(t.bytes))
                       .arg(t.segments)
                       .arg(t.occupancy * 100, 0, 'f', 1)
                       .arg(Format::bytes(t.bytesUploadedData + t.bytesUploadedTables))
                       .arg(Format::bytes(t.bytesReadBack))
                       .arg(t.hits)
                       .arg(t.hitDensity(), 0, 'f', 2)
                       .arg(t.throughputGBs(), 0, 'f', 3)
                       .arg(t.gpuMs, 0, 'f', 2)
                       .arg(t.wallMs, 0, 'f', 2)
                       .arg(t.engine.toHtmlEscaped(), t.backend.toHtmlEscaped());
    if (t.workgroupSize > 0)
        text += tr("<br>Workgroup size %1, %2 groups").arg(t.workgroupSize).arg(t.workerGroups);
    QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
}

} // namespace Hitscope
