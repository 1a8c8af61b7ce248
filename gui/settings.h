// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>
#include <QStringList>
#include <QVector>

#include "engine/launchparams.h"
#include "session/scanjob.h"

namespace Hitscope {

/// A rule file the window lists, and whether its check box is ticked.
struct RuleFileSetting
{
    QString path;
    bool enabled = true;

    bool operator==(const RuleFileSetting &) const = default;
};

/// The application's persistent preferences (STYLE.md §7). GUI thread only: core/ never reads it, the window
/// hands core a plain LaunchParams. Getters are typed; a setter compares with the current value, writes it
/// through QSettings (organization "Hitscope", application "hitscope"), syncs, and only then emits xChanged.
class Settings : public QObject
{
    Q_OBJECT
public:
    static constexpr int kMaxRecentFolders = 10;

    static Settings *instance();

    /// Most recent first, at most kMaxRecentFolders, no duplicates.
    QStringList recentFolders() const { return m_recentFolders; }
    void setRecentFolders(const QStringList &folders);
    /// Moves (or puts) `folder` at the front of the recent folders.
    void addRecentFolder(const QString &folder);

    QVector<RuleFileSetting> ruleFiles() const { return m_ruleFiles; }
    void setRuleFiles(const QVector<RuleFileSetting> &files);

    /// The YARA external variables as the rule-set panel shows them ("name=value; other=1").
    QString externals() const { return m_externals; }
    void setExternals(const QString &externals);
    /// The GPU devices a scan uses, as --devices takes them ("all", "0,1").
    QString devices() const { return m_devices; }
    void setDevices(const QString &devices);

    LaunchParams launchParams() const { return m_launchParams; }
    /// A new user's launch parameters: batch and segment sizes automatic (0), chosen by the engine when a scan
    /// starts, as the CLI chooses them.
    static LaunchParams defaultLaunchParams();
    void setLaunchParams(const LaunchParams &params);

    EngineChoice engine() const { return m_engine; }
    void setEngine(EngineChoice engine);

    /// The GPU backend a scan may use (Auto: Vulkan, then OpenGL; never Null).
    GpuBackend backend() const { return m_backend; }
    void setBackend(GpuBackend backend);

    /// Draw the charts with OpenGL (QCustomPlot's FBO path); off by default, and the charts fall back to
    /// software drawing where no OpenGL context can be made.
    bool chartsOpenGl() const { return m_chartsOpenGl; }
    void setChartsOpenGl(bool on);
    /// Scans measure what each rule costs (the Profile tab).
    bool profileRules() const { return m_profileRules; }
    void setProfileRules(bool on);

    /// Drops the cached values and reads everything again from the settings file.
    void reload();

Q_SIGNALS:
    void recentFoldersChanged(const QStringList &folders);
    void ruleFilesChanged();
    void externalsChanged(const QString &externals);
    void devicesChanged(const QString &devices);
    void launchParamsChanged(const Hitscope::LaunchParams &params);
    void engineChanged(Hitscope::EngineChoice engine);
    void backendChanged(Hitscope::GpuBackend backend);
    void chartsOpenGlChanged(bool on);
    void profileRulesChanged(bool on);

private:
    Settings();

    QStringList m_recentFolders;
    QVector<RuleFileSetting> m_ruleFiles;
    QString m_externals;
    QString m_devices = QStringLiteral("all");
    LaunchParams m_launchParams;
    EngineChoice m_engine = EngineChoice::Auto;
    GpuBackend m_backend = GpuBackend::Auto;
    bool m_chartsOpenGl = false;
    bool m_profileRules = false;
};

} // namespace Hitscope
