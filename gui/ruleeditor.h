// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <memory>

#include <QByteArrayList>
#include <QMessageBox>
#include <QWidget>

#include "engine/devicechoice.h"
#include "engine/enginechoice.h"
#include "engine/launchparams.h"
#include "gpu/gpudeviceinfo.h"
#include "rulediagnostic.h"
#include "rules/rulesources.h"
#include "rules/yaraconditioncompiler.h"

class QAction;
class QLabel;
class QSplitter;
class QTimer;
class QToolBar;

namespace Hitscope {

class CodeEditor;
class DiagnosticsList;
class RuleTestPanel;
class YaraHighlighter;
struct RuleSet;

/**
 * Edits one rule file (YARA, or a literal or regex list): New, Open, Save, Save As, with the file's name and a
 * modified mark in title(). As the user types, the text (never saved for it) goes through the YARA front end
 * off the GUI thread, a moment after the last keystroke; rejected rules are listed as errors and yara's
 * warnings as warnings, and their lines are marked. "Test on selection" scans the files given to
 * setSelection() with the rules as edited and shows the hits under the editor.
 *
 * A widget of its own: a tab or a window. A window asks before closing over unsaved changes; a tab's owner calls
 * maybeSave().
 */
class RuleEditor : public QWidget
{
    Q_OBJECT
public:
    /// Asked before unsaved changes are dropped: Save, Discard or Cancel. The default asks with a message box.
    using SaveQuestion = std::function<QMessageBox::StandardButton(const QString &fileName)>;
    /// The source of the YARA front end's entries in diagnosticsList().
    static QString frontEndSource() { return QStringLiteral("yara"); }

    explicit RuleEditor(QWidget *parent = nullptr);
    ~RuleEditor() override;

    /// Empty for a new file not saved yet.
    QString filePath() const { return m_path; }
    /// The path the text is checked and tested as: filePath(), or untitled.yar in the current folder (where
    /// its includes resolve from) for a new file.
    QString effectivePath() const;
    bool isModified() const;
    /// The file's name and a '*' when modified: "rules.yar*". The window title says it too.
    QString title() const;
    /// The bytes Save writes: the text in UTF-8, with the line endings and byte order mark the file had.
    QByteArray textBytes() const;
    /// False while the text cannot be saved without changing bytes it did not show (not UTF-8, say).
    bool isEditable() const;

    /// Opens `path` (without asking about unsaved changes: onOpen() does). False, with the reason, when it
    /// cannot be read.
    bool openFile(const QString &path, QString *error = nullptr);
    /// Writes textBytes() to `path` and edits that file from then on. False, with the reason, on failure.
    bool saveAs(const QString &path, QString *error = nullptr);
    /// Asks what to do with unsaved changes (setSaveQuestion()) and saves if told so. False: the user cancelled,
    /// or the save failed; keep the editor open.
    bool maybeSave();
    void setSaveQuestion(SaveQuestion question) { m_saveQuestion = std::move(question); }

    /// Milliseconds after the last keystroke before the text is checked (default 350).
    void setCheckDelay(int ms);
    int checkDelay() const;
    /// Checks the text now, without waiting for the delay; the result arrives with rulesChecked().
    void checkNow();
    /// A check is due (the pause after typing has not ended) or running.
    bool isChecking() const;

    /// Adds (replacing those it added before) the entries of another source of warnings, such as rule costs;
    /// each new check of the text clears them, just before rulesChecked(): recompute them there.
    void addWarnings(const QString &source, const QList<Hitscope::RuleDiagnostic> &warnings);

    QByteArrayList selection() const { return m_selection; }
    /// The scan settings of "Test on selection" (default: the automatic engine, the engines' own batch sizes).
    void setEngine(Hitscope::EngineChoice engine, Hitscope::GpuBackend backend = Hitscope::GpuBackend::Auto);
    void setLaunchParams(const Hitscope::LaunchParams &params);
    void setDevices(const Hitscope::DeviceChoice &devices);
    /// yara's -d variables, for the check and for the test.
    void setExternals(const Hitscope::YaraExternals &externals);

    CodeEditor *editor() const { return m_editor; }
    YaraHighlighter *highlighter() const { return m_highlighter; }
    DiagnosticsList *diagnosticsList() const { return m_diagnostics; }
    RuleTestPanel *testPanel() const { return m_test; }
    QToolBar *toolBar() const { return m_toolBar; }
    QAction *newAction() const { return m_newAction; }
    QAction *openAction() const { return m_openAction; }
    QAction *saveAction() const { return m_saveAction; }
    QAction *saveAsAction() const { return m_saveAsAction; }
    QAction *testAction() const { return m_testAction; }

public Q_SLOTS:
    /// The files "Test on selection" scans (the Files view's selection, or the hits table's files).
    void setSelection(const QByteArrayList &paths);
    void onNew();
    void onOpen();
    bool onSave();
    bool onSaveAs();
    void onTestSelection();

Q_SIGNALS:
    void titleChanged(const QString &title);
    void filePathChanged(const QString &path);
    /// Written to `path` (the main window may reload it in its rule sets).
    void fileSaved(const QString &path);
    /// A check of the text ended and its entries are listed; `rules` is what the front end loaded, for
    /// other checks (addWarnings()). Stale checks (the text changed since) are dropped, never reported.
    void rulesChecked(std::shared_ptr<const Hitscope::RuleSet> rules);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void setupActions();
    void setupLayout();
    void setText(const QByteArray &data, bool fromFile);
    Hitscope::RuleSources textSources() const;
    void setPath(const QString &path);
    /// A new file's text, without asking about the current one.
    void onNewUnchecked();
    void updateTitle();
    void updateTestAction();
    void updateHighlighting();
    void applyCheck(const RuleSet &rules);
    void updateMarks();
    void showNotice(const QString &text);

    CodeEditor *m_editor = nullptr;
    YaraHighlighter *m_highlighter = nullptr;
    DiagnosticsList *m_diagnostics = nullptr;
    RuleTestPanel *m_test = nullptr;
    QToolBar *m_toolBar = nullptr;
    QSplitter *m_splitter = nullptr;
    QLabel *m_notice = nullptr;
    QLabel *m_status = nullptr;
    QTimer *m_checkTimer = nullptr;
    QAction *m_newAction = nullptr;
    QAction *m_openAction = nullptr;
    QAction *m_saveAction = nullptr;
    QAction *m_saveAsAction = nullptr;
    QAction *m_testAction = nullptr;
    QString m_path;
    bool m_crlf = false; ///< the file's lines end with CR LF: saved so again
    bool m_bom = false;  ///< the file starts with UTF-8's byte order mark: saved so again
    bool m_editable = true;
    bool m_checking = false;
    quint64 m_generation = 0; ///< of the latest check: an older one's result is dropped
    QByteArrayList m_selection;
    Hitscope::YaraExternals m_externals;
    SaveQuestion m_saveQuestion;
};

} // namespace Hitscope
