// SPDX-License-Identifier: GPL-3.0-or-later
#include "shardmerger.h"

#include <algorithm>
#include <memory>
#include <map>
#include <vector>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "report/profilemerger.h"
#include "report/recordwriter.h"

namespace Hitscope {

namespace {

// A path's place in the walk: its root's index among the paths given, then its names below the root.
struct WalkKey
{
    int root = 0;
    QByteArrayList names;

    bool operator<(const WalkKey &o) const
    {
        if (root != o.root)
            return root < o.root;
        return std::lexicographical_compare(names.begin(), names.end(), o.names.begin(), o.names.end());
    }
    bool operator==(const WalkKey &o) const { return root == o.root && names == o.names; }
};

WalkKey walkKey(const QByteArray &path, const QByteArrayList &roots)
{
    for (int r = 0; r < roots.size(); ++r) {
        const QByteArray &root = roots[r];
        if (path == root)
            return { r, {} };
        if (path.startsWith(root) && path.size() > root.size() && path[root.size()] == '/')
            return { r, path.mid(root.size() + 1).split('/') };
    }
    return { int(roots.size()), path.split('/') };
}

// One part's output, read a record at a time.
class Part
{
public:
    explicit Part(const QString &path)
        : m_file(path)
    {
    }

    bool open(QString *error)
    {
        if (m_file.open(QIODevice::ReadOnly))
            return true;
        *error = QStringLiteral("%1: cannot read it: %2").arg(m_file.fileName(), m_file.errorString());
        return false;
    }

    /// The next record into line/object; false at the end of the file or, with `error`, on a malformed line.
    bool next(QString *error)
    {
        line = readLine();
        ++m_lineNumber;
        if (line.isEmpty()) {
            if (m_file.error() != QFileDevice::NoError)
                *error = QStringLiteral("%1: %2").arg(m_file.fileName(), m_file.errorString());
            return false;
        }
        if (!line.endsWith('\n'))
            line += '\n';
        // A file's records (the bulk, and a match record can be megabytes) are read no further than their type and
        // file; the rest, and any record written otherwise, are parsed whole.
        if (quickFields())
            return true;
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &parseError);
        if (!doc.isObject()) {
            *error = QStringLiteral("%1:%2: not a JSON record (%3)")
                         .arg(m_file.fileName())
                         .arg(m_lineNumber)
                         .arg(parseError.errorString());
            return false;
        }
        object = doc.object();
        type = object.value(QLatin1String("type")).toString();
        file = object.value(QLatin1String("file")).toString().toUtf8();
        return true;
    }

    // {"type":"T","file":"F", as RecordWriter begins hit, match, console and problem records.
    bool quickFields()
    {
        static const QByteArray head("{\"type\":\"");
        static const QByteArray fileKey(",\"file\":");
        if (!line.startsWith(head))
            return false;
        const qsizetype typeEnd = line.indexOf('"', head.size());
        if (typeEnd < 0)
            return false;
        const QByteArray t = line.mid(head.size(), typeEnd - head.size());
        if (t != "hit" && t != "match" && t != "console" && t != "problem")
            return false;
        if (line.mid(typeEnd + 1, fileKey.size()) != fileKey)
            return false;
        const qsizetype begin = typeEnd + 1 + fileKey.size();
        if (begin >= line.size() || line[begin] != '"')
            return false;
        qsizetype end = begin + 1;
        while (end < line.size() && line[end] != '"')
            end += line[end] == '\\' ? 2 : 1;
        if (end >= line.size())
            return false;
        // The path's JSON string, decoded by the JSON parser (escapes and all).
        const QJsonDocument doc = QJsonDocument::fromJson('[' + line.mid(begin, end - begin + 1) + ']');
        if (!doc.isArray())
            return false;
        type = QString::fromLatin1(t);
        file = doc.array().at(0).toString().toUtf8();
        object = QJsonObject();
        return true;
    }

