// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruleeditor.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLabel>
#include <QSaveFile>
#include <QSplitter>
#include <QStringDecoder>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "codeeditor.h"
#include "diagnosticslist.h"
#include "rules/ruleloader.h"
#include "rules/rulesources.h"
#include "rules/ruleset.h"
#include "rules/yaraloader.h"
#include "ruletestpanel.h"
#include "yarahighlighter.h"

namespace Hitscope {

namespace {

constexpr int kDefaultCheckDelayMs = 350;

const char *const kNewRule = "rule new_rule\n"
                             "{\n"
                             "    strings:\n"
                             "        $a = \"text\"\n"
                             "    condition:\n"
                             "        $a\n"
                             "}\n";

bool sameFile(const QString &a, const QString &b)
{
    return QDir::cleanPath(QFileInfo(a).absoluteFilePath()) == QDir::cleanPath(QFileInfo(b).absoluteFilePath());
}

QMessageBox::StandardButton askToSave(QWidget *parent, const QString &fileName)
{
    return QMessageBox::warning(parent, RuleEditor::tr("Unsaved rules"),
                                RuleEditor::tr("%1 has changes that are not saved. Save them?").arg(fileName),
                                QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
}

} // namespace

RuleEditor::RuleEditor(QWidget *parent)
    : QWidget(parent)
{
    qRegisterMetaType<std::shared_ptr<const RuleSet>>();
    m_saveQuestion = [this](const QString &fileName) { return askToSave(this, fileName); };
    m_editor = new CodeEditor(this);
    m_editor->setObjectName(QStringLiteral("ruleText"));
    m_highlighter = new YaraHighlighter(m_editor->document(), m_editor->palette());
    m_diagnostics = new DiagnosticsList(this);
    m_test = new RuleTestPanel(this);
    m_checkTimer = new QTimer(this);
    m_checkTimer->setSingleShot(true);
    m_checkTimer->setInterval(kDefaultCheckDelayMs);
    connect(m_checkTimer, &QTimer::timeout, this, &RuleEditor::checkNow);
    connect(m_editor->document(), &QTextDocument::contentsChanged, m_checkTimer, qOverload<>(&QTimer::start));
    connect(m_editor->document(), &QTextDocument::modificationChanged, this, &RuleEditor::updateTitle);
    connect(m_editor, &CodeEditor::paletteChanged, this, [this] { m_highlighter->setPalette(m_editor->palette()); });
    connect(m_diagnostics, &DiagnosticsList::diagnosticActivated, this, [this](const RuleDiagnostic &d) {
        if (d.line > 0 && sameFile(d.file, effectivePath()))
            m_editor->goToLine(d.line);
    });
    connect(m_diagnostics, &DiagnosticsList::diagnosticsChanged, this, &RuleEditor::updateMarks);
    connect(m_test, &RuleTestPanel::testStarted, this, &RuleEditor::updateTestAction);
    connect(m_test, &RuleTestPanel::testFinished, this, &RuleEditor::updateTestAction);

    setupActions();
    setupLayout();
    setText(kNewRule, false);
    updateTitle();
    updateTestAction();
    checkNow();
}

RuleEditor::~RuleEditor() = default;

void RuleEditor::setupActions()
{
    // Shortcuts of this widget only: in a tab of the main window, its own Ctrl+S or Ctrl+O must not clash.
    const auto add = [this](QAction *action, QKeySequence shortcut) {
        action->setShortcut(shortcut);
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(action);
        return action;
    };
    m_newAction = add(new QAction(style()->standardIcon(QStyle::SP_FileIcon), tr("&New"), this), QKeySequence::New);
    m_openAction = add(new QAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open…"), this),
                       QKeySequence::Open);
    m_saveAction = add(new QAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save"), this),
                       QKeySequence::Save);
    m_saveAsAction = add(new QAction(tr("Save &As…"), this), QKeySequence::SaveAs);
    m_testAction = add(new QAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("&Test on selection"), this),
                       QKeySequence(Qt::Key_F5));
    m_testAction->setObjectName(QStringLiteral("testOnSelection"));
    connect(m_newAction, &QAction::triggered, this, &RuleEditor::onNew);
    connect(m_openAction, &QAction::triggered, this, &RuleEditor::onOpen);
    connect(m_saveAction, &QAction::triggered, this, &RuleEditor::onSave);
    connect(m_saveAsAction, &QAction::triggered, this, &RuleEditor::onSaveAs);
    connect(m_testAction, &QAction::triggered, this, &RuleEditor::onTestSelection);

