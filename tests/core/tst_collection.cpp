// SPDX-License-Identifier: GPL-3.0-or-later
// A generated rule collection of the shape public ones have (3,000 rules, about 10,000 strings: text with the
// modifiers they use, hex with jumps, wildcards, nibbles and alternatives, regexes around literals, conditions
// with counts, offsets, loops and references to other rules) compiled and scanned by hitscope-cli and by
// yara, the oracle: every `RULE PATH` and `-s` line equal. Compile time and peak RSS of both are printed,
// never asserted: speed is the benchmark's business.
#include <QDir>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <functional>
#include <vector>

#include "testutil.h"
#include "testutilyara.h"

using namespace TestUtil;

namespace {

using Rng = QRandomGenerator;

/// Bytes that match one string, drawn afresh for every plant.
using Sampler = std::function<QByteArray(Rng &)>;

struct GeneratedString
{
    QByteArray source; ///< what follows `$id = `
    Sampler sample;
};

struct GeneratedRule
{
    QByteArray name;
    std::vector<GeneratedString> strings;
};

const char *const kSyllables[] = { "ka", "vor", "tem", "lis", "dra", "qu", "zen", "mo", "rix", "pal", "sto", "ne",
                                   "gul", "fy", "ber", "ox", "wi", "tan", "hel", "ju" };

/// Names shared by many rules, as real collections share API and tool names: these match in many files.
const char *const kShared[] = { "VirtualAllocEx", "WriteProcessMemory", "CreateRemoteThread", "GetProcAddress",
                                "LoadLibraryA", "InternetOpenUrlA", "cmd.exe /c ", "powershell -enc ",
                                "SeDebugPrivilege", "\\\\.\\pipe\\", "Software\\Microsoft\\Windows\\CurrentVersion\\Run" };

QByteArray word(Rng &rng, int minSyllables = 2)
{
    QByteArray w;
    for (int i = int(rng.bounded(minSyllables, minSyllables + 3)); i > 0; --i)
        w += kSyllables[rng.bounded(int(std::size(kSyllables)))];
    if (rng.bounded(3) == 0)
        w[0] = char(w[0] - 'a' + 'A');
    return w;
}

QByteArray digits(Rng &rng, int n)
{
    QByteArray d;
    for (int i = 0; i < n; ++i)
        d += char('0' + rng.bounded(10));
    return d;
}

QByteArray randomCase(Rng &rng, QByteArray s)
{
    for (char &c : s)
        if (rng.bounded(2))
            c = char(std::isupper(uchar(c)) ? std::tolower(uchar(c)) : std::toupper(uchar(c)));
    return s;
}

/// `s` as the body of a YARA text string.
QByteArray escapeText(const QByteArray &s)
{
    QByteArray out;
    for (char c : s) {
        const uchar u = uchar(c);
        if (c == '\\' || c == '"')
            out += '\\', out += c;
        else if (u < 0x20 || u >= 0x7f)
            out += "\\x" + QByteArray::number(u, 16).rightJustified(2, '0');
        else
            out += c;
    }
    return out;
}

QByteArray textContent(Rng &rng)
{
    static const char *const tlds[] = { "com", "net", "ru", "top", "xyz" };
    switch (rng.bounded(9)) {
    case 0:
        return "Global\\" + word(rng) + digits(rng, int(rng.bounded(0, 5)));
    case 1:
        return "C:\\Users\\Public\\" + word(rng) + ".exe";
    case 2:
        return word(rng, 3) + ".dll";
    case 3:
        return "http://" + word(rng) + "." + tlds[rng.bounded(int(std::size(tlds)))] + "/" + word(rng) + ".php";
    case 4:
        return kShared[rng.bounded(int(std::size(kShared)))];
    case 5: {
        QByteArray s;
        for (int i = int(rng.bounded(6, 20)); i > 0; --i)
            s += char(rng.bounded(' ', '~' + 1));
        return s;
    }
    case 6:
        return word(rng) + QByteArray("\x00\x01", 2) + word(rng);
    case 7:
        return "-" + word(rng) + " " + word(rng, 1);
    default:
        return word(rng, 3) + digits(rng, 2);
    }
}

GeneratedString textString(Rng &rng)
{
    const QByteArray content = textContent(rng);
    GeneratedString s { "\"" + escapeText(content) + "\"", {} };
    bool wide = false, ascii = false, nocase = false, xorMod = false, base64 = false, base64wide = false;
    const int shape = int(rng.bounded(100));
    if (shape < 15)
        wide = ascii = true;
    else if (shape < 20)
        wide = true;
    else if (shape < 33)
        nocase = true;
    else if (shape < 38)
        nocase = wide = ascii = true;
    else if (shape < 40)
        xorMod = true;
    else if (shape < 43)
        base64 = true;
    else if (shape < 45)
        base64wide = true;
    else if (shape < 46)
        base64 = base64wide = wide = true;
    if (base64 || base64wide) {
        // YARA's base64 forms: the text after 0, 1 or 2 other bytes, its edges cut (libyara/base64.c).
        if (base64)
            s.source += " base64";
        if (base64wide)
            s.source += " base64wide";
        if (wide)
            s.source += " wide";
        s.sample = [=](Rng &r) -> QByteArray {
            const QByteArray plain = QByteArray(int(r.bounded(3)), 'q') + (wide ? widen(content) : content)
                + QByteArray(int(r.bounded(3)), 'z');
            const QByteArray encoded = plain.toBase64();
            return base64wide && (!base64 || r.bounded(2)) ? widen(encoded) : encoded;
        };
        return s;
    }
    if (wide)
        s.source += " wide";
    if (ascii)
        s.source += " ascii";
    if (nocase)
        s.source += " nocase";
    // Keys: all, one, or a range; a fifth of the plants use a key outside it (yara then finds nothing).
    int keyLow = 0, keyHigh = 255;
    if (xorMod) {
        const int keys = int(rng.bounded(3));
        if (keys == 0) {
            s.source += " xor";
        } else if (keys == 1) {
            keyLow = keyHigh = int(rng.bounded(1, 256));
            s.source += " xor(" + QByteArray::number(keyLow) + ")";
        } else {
            keyLow = int(rng.bounded(1, 128));
            keyHigh = keyLow + int(rng.bounded(1, 64));
            s.source += " xor(" + QByteArray::number(keyLow) + "-" + QByteArray::number(keyHigh) + ")";
        }
    }
    const bool fullword = rng.bounded(10) == 0;
    if (fullword)
        s.source += " fullword";
    if (rng.bounded(30) == 0)
        s.source += " private";
    s.sample = [=](Rng &r) -> QByteArray {
        QByteArray bytes = nocase ? randomCase(r, content) : content;
        if (wide && (!ascii || r.bounded(2)))
            bytes = widen(bytes);
        if (xorMod) {
            const char key = char(r.bounded(5) ? r.bounded(keyLow, keyHigh + 1) : r.bounded(256));
            for (char &c : bytes)
                c ^= key;
        }
        return bytes;
    };
    return s;
}

GeneratedString hexString(Rng &rng, int maxJumps)
{
    // One token per element: its source and how to draw bytes for it.
    struct Token
    {
        QByteArray source;
        Sampler sample;
    };
    std::vector<Token> tokens;
    const auto fixed = [&] {
        const uchar b = uchar(rng.bounded(256));
        tokens.push_back({ QByteArray::number(b, 16).rightJustified(2, '0').toUpper(),
                           [b](Rng &) -> QByteArray { return QByteArray(1, char(b)); } });
    };
    const int lead = int(rng.bounded(3, 6));
    for (int i = 0; i < lead; ++i)
        fixed();
    bool lastWasJump = false;
    int jumpsLeft = maxJumps;
    for (int i = int(rng.bounded(2, 12)); i > 0; --i) {
        const int kind = int(rng.bounded(100));
        if (kind < 70) {
            fixed();
            lastWasJump = false;
            continue;
        }
        if (kind < 80) {
            tokens.push_back({ "??", [](Rng &r) -> QByteArray { return QByteArray(1, char(r.bounded(256))); } });
        } else if (kind < 85) {
            const uchar nibble = uchar(rng.bounded(16));
            const bool high = rng.bounded(2);
            const QByteArray digit = QByteArray::number(nibble, 16).toUpper();
            tokens.push_back({ high ? QByteArray(digit + "?") : QByteArray("?" + digit),
                               [=](Rng &r) -> QByteArray {
                                   const uchar other = uchar(r.bounded(16));
                                   return QByteArray(1, char(high ? (nibble << 4 | other) : (other << 4 | nibble)));
                               } });
        } else if (kind < 92) {
            const uchar a = uchar(rng.bounded(256)), b = uchar(rng.bounded(256)), c = uchar(rng.bounded(256));
            const auto hex = [](uchar v) { return QByteArray::number(v, 16).rightJustified(2, '0').toUpper(); };
            tokens.push_back({ "( " + hex(a) + " " + hex(b) + " | " + hex(c) + " )", [=](Rng &r) -> QByteArray {
                                  return r.bounded(2) ? QByteArray { char(a), char(b) } : QByteArray(1, char(c));
                              } });
        } else if (!lastWasJump && jumpsLeft > 0) {
            --jumpsLeft;
            static const int jumps[][2] = { { 0, 8 }, { 2, 4 }, { 4, 16 }, { 1, 1 }, { 16, 64 } };
            const auto &j = jumps[rng.bounded(int(std::size(jumps)))];
            const int lo = j[0], hi = j[1];
            tokens.push_back({ lo == hi ? QByteArray("[" + QByteArray::number(lo) + "]")
                                        : QByteArray("[" + QByteArray::number(lo) + "-" + QByteArray::number(hi) + "]"),
                               [=](Rng &r) -> QByteArray {
                                   QByteArray gap;
                                   for (int n = int(r.bounded(lo, hi + 1)); n > 0; --n)
                                       gap += char(r.bounded(256));
                                   return gap;
                               } });
            lastWasJump = true;
            continue;
        }
        lastWasJump = false;
    }
    fixed();
    fixed();
    GeneratedString s { "{", {} };
    for (const Token &t : tokens)
        s.source += " " + t.source;
    s.source += " }";
    s.sample = [tokens](Rng &r) -> QByteArray {
        QByteArray bytes;
        for (const Token &t : tokens)
            bytes += t.sample(r);
        return bytes;
    };
    return s;
}

GeneratedString regexString(Rng &rng)
{
    const QByteArray w = word(rng), x = word(rng);
    GeneratedString s;
    switch (rng.bounded(9)) {
    case 0:
        s = { "/" + w + "[0-9]{2,6}/", [=](Rng &r) -> QByteArray { return w + digits(r, int(r.bounded(2, 7))); } };
        break;
    case 1:
        s = { "/https?:\\/\\/[a-z0-9]{4,12}\\.(com|net|org)\\/" + w + "/", [=](Rng &r) -> QByteArray {
                 QByteArray host;
                 for (int i = int(r.bounded(4, 13)); i > 0; --i)
                     host += char(r.bounded(3) ? 'a' + r.bounded(26) : '0' + r.bounded(10));
                 return QByteArray(r.bounded(2) ? "https://" : "http://") + host + ".net/" + w;
             } };
        break;
    case 2:
        s = { "/" + w + "\\.(exe|dll|sys)/i", [=](Rng &r) -> QByteArray { return randomCase(r, w + (r.bounded(2) ? ".dll" : ".SYS")); } };
        break;
    case 3:
        s = { "/" + w + ".{0,16}" + x + "/s", [=](Rng &r) -> QByteArray {
                 QByteArray gap;
                 for (int i = int(r.bounded(17)); i > 0; --i)
                     gap += char(r.bounded(256));
                 return w + gap + x;
             } };
        break;
    case 4:
        s = { "/[a-f0-9]{8}-" + w + "/", [=](Rng &r) -> QByteArray {
                 QByteArray h;
                 for (int i = 0; i < 8; ++i)
                     h += "0123456789abcdef"[r.bounded(16)];
                 return h + "-" + w;
             } };
        break;
    case 5:
        s = { "/\\\\\\\\\\.\\\\pipe\\\\" + w + "[0-9]*/", [=](Rng &r) -> QByteArray { return "\\\\.\\pipe\\" + w + digits(r, int(r.bounded(4))); } };
        break;
    case 6:
        s = { "/" + w + "\\s*=\\s*\"[^\"]{1,20}\"/", [=](Rng &r) -> QByteArray {
                 return w + (r.bounded(2) ? " = " : "=") + "\"" + word(r) + "\"";
             } };
        break;
    case 7:
        s = { "/" + w + "[^\\x00]{0,6}\\x00/", [=](Rng &r) -> QByteArray { return w + digits(r, int(r.bounded(7))) + QByteArray(1, '\0'); } };
        break;
    default:
        // A word between counted classes, as detection rules write command lines.
        s = { "/-[a-z]{1,3} [A-Za-z0-9]{2,10} " + w + "/", [=](Rng &r) -> QByteArray {
                 return "-" + QByteArray(1, char('a' + r.bounded(26))) + " " + digits(r, int(r.bounded(2, 10))) + " " + w;
             } };
    }
    const int mod = int(rng.bounded(20));
    if (mod == 0) {
        s.source += " wide ascii";
        const Sampler inner = s.sample;
        s.sample = [inner](Rng &r) -> QByteArray { return r.bounded(2) ? widen(inner(r)) : inner(r); };
    } else if (mod == 1) {
        s.source += " fullword";
    }
    return s;
}

GeneratedString randomString(Rng &rng, int maxHexJumps)
{
    const int kind = int(rng.bounded(100));
    if (kind < 62)
        return textString(rng);
    if (kind < 86)
        return hexString(rng, maxHexJumps);
    return regexString(rng);
}

QByteArray condition(Rng &rng, int aCount, int bCount, const std::vector<QByteArray> &earlier)
{
    // Every string is used (yara refuses a rule with one that is not): each form ends in one that uses them all.
    const int total = aCount + bCount;
    QByteArray c;
    switch (rng.bounded(16)) {
    case 0:
        c = "all of them";
        break;
    case 9:
        c = "50% of them";
        break;
    case 10:
        c = "any of them in (0..filesize \\ 2) or all of them";
        break;
    case 11:
        c = "#a0 in (0..4096) >= 1 or all of them";
        break;
    case 12:
        c = "any of them and filesize * 1.5 > 96.5";
        break;
    case 13:
        c = "none of ($a*) or all of them";
        break;
    case 14:
        if (!earlier.empty()) {
            c = "1 of (" + earlier[rng.bounded(int(earlier.size()))] + ", " + earlier.front() + ") or any of them";
            break;
        }
        [[fallthrough]];
    case 1:
        c = QByteArray::number(rng.bounded(1, total + 1)) + " of them";
        break;
    case 2:
        c = "uint16(0) == 0x5A4D and any of them";
        break;
    case 3:
        c = "uint16(0) == 0x5A4D and filesize < 40KB and " + QByteArray::number(std::min(total, 2)) + " of them";
        break;
    case 4:
        c = bCount ? QByteArray("any of ($a*) and " + QByteArray::number(rng.bounded(1, bCount + 1)) + " of ($b*)")
                   : QByteArray("all of ($a*)");
        break;
    case 5:
        c = "#a0 >= 2 or all of them";
        break;
    case 6:
        c = "$a0 in (0..8192) and any of them";
        break;
    case 7:
        c = "for any i in (1..#a0) : (@a0[i] > 1000) and any of them";
        break;
    case 8:
        if (!earlier.empty()) {
            c = earlier[rng.bounded(int(earlier.size()))] + " or all of them";
            break;
        }
        [[fallthrough]];
    default:
        c = "any of them";
    }
    return c;
}

struct Collection
{
    QByteArray text;
    std::vector<GeneratedRule> rules;
    int strings = 0;
};

Collection generateCollection(Rng &rng, int ruleCount, int maxHexJumps)
{
    Collection col;
    std::vector<QByteArray> earlier;
    for (int r = 0; r < ruleCount; ++r) {
        GeneratedRule rule { "gen_" + word(rng, 1) + "_" + QByteArray::number(r), {} };
        const int aCount = int(rng.bounded(1, 4));
        const int bCount = int(rng.bounded(0, 4));
        QByteArray body;
        for (int i = 0; i < aCount + bCount; ++i) {
            GeneratedString s = randomString(rng, maxHexJumps);
            body += "    $" + QByteArray(i < aCount ? "a" : "b") + QByteArray::number(i < aCount ? i : i - aCount)
                + " = " + s.source + "\n";
            rule.strings.push_back(std::move(s));
        }
        col.strings += aCount + bCount;
        const bool isPrivate = rng.bounded(25) == 0;
        col.text += QByteArray(isPrivate ? "private rule " : "rule ") + rule.name;
        if (rng.bounded(3) == 0)
            col.text += " : " + word(rng, 1) + (rng.bounded(2) ? " windows" : "");
        col.text += " {\n  meta:\n    author = \"generated\"\n    score = " + QByteArray::number(rng.bounded(100))
            + "\n    reviewed = " + (rng.bounded(2) ? "true" : "false") + "\n  strings:\n" + body
            + "  condition:\n    " + condition(rng, aCount, bCount, earlier) + "\n}\n\n";
        earlier.push_back(rule.name);
        col.rules.push_back(std::move(rule));
    }
    return col;
}

QByteArray filler(Rng &rng, bool text, int size)
{
    QByteArray f;
    while (f.size() < size) {
        if (text) {
            f += word(rng, 1);
            f += rng.bounded(8) ? ' ' : '\n';
        } else {
            f += char(rng.bounded(256));
        }
    }
    return f;
}

/// Files of text and binary (half with an MZ header), with the strings of a few rules planted whole or in part,
/// next to letters or delimiters (fullword cases), and copies with one byte changed (near misses).
QByteArray corpusFile(Rng &rng, const Collection &col)
{
    const bool text = rng.bounded(3) == 0;
    QByteArray data;
    if (!text && rng.bounded(2))
        data = QByteArray("MZ\x90\x00", 4);
    data += filler(rng, text, int(rng.bounded(64, 4096)));
    for (int k = int(rng.bounded(0, 14)); k > 0; --k) {
        const GeneratedRule &rule = col.rules[rng.bounded(int(col.rules.size()))];
        for (const GeneratedString &s : rule.strings) {
            if (rng.bounded(10) < 3)
                continue;
            QByteArray bytes = s.sample(rng);
            if (rng.bounded(8) == 0 && !bytes.isEmpty())
                bytes[rng.bounded(int(bytes.size()))] ^= char(1 + rng.bounded(255));
            const int around = int(rng.bounded(4));
            const QByteArray edge = around == 0 ? QByteArray("x") : around == 1 ? QByteArray(1, '\0') : QByteArray(" ");
            data += edge + bytes + edge;
            data += filler(rng, text, int(rng.bounded(0, 3000)));
        }
    }
    return data;
}

} // namespace

