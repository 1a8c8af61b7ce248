// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdio>
#include <string>

#include <QString>

/// Standard output, buffered: a scan can print millions of lines.
class OutputBuffer
{
public:
    ~OutputBuffer() { flush(); }
    std::string &buf() { return m_buf; }
    void maybeFlush()
    {
        if (m_buf.size() > (1 << 16))
            flush();
    }
    void flush()
    {
        std::fwrite(m_buf.data(), 1, m_buf.size(), stdout);
        std::fflush(stdout);
        m_buf.clear();
    }

private:
    std::string m_buf;
};

/// A message for the user on standard error, prefixed with the program's name.
inline void warnOnStderr(const QString &message)
{
    std::fprintf(stderr, "hitscope-cli: %s\n", message.toLocal8Bit().constData());
}
