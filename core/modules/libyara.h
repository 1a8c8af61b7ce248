// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// libyara's public API (Debian's libyara 4.2.3, the library of the yara binary, the oracle). Its object layout
// (YR_OBJECT and kinds, yara/types.h) is public; its object functions are not exported, so objects are walked
// here from that layout. Only core/modules includes this header.
#include <yara.h>

#include <mutex>

#include <QByteArray>
#include <QString>

namespace Hitscope {

/// libyara's global state is counted (yr_initialize / yr_finalize) but not thread-safe: one lock around both.
inline std::mutex &libyaraLock()
{
    static std::mutex lock;
    return lock;
}

/// Holds one yr_initialize() for its lifetime.
class LibyaraUse
{
public:
    LibyaraUse()
    {
        std::lock_guard lock(libyaraLock());
        m_ok = yr_initialize() == ERROR_SUCCESS;
    }
    ~LibyaraUse()
    {
        if (m_ok) {
            std::lock_guard lock(libyaraLock());
            yr_finalize();
        }
    }
    LibyaraUse(const LibyaraUse &) = delete;
    LibyaraUse &operator=(const LibyaraUse &) = delete;
    bool ok() const { return m_ok; }

private:
    bool m_ok = false;
};

/// Compiles rule text with libyara's compiler (libyara initialized by the caller). Returns why it failed, or
/// nothing; `rules`, when given, receives the compiled rules on success.
inline QString compileLibyaraRules(const QByteArray &text, YR_RULES **rules = nullptr)
{
    YR_COMPILER *compiler = nullptr;
    if (yr_compiler_create(&compiler) != ERROR_SUCCESS)
        return QStringLiteral("libyara: out of memory");
    QString error;
    if (yr_compiler_add_string(compiler, text.constData(), nullptr) != 0
        || (rules && yr_compiler_get_rules(compiler, rules) != ERROR_SUCCESS)) {
        char message[256] = {};
        yr_compiler_get_error_message(compiler, message, sizeof message);
        error = QString::fromUtf8(message);
        if (rules)
            *rules = nullptr;
    }
    yr_compiler_destroy(compiler);
    return error;
}

} // namespace Hitscope
