// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

#include "engine/devicechoice.h"
#include "engine/launchparams.h"
#include "session/scanjob.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace Hitscope {

/// Engine and launch parameters. Every edit emits paramsChanged(); while a scan runs the window forwards it to
/// ScanJob::setParams(), so it applies from the next batch. Engine and backend are fixed for a running scan.
class LaunchParamsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit LaunchParamsPanel(QWidget *parent = nullptr);

    LaunchParams params() const;
    void setParams(const LaunchParams &params);
    EngineChoice engine() const;
    void setEngine(EngineChoice engine);
    GpuBackend backend() const;
    /// Null (a test device) is shown as Auto.
    void setBackend(GpuBackend backend);
    /// The GPU devices to scan on ("all", or device numbers as `hitscope-cli devices` lists them); a list that
    /// does not parse counts as all, and the field says why.
    DeviceChoice devices() const;
    QString devicesText() const;
    /// Whether the Devices field parses; `why` says what is wrong with it.
    bool devicesValid(QString *why) const;
    void setDevicesText(const QString &text);
    /// Locks what a running scan cannot change.
    void setScanRunning(bool running);
    /// What the running scan actually uses ("CPU, 2 threads", "Vulkan on …"), shown under the combos.
    void setActiveEngine(const QString &description);

Q_SIGNALS:
    void paramsChanged(const Hitscope::LaunchParams &params);
    void engineChanged(Hitscope::EngineChoice engine);
    void backendChanged(Hitscope::GpuBackend backend);
    void devicesChanged(const QString &text);

private:
    void emitChanged();
    void updateEnabled();

    QComboBox *m_engine = nullptr;
    QComboBox *m_backend = nullptr;
    QLineEdit *m_devices = nullptr;
    QLabel *m_active = nullptr;
    QComboBox *m_workgroupSize = nullptr;
    QSpinBox *m_workerGroups = nullptr;
    QSpinBox *m_threads = nullptr;
    QSpinBox *m_batchKiB = nullptr;
    QSpinBox *m_segmentKiB = nullptr;
    QSpinBox *m_hitCapacity = nullptr;
    bool m_updating = false;
    bool m_running = false;
};

} // namespace Hitscope
