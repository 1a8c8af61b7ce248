// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpusupport.h"

#include <dlfcn.h>
#include <unistd.h>

#include <QFile>
#include <QFileInfo>
#include <QStringList>

namespace {

QString executableDir()
{
    // No QCoreApplication exists yet: the module decides which kind of application to create.
    char path[4096];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return QString();
    return QFileInfo(QString::fromLocal8Bit(path, qsizetype(n))).absolutePath();
}

} // namespace

GpuSupport *GpuSupport::load(QString *error)
{
    static GpuSupport *loaded = nullptr;
    static QString loadError;
    static bool tried = false;
    if (!tried) {
        tried = true;
        const QString dir = executableDir();
        const QStringList candidates { dir + QStringLiteral("/hitscope-cli-gpu.so"),
                                       dir + QStringLiteral("/" HITSCOPE_CLI_GPU_RELDIR "/hitscope-cli-gpu.so") };
        QStringList reasons;
        for (const QString &path : candidates) {
            if (!QFileInfo::exists(path)) {
                reasons << path + QStringLiteral(": not found");
                continue;
            }
            void *module = ::dlopen(QFile::encodeName(path).constData(), RTLD_NOW | RTLD_LOCAL);
            if (!module) {
                reasons << QString::fromLocal8Bit(::dlerror());
                continue;
            }
            auto entry = reinterpret_cast<GpuSupportEntry>(::dlsym(module, kGpuSupportEntry));
            loaded = entry ? entry(kGpuSupportBuild) : nullptr;
            if (loaded)
                break;
            reasons << path + (entry ? QStringLiteral(": from another build of Hitscope")
                                     : QStringLiteral(": not Hitscope's GPU module"));
            ::dlclose(module);
        }
        if (!loaded)
            loadError = QStringLiteral("cannot load the GPU module (") + reasons.join(QStringLiteral("; "))
                + QLatin1Char(')');
    }
    if (!loaded && error)
        *error = loadError;
    return loaded;
}
