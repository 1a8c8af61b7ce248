// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cliargs.h"

/// Runs `hitscope-cli scan`; returns the exit status documented in --help.
int runScanCommand(const CliArgs &args);
