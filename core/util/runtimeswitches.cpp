// SPDX-License-Identifier: GPL-3.0-or-later
#include "runtimeswitches.h"

namespace Hitscope {

bool RuntimeSwitches::pipelineTrace()
{
    static const bool on = qEnvironmentVariableIsSet("HITSCOPE_PIPELINE_TRACE");
    return on;
}

bool RuntimeSwitches::gpuProfile()
{
    static const bool on = qEnvironmentVariableIsSet("HITSCOPE_GPU_PROFILE");
    return on;
}

bool RuntimeSwitches::gpuNoPrefetch()
{
    static const bool on = qEnvironmentVariableIsSet("HITSCOPE_GPU_NO_PREFETCH");
    return on;
}

bool RuntimeSwitches::gpuNoTransferQueue()
{
    static const bool on = qEnvironmentVariableIsSet("HITSCOPE_GPU_NO_TRANSFER_QUEUE");
    return on;
}

bool RuntimeSwitches::gpuNoHostImport()
{
    static const bool on = qEnvironmentVariableIsSet("HITSCOPE_GPU_NO_HOST_IMPORT");
    return on;
}

QString RuntimeSwitches::gpuShaderDir()
{
    // Not kept: tests point it at a folder without kernels and back within one process.
    return qEnvironmentVariable("HITSCOPE_GPU_SHADER_DIR", QStringLiteral(":/shaders"));
}

bool RuntimeSwitches::ioUringOff()
{
    static const bool off = qEnvironmentVariable("HITSCOPE_IO_URING") == QLatin1String("0");
    return off;
}

} // namespace Hitscope