    QString where() const { return QStringLiteral("%1:%2").arg(m_file.fileName()).arg(m_lineNumber); }
    QString name() const { return m_file.fileName(); }

    QByteArray line;
    QJsonObject object; // the whole record, but for a file's records (quickFields)
    QString type;
    QByteArray file;
    int index = 0; // 1-based, as the part's record says
    int count = 0;
    QByteArrayList roots;
    QJsonArray rules;
    bool done = false; // its summary was read
    int profiles = 0;  // its profile records (--profile)
    // Its problems (in the walk's order) and rejections, counted: a line twice in one part is two records.
    std::map<std::pair<WalkKey, QByteArray>, int> problems;
    std::vector<QByteArray> rejectionOrder;
    std::map<QByteArray, int> rejections;
    QJsonObject summary;
    WalkKey key;

private:
    // QIODevice::readLine goes through the device a few bytes at a time: lines of megabytes took most of a merge.
    QByteArray readLine()
    {
        qsizetype from = m_at; // where the search for the line's end goes on
        for (;;) {
            const qsizetype nl = m_buffer.indexOf('\n', from);
            if (nl >= 0 || m_eof) {
                const qsizetype end = nl >= 0 ? nl + 1 : m_buffer.size();
                QByteArray out = m_buffer.mid(m_at, end - m_at);
                m_at = end;
                return out;
            }
            m_buffer.remove(0, m_at);
            m_at = 0;
            from = m_buffer.size();
            const QByteArray more = m_file.read(qint64(1) << 20);
            if (more.isEmpty())
                m_eof = true;
            m_buffer += more;
        }
    }

    QFile m_file;
    QByteArray m_buffer;
    qsizetype m_at = 0;
    bool m_eof = false;
    int m_lineNumber = 0;
};

class Merge
{
public:
    Merge(const QStringList &files, QIODevice &out)
        : m_out(out)
    {
        for (const QString &f : files)
            m_parts.push_back(std::make_unique<Part>(f));
    }

    int run(QString *error)
    {
        if (!readHeaders(error) || !checkParts(error) || !copyRejections(error) || !mergeFiles(error)
            || !checkFinished(error) || !checkProfiles(error))
            return -1;
        writeProblems();
        writeProfiles();
        const int exitCode = writeSummary();
        if (m_writeFailed) {
            *error = QStringLiteral("cannot write the merged records: %1").arg(m_out.errorString());
            return -1;
        }
        return exitCode;
    }

private:
    bool readHeaders(QString *error)
    {
        for (auto &p : m_parts) {
            if (!p->open(error))
                return false;
            QString why;
            if (!p->next(&why) || p->type != QLatin1String("shard")) {
                *error = why.isEmpty() ? QStringLiteral("%1: not the --json output of a sharded scan (it does not "
                                                        "start with a shard record: scan with --shard K/N --json)")
                                             .arg(p->name())
                                       : why;
                return false;
            }
            p->index = p->object.value(QLatin1String("index")).toInt();
            p->count = p->object.value(QLatin1String("count")).toInt();
            for (const QJsonValue &v : p->object.value(QLatin1String("paths")).toArray())
                p->roots.push_back(v.toString().toUtf8());
            p->rules = p->object.value(QLatin1String("rules")).toArray();
        }
        return true;
    }

