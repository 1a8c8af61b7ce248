// SPDX-License-Identifier: GPL-3.0-or-later
#include "jsonescape.h"

#include <QString>

namespace Hitscope {

bool isValidUtf8(const QByteArray &s)
{
    const auto *p = reinterpret_cast<const unsigned char *>(s.constData());
    const qsizetype n = s.size();
    for (qsizetype i = 0; i < n;) {
        const unsigned char c = p[i];
        int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        if (len == 0 || i + len > n)
            return false;
        for (int k = 1; k < len; ++k)
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
        if ((len == 2 && c < 0xc2) || (len == 3 && c == 0xe0 && p[i + 1] < 0xa0)
            || (len == 3 && c == 0xed && p[i + 1] >= 0xa0) || (len == 4 && c == 0xf0 && p[i + 1] < 0x90)
            || (len == 4 && (c > 0xf4 || (c == 0xf4 && p[i + 1] >= 0x90))))
            return false;
        i += len;
    }
    return true;
}

void appendJsonString(std::string &out, const QByteArray &raw)
{
    const QByteArray s = isValidUtf8(raw) ? raw : QString::fromUtf8(raw).toUtf8();
    out += '"';
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                static const char hex[] = "0123456789abcdef";
                out += "\\u00";
                out += hex[c >> 4];
                out += hex[c & 15];
            } else {
                out += char(c);
            }
        }
    }
    out += '"';
}

} // namespace Hitscope
