// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace Hitscope {

/**
 * Every environment variable the program reads, in one place, each read once. They are for diagnosis and for
 * comparing variants in one benchmark run, never needed to scan; the README's table lists them. Traces go to the
 * logging categories of util/logcategories.h, which these switches enable.
 */
class RuntimeSwitches
{
public:
    /// HITSCOPE_PIPELINE_TRACE: per batch, when it was read, scanned and resolved (category hitscope.pipeline).
    static bool pipelineTrace();
    /// HITSCOPE_GPU_PROFILE: per GPU batch, the host's phases and the GPU's (category hitscope.gpu).
    static bool gpuProfile();
    /// HITSCOPE_GPU_NO_PREFETCH: no batch is copied to the GPU while the one before is scanned.
    static bool gpuNoPrefetch();
    /// HITSCOPE_GPU_NO_TRANSFER_QUEUE: no queue of its own for copies, where the device offers one.
    static bool gpuNoTransferQueue();
    /// HITSCOPE_GPU_NO_HOST_IMPORT: batches go through a staging buffer, not from where they were read.
    static bool gpuNoHostImport();
    /// HITSCOPE_GPU_SHADER_DIR: the folder the kernels are loaded from (default the built-in ":/shaders").
    static QString gpuShaderDir();
    /// HITSCOPE_IO_URING=0: small files are read with plain system calls, not io_uring.
    static bool ioUringOff();
};

} // namespace Hitscope