    bool checkParts(QString *error)
    {
        const Part &first = *m_parts.front();
        std::vector<const Part *> byIndex(size_t(std::max(first.count, 0)) + 1, nullptr);
        for (const auto &p : m_parts) {
            if (p->count != first.count || p->roots != first.roots || p->rules != first.rules) {
                *error = QStringLiteral("%1 is part %2/%3 of another scan than %4 (part %5/%6): other paths, rules or "
                                        "parts")
                             .arg(p->name())
                             .arg(p->index)
                             .arg(p->count)
                             .arg(first.name())
                             .arg(first.index)
                             .arg(first.count);
                return false;
            }
            if (p->index < 1 || p->index > p->count) {
                *error = QStringLiteral("%1: part %2 of %3 does not exist").arg(p->name()).arg(p->index).arg(p->count);
                return false;
            }
            if (const Part *other = byIndex[size_t(p->index)]) {
                *error = QStringLiteral("part %1/%2 is given twice: %3 and %4")
                             .arg(p->index)
                             .arg(p->count)
                             .arg(other->name(), p->name());
                return false;
            }
            byIndex[size_t(p->index)] = p.get();
        }
        QStringList missing;
        for (int k = 1; k <= first.count; ++k)
            if (!byIndex[size_t(k)])
                missing.push_back(QStringLiteral("%1/%2").arg(k).arg(first.count));
        if (!missing.isEmpty()) {
            *error = QStringLiteral("missing part(s) %1: every part's output is needed").arg(missing.join(QLatin1String(", ")));
            return false;
        }
        std::sort(m_parts.begin(), m_parts.end(), [](const auto &a, const auto &b) { return a->index < b->index; });
        return true;
    }

    // Every part reports the rule files' rejections first, the same ones: written once (as often as in the part
    // that has a line most often), in the first part's order.
    bool copyRejections(QString *error)
    {
        std::vector<QByteArray> order;
        std::map<QByteArray, int> most;
        for (auto &p : m_parts) {
            if (!advance(*p, error))
                return false;
            std::map<QByteArray, int> here;
            while (!p->done && p->type == QLatin1String("rejection")) {
                if (!most.count(p->line))
                    order.push_back(p->line);
                most[p->line] = std::max(most[p->line], ++here[p->line]);
                if (!advance(*p, error))
                    return false;
            }
        }
        for (const QByteArray &line : order)
            for (int k = 0; k < most[line]; ++k)
                write(line);
        m_rejectionCount = 0;
        for (const auto &[line, n] : most)
            m_rejectionCount += n;
        return true;
    }

    void write(const QByteArray &bytes)
    {
        if (m_out.write(bytes) != bytes.size())
            m_writeFailed = true;
    }

    // Reads the part's next file record and its walk key; problems are kept aside (written after the files: a
    // scan reports them when it meets them, which is not the walk's order); a summary ends the part.
    bool advance(Part &p, QString *error)
    {
        while (!p.done) {
            QString why;
            if (!p.next(&why)) {
                *error = !why.isEmpty() ? why
                                        : QStringLiteral("%1 (part %2/%3) ends without a summary record: that part "
                                                         "did not finish; scan it again")
                                              .arg(p.name())
                                              .arg(p.index)
                                              .arg(p.count);
                return false;
            }
            if (p.type == QLatin1String("summary")) {
                p.done = true;
                p.summary = p.object;
                QString extra;
                if (p.next(&extra)) {
                    *error = QStringLiteral("%1: a record after the summary").arg(p.where());
                    return false;
                }
                return true;
            }
            if (p.type == QLatin1String("rejection"))
                return true;
            if (p.type == QLatin1String("profile")) {
                QString why;
                if (!m_profiles.add(p.object, &why)) {
                    *error = QStringLiteral("%1: %2").arg(p.where(), why);
                    return false;
                }
                ++p.profiles;
                continue;
            }
            static const QStringList fileTypes { QStringLiteral("hit"), QStringLiteral("match"),
                                                 QStringLiteral("console"), QStringLiteral("problem") };
            if (!fileTypes.contains(p.type)) {
                *error = QStringLiteral("%1: a record of type '%2' does not belong in a scan's output")
                             .arg(p.where(), p.type);
                return false;
            }
            p.key = walkKey(p.file, p.roots);
            if (p.type != QLatin1String("problem"))
                return true;
            ++p.problems[{ p.key, p.line }];
        }
        return true;
    }

