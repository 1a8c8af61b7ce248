// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include <QByteArray>
#include <QString>

namespace TestUtil {

/// A pattern for the Vectorscan oracle: PCRE syntax, `caseless` and `dotAll` as flags.
struct OraclePattern
{
    QByteArray regex;
    bool caseless = false;
    bool dotAll = false;
};

/// Escapes bytes so that Vectorscan reads them as a literal.
QByteArray literalToRegex(const QByteArray &bytes);

/**
 * An independent oracle: Vectorscan in block mode with HS_FLAG_SOM_LEFTMOST reports every end of every
 * match with its leftmost start, which is Hitscope's documented semantics. Returns (pattern, start, end).
 * Compiles once; `error` is set when Vectorscan rejects a pattern.
 */
class HsOracle
{
public:
    using Match = std::tuple<int, int64_t, int64_t>;

    explicit HsOracle(const std::vector<OraclePattern> &patterns);
    ~HsOracle();
    bool isValid() const { return m_db != nullptr; }
    QString error() const { return m_error; }
    std::set<Match> scan(const QByteArray &data) const;

private:
    void *m_db = nullptr;
    QString m_error;
};

} // namespace TestUtil
