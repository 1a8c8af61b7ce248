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
        if (std::fwrite(m_buf.data(), 1, m_buf.size(), stdout) != m_buf.size() || std::fflush(stdout) != 0)
            m_failed = true;
        m_buf.clear();
    }
    /// Some output was not written (a full disk, a closed pipe): the run must not look whole.
    bool failed() const { return m_failed; }

private:
    std::string m_buf;
    bool m_failed = false;
};

/// A message for the user on standard error, prefixed with the program's name.
inline void warnOnStderr(const QString &message)
{
    std::fprintf(stderr, "hitscope-cli: %s\n", message.toLocal8Bit().constData());
}
