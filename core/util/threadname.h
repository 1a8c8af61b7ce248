// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <algorithm>
#include <string>

#include <pthread.h>

namespace Hitscope {

/// Names the calling thread as top -H, perf, gdb and hotspot show it: a scan runs a dozen threads, and a profile
/// of them all named after the program says little. Linux keeps 15 bytes.
inline void nameThisThread(const std::string &name)
{
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

/// Names the calling thread `owner` (the thread that started it) with `suffix`, which is kept whole: the workers
/// of a pool are told apart from their owner and from each other.
inline void nameThisThreadAfter(const std::string &owner, const std::string &suffix)
{
    std::string name = owner.substr(0, 15 - std::min<size_t>(suffix.size(), 15));
    name.append(suffix);
    nameThisThread(name);
}

/// The calling thread's name.
inline std::string thisThreadName()
{
    char name[16] = {};
    if (pthread_getname_np(pthread_self(), name, sizeof name) != 0)
        return {};
    return name;
}

} // namespace Hitscope
