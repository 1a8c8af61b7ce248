# SPDX-License-Identifier: GPL-3.0-or-later
# Fails when a source file includes a header of a layer above its own, or of another folder of its own layer.
# Layers, bottom to top (docs/architecture.md): util, pattern, modules, rules, automata, engine, cpu | gpu,
# scan, report, session, cli | gui | bench. Run as: cmake -DSOURCE_DIR=<repository> -P checklayers.cmake
cmake_minimum_required(VERSION 3.16)
set(layers util pattern modules rules automata engine "cpu gpu" scan report session "cli gui bench")
# What is left of the redesign, named so that nothing else can slip in: the GPU engine still owns the CPU
# engine that re-runs its failed batches and screens its marked blocks.
set(allowed "core/gpu/gpuengine.h:cpu")

set(rank 0)
foreach(layer IN LISTS layers)
    string(REPLACE " " ";" folders "${layer}")
    foreach(folder IN LISTS folders)
        set(rank_${folder} ${rank})
    endforeach()
    math(EXPR rank "${rank} + 1")
endforeach()

file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR}
     ${SOURCE_DIR}/core/*.h ${SOURCE_DIR}/core/*.cpp ${SOURCE_DIR}/cli/*.h ${SOURCE_DIR}/cli/*.cpp
     ${SOURCE_DIR}/gui/*.h ${SOURCE_DIR}/gui/*.cpp ${SOURCE_DIR}/bench/*.h ${SOURCE_DIR}/bench/*.cpp)
set(violations "")
set(checked 0)
foreach(source IN LISTS sources)
    if(source MATCHES "^core/([a-z]+)/")
        set(own ${CMAKE_MATCH_1})
    elseif(source MATCHES "^([a-z]+)/")
        set(own ${CMAKE_MATCH_1})
    endif()
    if(NOT DEFINED rank_${own})
        list(APPEND violations "${source}: folder '${own}' has no layer")
        continue()
    endif()
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${SOURCE_DIR}/${source} includes REGEX "^#include \"[a-z]+/[a-z0-9_]+\\.h\"")
    foreach(line IN LISTS includes)
        string(REGEX REPLACE "^#include \"([a-z]+)/.*" "\\1" folder "${line}")
        if(folder STREQUAL own OR NOT DEFINED rank_${folder})
            continue()
        endif()
        if(${rank_${folder}} GREATER_EQUAL ${rank_${own}} AND NOT "${source}:${folder}" IN_LIST allowed)
            list(APPEND violations "${source}: ${line} (${own} may include only the layers below it)")
        endif()
    endforeach()
endforeach()
if(checked LESS 100)
    message(FATAL_ERROR "only ${checked} files found under ${SOURCE_DIR}")
endif()
if(violations)
    list(JOIN violations "\n" text)
    message(FATAL_ERROR "includes against the layers:\n${text}")
endif()
message(STATUS "${checked} files, every include points down")
