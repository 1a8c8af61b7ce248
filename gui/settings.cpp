// SPDX-License-Identifier: GPL-3.0-or-later
#include "settings.h"

#include <QDebug>
#include <QDir>
#include <QSettings>

namespace Hitscope {

namespace {

// Typed keys: every QSettings key and its default lives here, nowhere else.
template<typename T>
struct Key
{
    const char *name;
};

constexpr Key<QStringList> kRecentFolders{"Targets/recentFolders"};
constexpr Key<QStringList> kRuleFilePaths{"RuleSets/files"};
constexpr Key<QString> kExternals{"RuleSets/externals"};
constexpr Key<QStringList> kRuleFilesDisabled{"RuleSets/disabled"};
constexpr Key<QString> kEngine{"Engine/choice"};
constexpr Key<QString> kBackend{"Engine/backend"};
constexpr Key<QString> kDevices{"Engine/devices"};
constexpr Key<bool> kChartsOpenGl{"Charts/openGl"};
constexpr Key<bool> kProfileRules{"Scan/profileRules"};
constexpr Key<qlonglong> kBatchBytes{"LaunchParams/batchBytes"};
constexpr Key<qlonglong> kSegmentBytes{"LaunchParams/segmentBytes"};
constexpr Key<int> kThreads{"LaunchParams/threads"};
constexpr Key<int> kWorkgroupSize{"LaunchParams/workgroupSize"};
constexpr Key<int> kWorkerGroups{"LaunchParams/workerGroups"};
constexpr Key<qlonglong> kHitCapacity{"LaunchParams/hitCapacity"};
constexpr Key<int> kTimeoutMs{"LaunchParams/timeoutMs"};

QSettings openSettings()
{
    return QSettings(QStringLiteral("Hitscope"), QStringLiteral("hitscope"));
}

template<typename T>
T read(const QSettings &s, Key<T> key, const T &fallback)
{
    const QVariant v = s.value(QLatin1String(key.name));
    if (!v.isValid() || !v.canConvert<T>())
        return fallback;
    return v.value<T>();
}

template<typename T>
void write(QSettings &s, Key<T> key, const T &value)
{
    s.setValue(QLatin1String(key.name), QVariant::fromValue(value));
}

void syncChecked(QSettings &s, const char *what)
{
    s.sync();
    if (s.status() != QSettings::NoError)
        qWarning() << "could not save" << what << "to" << s.fileName() << "status" << s.status();
}

EngineChoice engineFromName(const QString &name)
{
    EngineChoice e = EngineChoice::Auto;
    return parseEngineChoice(name, &e) ? e : EngineChoice::Auto;
}

QStringList normalizedRecent(const QStringList &folders)
{
    QStringList out;
    for (const QString &f : folders) {
        if (f.isEmpty())
            continue;
        const QString clean = QDir::cleanPath(f);
        if (!out.contains(clean))
            out.push_back(clean);
        if (out.size() == Settings::kMaxRecentFolders)
            break;
    }
    return out;
}

} // namespace

Settings *Settings::instance()
{
    static Settings settings;
    return &settings;
}

Settings::Settings()
{
    reload();
}

LaunchParams Settings::defaultLaunchParams()
{
    LaunchParams p;
    p.batchBytes = 0;
    p.segmentBytes = 0;
    return p;
}

void Settings::reload()
{
    const QSettings s = openSettings();
    if (s.status() != QSettings::NoError)
        qWarning() << "could not read the settings from" << s.fileName() << "status" << s.status();

    m_recentFolders = normalizedRecent(read(s, kRecentFolders, QStringList()));

    m_ruleFiles.clear();
    const QStringList disabled = read(s, kRuleFilesDisabled, QStringList());
    for (const QString &path : read(s, kRuleFilePaths, QStringList()))
        m_ruleFiles.push_back({path, !disabled.contains(path)});
    m_externals = read(s, kExternals, QString());
    m_devices = read(s, kDevices, QStringLiteral("all"));

    const LaunchParams d = defaultLaunchParams();
    LaunchParams p;
    p.batchBytes = read(s, kBatchBytes, qlonglong(d.batchBytes));
    p.segmentBytes = read(s, kSegmentBytes, qlonglong(d.segmentBytes));
    p.threads = read(s, kThreads, d.threads);
    p.workgroupSize = read(s, kWorkgroupSize, d.workgroupSize);
    p.workerGroups = read(s, kWorkerGroups, d.workerGroups);
    p.hitCapacity = read(s, kHitCapacity, qlonglong(d.hitCapacity));
    p.timeoutMs = read(s, kTimeoutMs, d.timeoutMs);
    // A hand-edited or corrupt file must not hand the engines nonsense (0 sizes are the automatic ones).
    if (p.batchBytes < 0 || p.segmentBytes < 0 || p.threads < 0 || p.workgroupSize <= 0 || p.workerGroups < 0
        || p.hitCapacity < 0 || p.timeoutMs <= 0) {
        qWarning() << "ignoring invalid launch parameters in" << s.fileName();
        p = d;
    }
    m_launchParams = p;

    m_engine = engineFromName(read(s, kEngine, QStringLiteral("auto")));
    // parseGpuBackend() is the CLI's --backend spelling; Null is a test device, never a user's choice.
    if (!parseGpuBackend(read(s, kBackend, QStringLiteral("auto")), &m_backend) || m_backend == GpuBackend::Null)
        m_backend = GpuBackend::Auto;
    m_chartsOpenGl = read(s, kChartsOpenGl, false);
    m_profileRules = read(s, kProfileRules, false);
}

void Settings::setRecentFolders(const QStringList &folders)
{
    const QStringList value = normalizedRecent(folders);
    if (value == m_recentFolders)
        return;
    m_recentFolders = value;
    QSettings s = openSettings();
    write(s, kRecentFolders, value);
    syncChecked(s, "the recent folders");
    Q_EMIT recentFoldersChanged(value);
}

void Settings::addRecentFolder(const QString &folder)
{
    if (folder.isEmpty())
        return;
    QStringList folders = m_recentFolders;
    folders.prepend(QDir::cleanPath(folder));
    setRecentFolders(folders);
}

void Settings::setDevices(const QString &devices)
{
    if (devices == m_devices)
        return;
    m_devices = devices;
    QSettings s = openSettings();
    write(s, kDevices, devices);
    syncChecked(s, "the GPU devices");
    Q_EMIT devicesChanged(devices);
}

void Settings::setExternals(const QString &externals)
{
    if (externals == m_externals)
        return;
    m_externals = externals;
    QSettings s = openSettings();
    write(s, kExternals, externals);
    syncChecked(s, "the external variables");
    Q_EMIT externalsChanged(externals);
}

void Settings::setRuleFiles(const QVector<RuleFileSetting> &files)
{
    if (files == m_ruleFiles)
        return;
    m_ruleFiles = files;
    QStringList paths;
    QStringList disabled;
    for (const RuleFileSetting &f : files) {
        paths.push_back(f.path);
        if (!f.enabled)
            disabled.push_back(f.path);
    }
    QSettings s = openSettings();
    write(s, kRuleFilePaths, paths);
    write(s, kRuleFilesDisabled, disabled);
    syncChecked(s, "the rule files");
    Q_EMIT ruleFilesChanged();
}

void Settings::setLaunchParams(const LaunchParams &p)
{
    if (p == m_launchParams)
        return;
    m_launchParams = p;
    QSettings s = openSettings();
    write(s, kBatchBytes, qlonglong(p.batchBytes));
    write(s, kSegmentBytes, qlonglong(p.segmentBytes));
    write(s, kThreads, p.threads);
    write(s, kWorkgroupSize, p.workgroupSize);
    write(s, kWorkerGroups, p.workerGroups);
    write(s, kHitCapacity, qlonglong(p.hitCapacity));
    write(s, kTimeoutMs, p.timeoutMs);
    syncChecked(s, "the launch parameters");
    Q_EMIT launchParamsChanged(p);
}

void Settings::setEngine(EngineChoice engine)
{
    if (engine == m_engine)
        return;
    m_engine = engine;
    QSettings s = openSettings();
    write(s, kEngine, engineChoiceName(engine));
    syncChecked(s, "the engine choice");
    Q_EMIT engineChanged(engine);
}

void Settings::setBackend(GpuBackend backend)
{
    if (backend == GpuBackend::Null)
        backend = GpuBackend::Auto;
    if (backend == m_backend)
        return;
    m_backend = backend;
    QSettings s = openSettings();
    write(s, kBackend, gpuBackendKey(backend));
    syncChecked(s, "the GPU backend");
    Q_EMIT backendChanged(backend);
}

void Settings::setChartsOpenGl(bool on)
{
    if (on == m_chartsOpenGl)
        return;
    m_chartsOpenGl = on;
    QSettings s = openSettings();
    write(s, kChartsOpenGl, on);
    syncChecked(s, "the chart drawing setting");
    Q_EMIT chartsOpenGlChanged(on);
}

void Settings::setProfileRules(bool on)
{
    if (on == m_profileRules)
        return;
    m_profileRules = on;
    QSettings s = openSettings();
    write(s, kProfileRules, on);
    syncChecked(s, "the rule profiling setting");
    Q_EMIT profileRulesChanged(on);
}

} // namespace Hitscope