    m_toolBar = new QToolBar(this);
    m_toolBar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_toolBar->addAction(m_newAction);
    m_toolBar->addAction(m_openAction);
    m_toolBar->addAction(m_saveAction);
    m_toolBar->addAction(m_saveAsAction);
    m_toolBar->addSeparator();
    m_toolBar->addAction(m_testAction);
}

void RuleEditor::setupLayout()
{
    m_notice = new QLabel(this);
    m_notice->setObjectName(QStringLiteral("editorNotice"));
    m_notice->setWordWrap(true);
    m_notice->setAutoFillBackground(true);
    m_notice->setBackgroundRole(QPalette::ToolTipBase);
    m_notice->setForegroundRole(QPalette::ToolTipText);
    m_notice->setMargin(4);
    m_notice->hide();
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("checkStatus"));
    m_status->setForegroundRole(QPalette::PlaceholderText);

    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->addWidget(m_editor);
    m_splitter->addWidget(m_diagnostics);
    m_splitter->addWidget(m_test);
    m_splitter->setStretchFactor(0, 4);
    m_splitter->setStretchFactor(1, 1);
    m_splitter->setStretchFactor(2, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_toolBar);
    layout->addWidget(m_notice);
    layout->addWidget(m_splitter, 1);
    layout->addWidget(m_status);
    resize(900, 760);
}

QString RuleEditor::effectivePath() const
{
    return m_path.isEmpty() ? QDir::current().absoluteFilePath(QStringLiteral("untitled.yar")) : m_path;
}

bool RuleEditor::isModified() const
{
    return m_editor->document()->isModified();
}

bool RuleEditor::isEditable() const
{
    return m_editable;
}

QString RuleEditor::title() const
{
    return QFileInfo(effectivePath()).fileName() + (isModified() ? QStringLiteral("*") : QString());
}

void RuleEditor::updateTitle()
{
    setWindowTitle(tr("%1[*] — Rule editor").arg(QFileInfo(effectivePath()).fileName()));
    setWindowModified(isModified());
    m_saveAction->setEnabled(m_editable);
    m_saveAsAction->setEnabled(m_editable);
    Q_EMIT titleChanged(title());
}

QByteArray RuleEditor::textBytes() const
{
    // Raw text: toPlainText() would turn no-break spaces into spaces, and a literal list means its bytes.
    QString text = m_editor->document()->toRawText();
    text.replace(QChar::ParagraphSeparator, QLatin1Char('\n'));
    if (m_crlf)
        text.replace(QLatin1Char('\n'), QLatin1String("\r\n"));
    return (m_bom ? QByteArrayLiteral("\xEF\xBB\xBF") : QByteArray()) + text.toUtf8();
}

RuleSources RuleEditor::textSources() const
{
    // A file open read only is checked and tested as it is on disk: the editor shows its bytes only roughly.
    RuleSources sources;
    if (m_editable)
        sources.setText(effectivePath(), textBytes());
    return sources;
}

void RuleEditor::setText(const QByteArray &data, bool fromFile)
{
    m_bom = data.startsWith("\xEF\xBB\xBF");
    m_crlf = data.contains("\r\n");
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = decoder.decode(m_bom ? data.mid(3) : data);
    const bool utf8 = !decoder.hasError();
    m_editor->setPlainText(text);
    // What the editor would write back must be the file's bytes: else saving would change what it did not show
    // (another encoding, mixed line endings, bytes a text document drops). Such a file is only read.
    m_editable = !fromFile || (utf8 && textBytes() == data);
    m_editor->setReadOnly(!m_editable);
    if (m_editable)
        showNotice({});
    else
        showNotice(utf8 ? tr("Read only: saving this file from the editor would change bytes it does not show "
                             "(mixed line endings or control characters). Test on selection still uses it.")
                        : tr("Read only: this file is not UTF-8 text, and saving it from the editor would change "
                             "its bytes. Test on selection still uses it."));
    m_editor->document()->setModified(false);
}

void RuleEditor::setPath(const QString &path)
{
    const QString clean = path.isEmpty() ? QString() : QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    const bool changed = clean != m_path;
    m_path = clean;
    m_diagnostics->setMainFile(effectivePath());
    updateHighlighting();
    updateTitle();
    if (changed)
        Q_EMIT filePathChanged(m_path);
}

void RuleEditor::updateHighlighting()
{
    // As RuleLoader decides what a file is: only YARA text is coloured, a list's lines are taken as they are.
    const QString suffix = QFileInfo(effectivePath()).suffix().toLower();
    const bool yara = suffix == QLatin1String("yar") || suffix == QLatin1String("yara")
        || (suffix != QLatin1String("tsv") && YaraLoader::looksLikeYara(textBytes()));
    if (yara != (m_highlighter->document() != nullptr))
        m_highlighter->setDocument(yara ? m_editor->document() : nullptr);
}

