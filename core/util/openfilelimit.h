// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <sys/resource.h>

namespace Hitscope {

/**
 * Raises this process's soft limit on open files to its hard limit. The batcher keeps files of unknown size open
 * between sizing and reading them (Batcher::addFile), up to about half the soft limit; at Debian's default of
 * 1,024 a batch of many small files would have some of them opened twice. Only for a process in which nothing
 * waits with select(), whose descriptor sets stop at 1,024: the CLI and the bench, not the desktop application
 * and its libraries. Called once, first thing: a process-wide policy is the application's to set, not the
 * library's.
 */
inline void raiseOpenFileLimit()
{
    struct rlimit limit {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == limit.rlim_max)
        return;
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
}

} // namespace Hitscope
