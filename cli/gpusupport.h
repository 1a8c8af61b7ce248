// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>

#include <QString>

#include "cliargs.h"

class QCoreApplication;

namespace Hitscope {
class Engine;
}

/**
 * The CLI's GPU half: the GPU engine, QRhi, and the QGuiApplication they need. It is built as a module of its own,
 * hitscope-cli-gpu.so, and opened only by a command that may use a GPU (`--engine gpu`, `--engine auto`,
 * `devices`). Why: linking Qt GUI loads some thirty libraries (X11, EGL, fontconfig, harfbuzz, ...), which cost
 * every command, a CPU scan too, 15-20 ms of start-up on a small machine.
 *
 * The module carries its own copy of the engine library; objects cross between the two copies only through
 * virtual interfaces (Engine) and plain structs, built from the same headers in the same build.
 */
class GpuSupport
{
public:
    virtual ~GpuSupport() = default;

    /// Instead of a QCoreApplication: a QGuiApplication, on Hitscope's headless platform when there is no display.
    virtual std::unique_ptr<QCoreApplication> createApplication(int &argc, char **argv) = 0;
    /// A GPU engine for args' backend and validation options (GpuEngine::choose()); null with the reason in
    /// *error, or a notice in *notice when `--engine auto` chooses the CPU.
    virtual std::unique_ptr<Hitscope::Engine> chooseEngine(const CliArgs &args, QString *notice,
                                                           QString *error) = 0;
    /// `hitscope-cli devices`: prints every backend and device; returns the exit status.
    virtual int runDevicesCommand(const CliArgs &args) = 0;

    /// Opens the module once (never closed: it owns the application and engine objects until exit). It is looked
    /// for beside the executable (a build tree), then where `cmake --install` puts it. Null, with the path and
    /// the loader's reason in *error, when it cannot be opened or comes from another build.
    static GpuSupport *load(QString *error);
};

/// The module's one exported symbol, extern "C": its GpuSupport, or null when `build` is not the build stamp it was
/// made with (kGpuSupportBuild).
using GpuSupportEntry = GpuSupport *(*)(const char *build);
inline constexpr char kGpuSupportEntry[] = "hitscopeCliGpuSupport";
/// Executable and module must come from one configured build tree: they share struct layouts.
inline constexpr char kGpuSupportBuild[] = HITSCOPE_VERSION " " HITSCOPE_CLI_BUILD_STAMP;
