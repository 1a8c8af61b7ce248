// SPDX-License-Identifier: GPL-3.0-or-later
// Self-test of a GPU device (core/gpu/smoketest.cpp): every value becomes a function of itself and its index,
// so a backend that dispatches nothing (Null) or reads back zeros is caught.
#version 440

layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer Values
{
    uint values[];
};

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(values.length()))
        values[i] = values[i] * 2654435761u + (i ^ 0x9e3779b9u);
}
