// SPDX-License-Identifier: GPL-3.0-or-later
#include "testutil.h"

#include "cpu/cpuengine.h"
#include "scan/scanner.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>

namespace TestUtil {

bool writeFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(data) == data.size();
}

int runCli(const QStringList &args, QByteArray *out, QByteArray *err, int timeoutMs)
{
    // The CLI keeps grouping hints in the user's cache folder: tests start from an empty one of their own.
    static QTemporaryDir cache;
    return runCliWithCache(args, cache.path(), out, err, timeoutMs);
}

int runCliWithCache(const QStringList &args, const QString &cacheHome, QByteArray *out, QByteArray *err,
                    int timeoutMs)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), cacheHome);
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(HITSCOPE_CLI), args);
    if (!p.waitForFinished(timeoutMs))
        return -1;
    if (out)
        *out = p.readAllStandardOutput();
    if (err)
        *err = p.readAllStandardError();
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
}

} // namespace TestUtil

#include <QFile>
#include <QRandomGenerator>

namespace TestUtil {

namespace {

struct RegexSpec
{
    const char *flags;
    const char *name;
    const char *regex;
};

// Bounded and unbounded patterns, with \b, ^, $, classes, caseless and counted repeats.
const RegexSpec kRegexes[] = {
    { "-", "word_num", "\\bfoo[0-9]{2,4}\\b" },
    { "-", "mz_start", "^MZ" },
    { "-", "end_mark", "END$" },
    { "i", "sql", "select\\s+\\*\\s+from" },
    { "-", "url", "https?://[a-z0-9.-]+\\.(com|org)" },
    { "-", "b64", "[A-Za-z0-9+/]{40,}={0,2}" },
    { "-", "abcf", "ab(c|de)*f" },
    { "-", "phone", "\\d{3}-\\d{4}" },
    { "-", "x_dot_y", "x.y" },
    { "s", "x_dotall_z", "x.z" },
    { "-", "get", "GET /[^ ]{1,30} HTTP" },
    { "i", "runkey", "Software\\\\Microsoft\\\\Windows\\\\CurrentVersion\\\\Run(Once)?" },
};

const char *const kPlants[] = {
    "foo123", "foo12345", "xfoo99", "END", "select   * FROM", "https://abc.example.com/x", "http://q.org",
    "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk=", "abcdecf", "abf",
    "555-1234", "x\ny", "xzy", "x\nz", "GET /index.html HTTP/1.1", "SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\RunOnce",
    "C:\\Users\\Public\\evil.exe", "MZ\x90", "Global\\Mtx_deadbeef", "needle", "ab", "aaaa",
};

QByteArray randomContent(QRandomGenerator &rng, int size)
{
    static const char *const words[] = { "the ", "quick ", "brown ", "fox ", "foo", "12", "-", "\n", "http", "://",
                                         "x", "a", "b", "c", "END", "MZ", "GET /", " HTTP", "select ", "*", " from" };
    QByteArray out;
    out.reserve(size);
    const bool binary = rng.bounded(3) == 0;
    while (out.size() < size) {
        if (binary)
            out += char(rng.bounded(256));
        else
            out += words[rng.bounded(int(sizeof words / sizeof *words))];
    }
    out.truncate(size);
    return out;
}

void plant(QByteArray &data, int64_t pos, const QByteArray &s)
{
    if (pos < 0 || pos + s.size() > data.size())
        return;
    std::copy(s.begin(), s.end(), data.begin() + pos);
}

} // namespace

GeneratedCase generateCase(const QString &root, quint32 seed, int boundary)
{
    QRandomGenerator rng(seed);
    GeneratedCase c;
    c.dir = root + QLatin1String("/corpus");
    c.literalsFile = root + QLatin1String("/iocs.txt");
    c.regexesFile = root + QLatin1String("/regexes.tsv");

    // Literal list: plain literals (backslashes are literal), one hex line, comments and an empty line.
    QByteArray lits = "# planted literals\n";
    int line = 1;
    const QByteArray plain[] = { "needle", "C:\\Users\\Public\\evil.exe", "Global\\Mtx_deadbeef", "ab", "aaaa",
                                 "HTTP/1.1", "foo1", "fox" };
    for (const QByteArray &l : plain) {
        lits += l + '\n';
        ++line;
        c.ruleNames << QStringLiteral("iocs:%1").arg(line);
        c.oracle.push_back({ literalToRegex(l) });
        c.literals.push_back(l);
    }
    lits += "\n";
    ++line;
    lits += "hex: 4D 5A ?? 0?\n";
    ++line;
    c.ruleNames << QStringLiteral("iocs:%1").arg(line);
    c.oracle.push_back({ QByteArray("\\x4d\\x5a[\\x00-\\xff][\\x00-\\x0f]") });
    writeFile(c.literalsFile, lits);

    QByteArray tsv = "# flags\tname\tregex\n";
    for (const RegexSpec &r : kRegexes) {
        tsv += QByteArray(r.flags) + '\t' + r.name + '\t' + r.regex + '\n';
        c.ruleNames << QString::fromLatin1(r.name);
        c.oracle.push_back({ QByteArray(r.regex), QByteArray(r.flags).contains('i'), QByteArray(r.flags).contains('s') });
    }
    writeFile(c.regexesFile, tsv);

    const int sizes[] = { 0, 1, 2, 7, 100, 999, 4096, 5000, 70000, 300000, 1300000 };
    int n = 0;
    for (int size : sizes) {
        for (int copy = 0; copy < 2; ++copy) {
            QByteArray data = randomContent(rng, size);
            const int plants = size / 2000 + 3;
            for (int k = 0; k < plants; ++k) {
                const QByteArray s = kPlants[rng.bounded(int(sizeof kPlants / sizeof *kPlants))];
                plant(data, rng.bounded(qMax(1, size)), s);
            }
            // Across every segment boundary, at every alignment of the planted string.
            int k = 0;
            for (int64_t b = boundary; b < size; b += boundary, ++k) {
                const QByteArray s = kPlants[k % int(sizeof kPlants / sizeof *kPlants)];
                plant(data, b - 1 - (k % qMax(1, int(s.size()))), s);
            }
            if (copy == 1 && size >= 2)
                plant(data, 0, "MZ");
            if (copy == 1 && size >= 3)
                plant(data, size - 3, "END");
            const QString path = c.dir + QStringLiteral("/d%1/f%2_%3.bin").arg(n % 3).arg(size).arg(copy);
            writeFile(path, data);
            c.files << path;
            ++n;
        }
    }
    return c;
}

std::set<std::tuple<QString, QString, int64_t, int64_t>> expectedHits(const GeneratedCase &c)
{
    std::set<std::tuple<QString, QString, int64_t, int64_t>> out;
    HsOracle oracle(c.oracle);
    if (!oracle.isValid())
        qFatal("oracle: %s", qPrintable(oracle.error()));
    for (const QString &path : c.files) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        for (const auto &[id, start, end] : oracle.scan(f.readAll()))
            out.insert({ c.ruleNames[id], path, start, end - start + 1 });
    }
    return out;
}

Hitscope::PatternCatalog compileInSmallGroups(const Hitscope::RuleSet &rules)
{
    Hitscope::CompileOptions small;
    small.maxStatesPerGroup = 40;
    return Hitscope::PatternCatalog::compile(rules, small);
}

ScanHits cpuScanHits(const Hitscope::RuleSet &rules, const Hitscope::PatternCatalog &catalog, const QString &dir,
                     const Hitscope::LaunchParams &params)
{
    Hitscope::CpuEngine engine;
    Hitscope::Scanner scanner(rules, catalog, engine);
    ScanHits hits;
    Hitscope::Scanner::Callbacks cb;
    cb.fileDone = [&](const Hitscope::FileResult &fr) {
        for (const Hitscope::Hit &h : fr.hits)
            hits.insert({ fr.path, h.pattern, h.offset, h.length });
    };
    scanner.run({ QFile::encodeName(dir) }, Hitscope::WalkOptions {}, params, cb);
    return hits;
}

} // namespace TestUtil