void RuleEditor::showNotice(const QString &text)
{
    m_notice->setText(text);
    m_notice->setVisible(!text.isEmpty());
}

bool RuleEditor::openFile(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = tr("Cannot open %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    const QByteArray data = file.readAll();
    if (file.error() != QFileDevice::NoError) {
        if (error)
            *error = tr("Cannot read %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    setText(data, true);
    setPath(path);
    checkNow();
    return true;
}

bool RuleEditor::saveAs(const QString &path, QString *error)
{
    if (!m_editable) {
        if (error)
            *error = tr("This file is open read only.");
        return false;
    }
    // Written whole or not at all: a failed save must not leave half a rule file where the old one was.
    QSaveFile file(path);
    const QByteArray data = textBytes();
    if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size() || !file.commit()) {
        if (error)
            *error = tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        qWarning("Hitscope: cannot save %s: %s", qPrintable(path), qPrintable(file.errorString()));
        return false;
    }
    m_editor->document()->setModified(false);
    const bool moved = !sameFile(path, effectivePath());
    setPath(path);
    // Its includes resolve from another folder now, and its suffix may make it another kind of file.
    if (moved)
        checkNow();
    Q_EMIT fileSaved(m_path);
    return true;
}

bool RuleEditor::maybeSave()
{
    if (!isModified() || !m_editable)
        return true;
    switch (m_saveQuestion(QFileInfo(effectivePath()).fileName())) {
    case QMessageBox::Save:
        return onSave();
    case QMessageBox::Discard:
        return true;
    default:
        return false;
    }
}

void RuleEditor::onNew()
{
    if (!maybeSave())
        return;
    onNewUnchecked();
}

void RuleEditor::onNewUnchecked()
{
    setText(kNewRule, false);
    setPath({});
    checkNow();
}

void RuleEditor::onOpen()
{
    if (!maybeSave())
        return;
    const QString dir = m_path.isEmpty() ? QString() : QFileInfo(m_path).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open rule file"), dir,
        tr("Rule files (*.yar *.yara *.rule *.rules *.yr *.txt *.tsv);;All files (*)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!openFile(path, &error)) {
        qWarning("Hitscope: %s", qPrintable(error));
        QMessageBox::warning(this, tr("Cannot open rules"), error);
    }
}

bool RuleEditor::onSave()
{
    if (m_path.isEmpty())
        return onSaveAs();
    QString error;
    if (saveAs(m_path, &error))
        return true;
    QMessageBox::warning(this, tr("Cannot save rules"), error);
    return false;
}

bool RuleEditor::onSaveAs()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save rule file"), effectivePath(),
        tr("YARA rules (*.yar *.yara);;Literal lists (*.txt);;Regex lists (*.tsv);;All files (*)"));
    if (path.isEmpty())
        return false;
    QString error;
    if (saveAs(path, &error))
        return true;
    QMessageBox::warning(this, tr("Cannot save rules"), error);
    return false;
}

void RuleEditor::setCheckDelay(int ms)
{
    m_checkTimer->setInterval(ms);
}

int RuleEditor::checkDelay() const
{
    return m_checkTimer->interval();
}

bool RuleEditor::isChecking() const
{
    return m_checking || m_checkTimer->isActive();
}

void RuleEditor::setExternals(const YaraExternals &externals)
{
    // The window passes its settings on every change of a launch parameter: only new externals change a check.
    if (externals == m_externals)
        return;
    m_externals = externals;
    m_test->setExternals(externals);
    checkNow();
}

void RuleEditor::setEngine(EngineChoice engine, GpuBackend backend)
{
    m_test->setEngine(engine, backend);
}

void RuleEditor::setLaunchParams(const LaunchParams &params)
{
    m_test->setLaunchParams(params);
}

void RuleEditor::setDevices(const DeviceChoice &devices)
{
    m_test->setDevices(devices);
}

void RuleEditor::checkNow()
{
    m_checkTimer->stop();
    const quint64 generation = ++m_generation;
    const QString path = effectivePath();
    const RuleSources sources = textSources();
    m_checking = true;
    m_status->setText(tr("Checking…"));
    // The front end on a pool thread: a large collection takes a while to parse, and the user types on. A
    // watcher rather than QFuture::then(this, ...): that runs at once, inside this call, when the check is done
    // before it is attached, and rulesChecked() must always come later than the call that asked for it.
    auto *watcher = new QFutureWatcher<std::shared_ptr<const RuleSet>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_generation) // the text changed since: a newer check is on its way
            return;
        m_checking = false;
        const std::shared_ptr<const RuleSet> rules = watcher->result();
        applyCheck(*rules);
        Q_EMIT rulesChecked(rules);
    });
    watcher->setFuture(QtConcurrent::run([path, sources, externals = m_externals] {
        return std::make_shared<const RuleSet>(RuleLoader::loadFiles({ path }, externals, sources));
    }));
}

