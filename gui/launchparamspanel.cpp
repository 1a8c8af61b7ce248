// SPDX-License-Identifier: GPL-3.0-or-later
#include "launchparamspanel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>

#include "settings.h"

namespace Hitscope {

namespace {

// A size in KiB shown as "64 MiB" or "256 KiB"; typing "1m", "512k" or "4096" works.
class SizeSpinBox : public QSpinBox
{
public:
    using QSpinBox::QSpinBox;

protected:
    QString textFromValue(int kib) const override
    {
        if (kib >= 1024 && kib % 1024 == 0)
            return QStringLiteral("%1 MiB").arg(kib / 1024);
        return QStringLiteral("%1 KiB").arg(kib);
    }
    int valueFromText(const QString &text) const override
    {
        if (!specialValueText().isEmpty() && text.trimmed() == specialValueText())
            return minimum();
        const QRegularExpressionMatch m = pattern().match(text.trimmed());
        if (!m.hasMatch())
            return value();
        const int n = m.captured(1).toInt();
        const QString unit = m.captured(2).toLower();
        if (unit.startsWith(QLatin1Char('g')))
            return n * 1024 * 1024;
        if (unit.startsWith(QLatin1Char('m')))
            return n * 1024;
        return n;
    }
    QValidator::State validate(QString &text, int &) const override
    {
        if (!specialValueText().isEmpty() && text.trimmed() == specialValueText())
            return QValidator::Acceptable;
        return pattern().match(text.trimmed()).hasMatch() ? QValidator::Acceptable : QValidator::Intermediate;
    }

private:
    static const QRegularExpression &pattern()
    {
        static const QRegularExpression re(QStringLiteral("^(\\d+)\\s*([kKmMgG]?(?:i?[bB])?)$"));
        return re;
    }
};

} // namespace

LaunchParamsPanel::LaunchParamsPanel(QWidget *parent)
    : QWidget(parent)
{
    m_engine = new QComboBox(this);
    m_engine->setObjectName(QStringLiteral("engineCombo"));
    m_engine->addItem(tr("Auto (GPU, else CPU)"), QVariant::fromValue(EngineChoice::Auto));
    m_engine->addItem(tr("GPU"), QVariant::fromValue(EngineChoice::Gpu));
    m_engine->addItem(tr("CPU"), QVariant::fromValue(EngineChoice::Cpu));
    m_engine->setToolTip(tr("Auto uses a hardware GPU that offers compute, else the CPU engine (with a notice)."));

    m_backend = new QComboBox(this);
    m_backend->setObjectName(QStringLiteral("backendCombo"));
    m_backend->addItem(tr("Auto (Vulkan, then OpenGL)"), QVariant::fromValue(GpuBackend::Auto));
    m_backend->addItem(gpuBackendName(GpuBackend::Vulkan), QVariant::fromValue(GpuBackend::Vulkan));
    m_backend->addItem(gpuBackendName(GpuBackend::OpenGL), QVariant::fromValue(GpuBackend::OpenGL));
    m_backend->setToolTip(tr("The GPU API to scan with. When the chosen one offers no compute, Auto engine scans "
                             "on the CPU (with a notice) and GPU engine reports why."));

    m_active = new QLabel(this);
    m_active->setObjectName(QStringLiteral("activeEngine"));
    m_active->setForegroundRole(QPalette::PlaceholderText);
    m_active->setWordWrap(true);
    m_active->setText(tr("Not running"));


    m_workgroupSize = new QComboBox(this);
    for (int wg : {32, 64, 128, 256, 512})
        m_workgroupSize->addItem(QString::number(wg), wg);
    m_workgroupSize->setToolTip(tr("GPU invocations per workgroup"));

    m_workerGroups = new QSpinBox(this);
    m_workerGroups->setRange(0, 1 << 20);
    m_workerGroups->setSpecialValueText(tr("Automatic"));
    m_workerGroups->setToolTip(tr("GPU persistent workgroups; automatic: from the device and the queue"));

    m_threads = new QSpinBox(this);
    m_threads->setRange(0, 1024);
    m_threads->setSpecialValueText(tr("One per core"));
    m_threads->setToolTip(tr("Threads for compiling rules, reading, the CPU engine, the GPU engine's host work and resolving hits (0: one per core)"));

    m_batchKiB = new SizeSpinBox(this);
    m_batchKiB->setObjectName(QStringLiteral("batchSize"));
    // Automatic: the engine's own size (8 MiB on the CPU, 32 MiB above 4 cores; 256 MiB on a GPU with hardware
    // of its own), as the CLI does, with smaller batches where the scan starts and ends and for many small files.
    // A size set here is the size of every batch.
    m_batchKiB->setRange(0, 4 * 1024 * 1024);
    m_batchKiB->setSpecialValueText(tr("Automatic"));
    m_batchKiB->setSingleStep(1024);
    m_batchKiB->setToolTip(tr("Haystack bytes per batch: one chart point per batch (Automatic: the engine's "
                              "choice, smaller where the scan starts and ends)"));

    m_segmentKiB = new SizeSpinBox(this);
    m_segmentKiB->setRange(0, 64 * 1024);
    // Automatic: the engine's own choice (4 KiB on a GPU, 256 KiB on the CPU), as the CLI does.
    m_segmentKiB->setSpecialValueText(tr("Automatic"));
    m_segmentKiB->setSingleStep(4);
    m_segmentKiB->setToolTip(tr("Bytes a work item owns for bounded patterns (CLI default: 256 KiB on the CPU, "
                                "4 KiB on a GPU)"));

    m_hitCapacity = new QSpinBox(this);
    m_hitCapacity->setRange(0, 1 << 30);
    m_hitCapacity->setSingleStep(1024);
    m_hitCapacity->setSpecialValueText(tr("Automatic"));
    m_hitCapacity->setToolTip(tr("GPU hit ring entries; a full ring re-runs the batch"));

    m_devices = new QLineEdit(QStringLiteral("all"), this);
    m_devices->setObjectName(QStringLiteral("devicesEdit"));
    m_devices->setPlaceholderText(QStringLiteral("all"));
    m_devices->setToolTip(tr("The GPUs to scan on, each on a thread of its own, batches dealt to whichever is free: "
                             "all (every hardware GPU) or device numbers as hitscope-cli devices lists them, such "
                             "as 0,1. A number twice makes two device objects on that GPU."));
    auto *form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Engine:"), m_engine);
    form->addRow(tr("Backend:"), m_backend);
    form->addRow(tr("Devices:"), m_devices);
    form->addRow(QString(), m_active);
    form->addRow(tr("Workgroup size:"), m_workgroupSize);
    form->addRow(tr("Worker groups:"), m_workerGroups);
    form->addRow(tr("Threads:"), m_threads);
    form->addRow(tr("Batch size:"), m_batchKiB);
    form->addRow(tr("Segment size:"), m_segmentKiB);
    form->addRow(tr("Hit capacity:"), m_hitCapacity);

    setParams(Settings::defaultLaunchParams());

    connect(m_engine, &QComboBox::currentIndexChanged, this, [this] {
        updateEnabled();
        Q_EMIT engineChanged(engine());
    });
    connect(m_backend, &QComboBox::currentIndexChanged, this, [this] { Q_EMIT backendChanged(backend()); });
    connect(m_devices, &QLineEdit::textChanged, this, [this] {
        DeviceChoice choice;
        QString why;
        const bool ok = DeviceChoice::parse(m_devices->text(), &choice, &why);
        m_devices->setStyleSheet(ok ? QString() : QStringLiteral("color: #c0392b"));
        m_devices->setStatusTip(ok ? QString() : why);
        if (ok)
            Q_EMIT devicesChanged(m_devices->text().trimmed());
    });
    updateEnabled();

    connect(m_workgroupSize, &QComboBox::currentIndexChanged, this, &LaunchParamsPanel::emitChanged);
    for (QSpinBox *box : {m_workerGroups, m_threads, m_batchKiB, m_segmentKiB, m_hitCapacity})
        connect(box, &QSpinBox::valueChanged, this, &LaunchParamsPanel::emitChanged);
}

LaunchParams LaunchParamsPanel::params() const
{
    LaunchParams p;
    p.workgroupSize = m_workgroupSize->currentData().toInt();
    p.workerGroups = m_workerGroups->value();
    p.threads = m_threads->value();
    p.batchBytes = int64_t(m_batchKiB->value()) << 10;
    p.segmentBytes = int64_t(m_segmentKiB->value()) << 10;
    p.hitCapacity = m_hitCapacity->value();
    return p;
}

void LaunchParamsPanel::setParams(const LaunchParams &p)
{
    m_updating = true;
    const int wg = m_workgroupSize->findData(p.workgroupSize);
    m_workgroupSize->setCurrentIndex(wg >= 0 ? wg : 1);
    m_workerGroups->setValue(p.workerGroups);
    m_threads->setValue(p.threads);
    // 0 stays automatic; a set size is at least 16 KiB.
    m_batchKiB->setValue(p.batchBytes <= 0 ? 0 : int(std::clamp<int64_t>(p.batchBytes >> 10, 16, 4 * 1024 * 1024)));
    m_segmentKiB->setValue(int(std::clamp<int64_t>(p.segmentBytes >> 10, 0, 64 * 1024)));
    m_hitCapacity->setValue(int(std::clamp<int64_t>(p.hitCapacity, 0, 1 << 30)));
    m_updating = false;
    emitChanged();
}

EngineChoice LaunchParamsPanel::engine() const
{
    return m_engine->currentData().value<EngineChoice>();
}

void LaunchParamsPanel::setEngine(EngineChoice engine)
{
    m_engine->setCurrentIndex(m_engine->findData(QVariant::fromValue(engine)));
}

GpuBackend LaunchParamsPanel::backend() const
{
    return m_backend->currentData().value<GpuBackend>();
}

DeviceChoice LaunchParamsPanel::devices() const
{
    DeviceChoice choice;
    QString ignored;
    DeviceChoice::parse(m_devices->text(), &choice, &ignored);
    return choice;
}

bool LaunchParamsPanel::devicesValid(QString *why) const
{
    DeviceChoice choice;
    return DeviceChoice::parse(m_devices->text(), &choice, why);
}

QString LaunchParamsPanel::devicesText() const
{
    return m_devices->text().trimmed();
}

void LaunchParamsPanel::setDevicesText(const QString &text)
{
    m_devices->setText(text);
}

void LaunchParamsPanel::setBackend(GpuBackend backend)
{
    const int i = m_backend->findData(QVariant::fromValue(backend));
    m_backend->setCurrentIndex(i >= 0 ? i : 0);
}

void LaunchParamsPanel::setScanRunning(bool running)
{
    m_running = running;
    updateEnabled();
    if (!running)
        m_active->setText(tr("Not running"));
}

void LaunchParamsPanel::updateEnabled()
{
    // The device is made when a scan starts: engine and backend cannot change under a running scan.
    m_engine->setEnabled(!m_running);
    m_backend->setEnabled(!m_running && engine() != EngineChoice::Cpu);
    m_devices->setEnabled(!m_running && engine() != EngineChoice::Cpu);
}

void LaunchParamsPanel::setActiveEngine(const QString &description)
{
    m_active->setText(description);
}

void LaunchParamsPanel::emitChanged()
{
    if (!m_updating)
        Q_EMIT paramsChanged(params());
}

} // namespace Hitscope