class TestCollection : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void collectionEqualsYara_data();
    void collectionEqualsYara();

private:
    QTemporaryDir m_tmp;
};

void TestCollection::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    QVERIFY2(!QStandardPaths::findExecutable(QStringLiteral("yara")).isEmpty(),
             "yara (the oracle) is not installed: run packaging/setup.sh");
}

void TestCollection::collectionEqualsYara_data()
{
    QTest::addColumn<quint32>("seed");
    QTest::addColumn<int>("rules");
    QTest::addColumn<int>("maxHexJumps");
    QTest::addColumn<QStringList>("extra");
    const QStringList cpu { QStringLiteral("--engine"), QStringLiteral("cpu") };
    QTest::addRow("cpu 3000 rules") << 7u << 3000 << 4 << cpu;
    // Small batches and segments: matches across their edges, and files split over batches.
    QTest::addRow("cpu 3000 rules small batches")
        << 8u << 3000 << 4
        << (cpu + QStringList { QStringLiteral("--batch-bytes"), QStringLiteral("256K"), QStringLiteral("--segment-bytes"),
                                QStringLiteral("4K") });
    // The GPU engine on the same kinds of rules, fewer (lavapipe runs its shaders on this machine's CPU). Its DFAs
    // are built whole, where hex strings with several wide jumps explode: those it still rejects (see
    // docs/benchmarks.md, GPU), so its hex strings have a jump at most.
    QTest::addRow("gpu 300 rules") << 9u << 300 << 1 << QStringList { QStringLiteral("--engine"), QStringLiteral("gpu") };
}

