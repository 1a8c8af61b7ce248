# SPDX-License-Identifier: GPL-3.0-or-later
# The documentation's pictures as the README says they are made: the application scans the demo with --scan and
# saves its window with --screenshot, then quits (with the options the README names for the views' pictures:
# --profile, --view, and --edit, which opens the rule editor beside). Fails unless it exits 0 with a PNG image of a window's size.
# Run as: cmake -DHITSCOPE=<gui binary> -DSOURCE_DIR=<repository> -DWORK=<scratch folder> -P checkscreenshot.cmake
cmake_minimum_required(VERSION 3.16)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/config)
set(demo ${SOURCE_DIR}/resources/demo)
execute_process(
    COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME=${WORK}/config
            ${HITSCOPE} --engine cpu --devices all --rules ${demo}/rules/demo.yar --rules ${demo}/rules/iocs.txt
            --profile --edit ${demo}/rules/demo.yar --view profile --scan --screenshot ${WORK}/window.png ${demo}/files
    RESULT_VARIABLE result OUTPUT_QUIET ERROR_VARIABLE errors TIMEOUT 120)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "hitscope --screenshot exited with ${result}: ${errors}")
endif()
if(NOT EXISTS ${WORK}/window.png)
    message(FATAL_ERROR "no picture was written")
endif()
file(READ ${WORK}/window.png signature LIMIT 8 HEX)
if(NOT signature STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "the picture is not a PNG image (it starts with ${signature})")
endif()
# Width and height, big-endian at bytes 16 to 23 of the IHDR chunk: a window, not an empty grab.
file(READ ${WORK}/window.png size OFFSET 16 LIMIT 8 HEX)
string(SUBSTRING ${size} 0 8 width)
string(SUBSTRING ${size} 8 8 height)
math(EXPR width "0x${width}")
math(EXPR height "0x${height}")
if(width LESS 400 OR height LESS 300)
    message(FATAL_ERROR "the picture is ${width}x${height}, not a window")
endif()
message(STATUS "hitscope --screenshot wrote a ${width}x${height} PNG image")
# A view that does not exist is refused by name, before any window shows.
execute_process(
    COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME=${WORK}/config
            ${HITSCOPE} --view nosuchview
    RESULT_VARIABLE result OUTPUT_QUIET ERROR_VARIABLE errors TIMEOUT 60)
if(result EQUAL 0 OR NOT errors MATCHES "--view must be one of files, hits, rules, profile, problems")
    message(FATAL_ERROR "hitscope --view nosuchview exited with ${result}: ${errors}")
endif()
