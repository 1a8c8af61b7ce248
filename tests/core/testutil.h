// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace TestUtil {

/// Writes `data` to `path`, creating parent folders. Returns false on failure.
bool writeFile(const QString &path, const QByteArray &data);

/// Runs hitscope-cli with `args`; returns its exit code and fills stdout/stderr.
int runCli(const QStringList &args, QByteArray *out, QByteArray *err = nullptr, int timeoutMs = 600000);

} // namespace TestUtil