void TestCollection::collectionEqualsYara()
{
    QFETCH(quint32, seed);
    QFETCH(int, rules);
    QFETCH(int, maxHexJumps);
    QFETCH(QStringList, extra);
    Rng rng(seed);
    const Collection col = generateCollection(rng, rules, maxHexJumps);
    const QString root = m_tmp.filePath(QStringLiteral("seed%1").arg(seed));
    const QString rulesFile = root + QStringLiteral("/collection.yar");
    QVERIFY(writeFile(rulesFile, col.text));
    const QString dir = root + QStringLiteral("/corpus");
    for (int f = 0; f < 200; ++f)
        QVERIFY(writeFile(dir + QStringLiteral("/f%1.bin").arg(f), corpusFile(rng, col)));
    const QString empty = root + QStringLiteral("/empty");
    QVERIFY(QDir().mkpath(empty));

    // Compile alone (an empty folder), each from a cold start, the way the benchmark's compile row measures it.
    const QString cache = root + QStringLiteral("/cache");
    const QStringList env { QStringLiteral("XDG_CACHE_HOME=") + cache };
    const MeasuredRun yaraCompile = runMeasured(QStringLiteral("yara"), { rulesFile, empty });
    QVERIFY2(yaraCompile.exitCode == 0, yaraCompile.err.constData());
    const MeasuredRun ourCompile =
        runMeasured(QStringLiteral(HITSCOPE_CLI), QStringList { QStringLiteral("scan"), QStringLiteral("-r"), rulesFile } + extra + QStringList { empty }, env);
    QVERIFY2(ourCompile.exitCode == 0 || ourCompile.exitCode == 2, ourCompile.err.constData());
    qInfo("%d rules, %d strings: compile %.2f s, peak RSS %ld MiB (yara %.2f s, %ld MiB)", rules, col.strings,
          ourCompile.seconds, ourCompile.peakRssKiB / 1024, yaraCompile.seconds, yaraCompile.peakRssKiB / 1024);
    // The generator writes only what both accept: a rejection here is a front-end regression.
    QVERIFY2(!ourCompile.err.contains("rejected") && !ourCompile.err.contains("error"), ourCompile.err.constData());

    const MeasuredRun yara = runMeasured(QStringLiteral("yara"), { QStringLiteral("-s"), QStringLiteral("-r"), rulesFile, dir });
    QVERIFY2(yara.exitCode == 0, yara.err.constData());
    QStringList args { QStringLiteral("scan"), QStringLiteral("-s"), QStringLiteral("-r"), rulesFile };
    args += extra;
    args += dir;
    const MeasuredRun ours = runMeasured(QStringLiteral(HITSCOPE_CLI), args, env);
    QVERIFY2(ours.exitCode == 0 || ours.exitCode == 2, ours.err.constData());
    qInfo("scan of %d files with -s: %.2f s, peak RSS %ld MiB (yara %.2f s, %ld MiB)", 200, ours.seconds,
          ours.peakRssKiB / 1024, yara.seconds, yara.peakRssKiB / 1024);

    const YaraReport expected = parseYaraReport(yara.out);
    const YaraReport got = parseYaraReport(ours.out);
    // The case must test something: many rules matching, in many files.
    QVERIFY2(expected.size() > 100, qPrintable(QStringLiteral("yara reported only %1 matches").arg(expected.size())));
    QVERIFY2(expected == got, qPrintable(describeReportDifference(expected, got) + QStringLiteral("\nstderr: ")
                                         + QString::fromUtf8(ours.err.left(2000))));

    // Without -s: the same rule lines (strings only counted by conditions are not listed, but still decide).
    args.removeOne(QStringLiteral("-s"));
    const MeasuredRun oursRules = runMeasured(QStringLiteral(HITSCOPE_CLI), args, env);
    QByteArray yaraErr;
    QList<QByteArray> yaraRules = runYara({ QStringLiteral("-r"), rulesFile, dir }, &yaraErr).split('\n');
    QList<QByteArray> gotRules = oursRules.out.split('\n');
    std::sort(yaraRules.begin(), yaraRules.end());
    std::sort(gotRules.begin(), gotRules.end());
    QCOMPARE(gotRules, yaraRules);
}

QTEST_GUILESS_MAIN(TestCollection)
#include "tst_collection.moc"
