// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

struct CliArgs;

/// `hitscope-cli merge FILE...`: the --json outputs of a sharded scan's parts as one scan's records on standard
/// output (Hitscope::ShardMerger). Exit status: the merged scan's (0 or 2), 1 when a part failed or the parts
/// cannot be merged (the reason, naming the file, on stderr).
int runMergeCommand(const CliArgs &args);
