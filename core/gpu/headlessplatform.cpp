// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpu/headlessplatform.h"

#include <QGuiApplication>
#include <QtPlugin>

// Registers the static platform plugin of core/gpu/headless. It lives here, in the object file that every
// GPU-capable main() pulls in by calling useHeadlessPlatformIfNeeded(), so that no executable can forget it.
Q_IMPORT_PLUGIN(HitscopeHeadlessPlugin)

namespace Hitscope {

namespace {

QtMessageHandler previousMessageHandler = nullptr;

// Every Qt 6.4 QGuiApplication looks up QStandardPaths::RuntimeLocation while it creates its platform (any platform)
// and warns when XDG_RUNTIME_DIR is unset, as it is for root on a server or in CI: noise on a CLI's stderr.
void dropRuntimeDirWarning(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    if (type == QtWarningMsg && message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR not set")))
        return;
    if (previousMessageHandler)
        previousMessageHandler(type, context, message);
}

} // namespace

QString headlessPlatformName()
{
    return QStringLiteral("hitscopeheadless");
}

bool useHeadlessPlatformIfNeeded()
{
    if (!qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") || !qEnvironmentVariableIsEmpty("DISPLAY")
        || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        return false;
    qputenv("QT_QPA_PLATFORM", headlessPlatformName().toLatin1());
    return true;
}

std::unique_ptr<QGuiApplication> createGpuApplication(int &argc, char **argv)
{
    useHeadlessPlatformIfNeeded();
    previousMessageHandler = qInstallMessageHandler(dropRuntimeDirWarning);
    auto app = std::make_unique<QGuiApplication>(argc, argv);
    qInstallMessageHandler(previousMessageHandler);
    return app;
}

} // namespace Hitscope