    bool mergeFiles(QString *error)
    {
        for (;;) {
            Part *next = nullptr;
            for (auto &p : m_parts)
                if (!p->done && (!next || p->key < next->key))
                    next = p.get();
            if (!next)
                return true;
            if (next->type == QLatin1String("rejection")) {
                *error = QStringLiteral("%1: a rejection after the files' records").arg(next->where());
                return false;
            }
            write(next->line);
            if (!advance(*next, error))
                return false;
        }
    }

    // A folder's problem is every part's: kept once (as often as in the part that has it most often).
    void writeProblems()
    {
        std::map<std::pair<WalkKey, QByteArray>, int> most;
        for (const auto &p : m_parts)
            for (const auto &[problem, n] : p->problems)
                most[problem] = std::max(most[problem], n);
        m_problemCount = 0;
        for (const auto &[problem, n] : most) {
            for (int k = 0; k < n; ++k)
                write(problem.second);
            m_problemCount += n;
        }
    }

    // A part stopped before its end (a signal, a time limit) wrote a summary, but not all its files.
    bool checkFinished(QString *error)
    {
        for (const auto &p : m_parts) {
            if (p->summary.value(QLatin1String("cancelled")).toBool()) {
                *error = QStringLiteral("%1 (part %2/%3) was stopped before it finished: scan it again")
                             .arg(p->name())
                             .arg(p->index)
                             .arg(p->count);
                return false;
            }
        }
        return true;
    }

    // Rules profiled in some parts only would sum to a profile of part of the files.
    bool checkProfiles(QString *error)
    {
        const Part *with = nullptr, *without = nullptr;
        for (const auto &p : m_parts)
            (p->profiles > 0 ? with : without) = p.get();
        if (with && without) {
            *error = QStringLiteral("%1 has profile records and %2 has none: scan every part with --profile, or none")
                         .arg(with->name(), without->name());
            return false;
        }
        return true;
    }

    void writeProfiles()
    {
        if (m_profiles.empty())
            return;
        int64_t bytes = 0;
        for (const auto &p : m_parts)
            bytes += p->summary.value(QLatin1String("bytes")).toInteger();
        std::string lines;
        m_profiles.write(lines, bytes);
        write(QByteArray::fromStdString(lines));
    }

    int writeSummary()
    {
        RecordWriter::Summary s;
        bool failed = false;
        QString engine;
        for (const auto &p : m_parts) {
            const QJsonObject &o = p->summary;
            s.files += o.value(QLatin1String("files")).toInteger();
            s.bytes += o.value(QLatin1String("bytes")).toInteger();
            s.hits += o.value(QLatin1String("hits")).toInteger();
            s.batches += o.value(QLatin1String("batches")).toInteger();
            s.wallMs = std::max(s.wallMs, o.value(QLatin1String("wall_ms")).toDouble());
            s.cancelled = s.cancelled || o.value(QLatin1String("cancelled")).toBool();
            failed = failed || o.value(QLatin1String("exit_code")).toInt() == 1;
            const QString e = o.value(QLatin1String("engine")).toString();
            engine = engine.isEmpty() || engine == e ? e : QStringLiteral("mixed");
        }
        s.problems = m_problemCount;
        s.rejections = m_rejectionCount;
        s.engine = engine;
        s.exitCode = failed ? 1 : (s.problems > 0 || s.rejections > 0 || s.cancelled) ? 2 : 0;
        std::string line;
        RecordWriter::summary(line, s);
        write(QByteArray::fromStdString(line));
        return s.exitCode;
    }

    QIODevice &m_out;
    std::vector<std::unique_ptr<Part>> m_parts;
    int64_t m_rejectionCount = 0;
    int64_t m_problemCount = 0;
    bool m_writeFailed = false;
    ProfileMerger m_profiles;
};

} // namespace

int ShardMerger::merge(const QStringList &files, QIODevice &out, QString *error)
{
    if (files.isEmpty()) {
        *error = QStringLiteral("no output to merge");
        return -1;
    }
    Merge merge(files, out);
    return merge.run(error);
}

} // namespace Hitscope
