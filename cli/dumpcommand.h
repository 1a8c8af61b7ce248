// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

struct CliArgs;

/// `hitscope-cli dump`: each file's YARA module data, as `yara -D` prints it (or JSON lines). Exit status 0,
/// 1 when the modules cannot be read at all, 2 when some file could not be read (named on stderr).
int runDumpCommand(const CliArgs &args);
