// SPDX-License-Identifier: GPL-3.0-or-later
#include "testutilhs.h"

#include <hs/hs.h>

namespace TestUtil {

QByteArray literalToRegex(const QByteArray &bytes)
{
    static const char hex[] = "0123456789abcdef";
    QByteArray out;
    for (const char ch : bytes) {
        const auto c = uint8_t(ch);
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
    }
    return out;
}

HsOracle::HsOracle(const std::vector<OraclePattern> &patterns)
{
    std::vector<const char *> exprs;
    std::vector<unsigned> flags;
    std::vector<unsigned> ids;
    for (size_t i = 0; i < patterns.size(); ++i) {
        exprs.push_back(patterns[i].regex.constData());
        unsigned f = HS_FLAG_SOM_LEFTMOST | HS_FLAG_ALLOWEMPTY;
        if (patterns[i].caseless)
            f |= HS_FLAG_CASELESS;
        if (patterns[i].dotAll)
            f |= HS_FLAG_DOTALL;
        flags.push_back(f);
        ids.push_back(unsigned(i));
    }
    hs_database_t *db = nullptr;
    hs_compile_error_t *err = nullptr;
    if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), unsigned(exprs.size()), HS_MODE_BLOCK,
                         nullptr, &db, &err)
        != HS_SUCCESS) {
        m_error = QStringLiteral("pattern %1: %2").arg(err->expression).arg(QString::fromUtf8(err->message));
        hs_free_compile_error(err);
        return;
    }
    m_db = db;
}

HsOracle::~HsOracle()
{
    hs_free_database(static_cast<hs_database_t *>(m_db));
}

std::set<HsOracle::Match> HsOracle::scan(const QByteArray &data) const
{
    std::set<Match> out;
    if (!m_db)
        return out;
    hs_scratch_t *scratch = nullptr;
    hs_alloc_scratch(static_cast<hs_database_t *>(m_db), &scratch);
    auto onMatch = [](unsigned id, unsigned long long from, unsigned long long to, unsigned, void *ctx) -> int {
        if (to > from) // empty matches are never hits
            static_cast<std::set<Match> *>(ctx)->insert({ int(id), int64_t(from), int64_t(to) - 1 });
        return 0;
    };
    hs_scan(static_cast<hs_database_t *>(m_db), data.constData(), unsigned(data.size()), 0, scratch, onMatch, &out);
    hs_free_scratch(scratch);
    return out;
}

} // namespace TestUtil