void RuleEditor::applyCheck(const RuleSet &rules)
{
    QList<RuleDiagnostic> entries;
    for (const Rejection &r : rules.rejections)
        entries.push_back({ RuleDiagnostic::Severity::Error, r.file, r.errorLine > 0 ? r.errorLine : r.line, r.rule,
                            r.reason });
    for (const RuleWarning &w : rules.warnings)
        entries.push_back({ RuleDiagnostic::Severity::Warning, w.file, w.line, w.rule, w.message });
    // The other notes say how a file was read (a list, or YARA by its text); yara's warnings are above already.
    for (const QString &note : rules.notes)
        if (!note.startsWith(QLatin1String("warning: ")))
            entries.push_back({ RuleDiagnostic::Severity::Warning, effectivePath(), 0, {}, note });
    // Other sources described the text before this check.
    const QStringList sources = m_diagnostics->sources();
    for (const QString &source : sources)
        if (source != frontEndSource())
            m_diagnostics->setDiagnostics(source, {});
    m_diagnostics->setDiagnostics(frontEndSource(), entries);

    const auto count = [](qsizetype n, const QString &one, const QString &many) -> QString {
        return QString::number(n) + QLatin1Char(' ') + (n == 1 ? one : many);
    };
    m_status->setText(tr("%1, %2; %3 accepted.")
                          .arg(count(m_diagnostics->count(RuleDiagnostic::Severity::Error), tr("error"), tr("errors")),
                               count(m_diagnostics->count(RuleDiagnostic::Severity::Warning), tr("warning"),
                                     tr("warnings")),
                               count(qsizetype(rules.rules.size()), tr("rule"), tr("rules"))));
}

void RuleEditor::addWarnings(const QString &source, const QList<RuleDiagnostic> &warnings)
{
    m_diagnostics->setDiagnostics(source, warnings);
}

void RuleEditor::updateMarks()
{
    std::map<int, std::pair<CodeEditor::Mark, QString>> marks;
    const QList<RuleDiagnostic> all = m_diagnostics->diagnostics();
    const QString path = effectivePath();
    for (const RuleDiagnostic &d : all) {
        if (d.line <= 0 || !sameFile(d.file, path))
            continue;
        const CodeEditor::Mark mark =
            d.severity == RuleDiagnostic::Severity::Error ? CodeEditor::Mark::Error : CodeEditor::Mark::Warning;
        const QString text = d.rule.isEmpty() ? d.message : tr("rule %1: %2").arg(d.rule, d.message);
        auto it = marks.find(d.line);
        if (it == marks.end()) {
            marks[d.line] = { mark, text };
        } else {
            it->second.first = std::max(it->second.first, mark);
            it->second.second += QLatin1Char('\n') + text;
        }
    }
    m_editor->setLineMarks(marks);
}

void RuleEditor::setSelection(const QByteArrayList &paths)
{
    m_selection = paths;
    updateTestAction();
}

void RuleEditor::updateTestAction()
{
    const bool running = m_test->isRunning();
    m_testAction->setEnabled(!m_selection.isEmpty() && !running);
    if (running)
        m_testAction->setToolTip(tr("A test is running: cancel it below, or wait for it"));
    else if (m_selection.isEmpty())
        m_testAction->setToolTip(tr("Select files to test on first (in the Files view or the hits table)"));
    else
        m_testAction->setToolTip(m_selection.size() == 1
                                     ? tr("Scan the selected file with the rules as edited, unsaved (F5)")
                                     : tr("Scan the %1 selected files with the rules as edited, unsaved (F5)")
                                           .arg(m_selection.size()));
}

void RuleEditor::onTestSelection()
{
    if (m_selection.isEmpty() || m_test->isRunning())
        return;
    m_test->start(effectivePath(), textSources(), m_selection);
}

void RuleEditor::closeEvent(QCloseEvent *event)
{
    if (maybeSave()) {
        m_test->cancel();
        // Discarded: what the window shows when it opens again is the file as saved, not the dropped text.
        if (isModified() && m_editable) {
            if (m_path.isEmpty() || !openFile(m_path))
                onNewUnchecked();
        }
        event->accept();
    } else {
        event->ignore();
    }
}

} // namespace Hitscope
