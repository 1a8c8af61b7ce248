// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

namespace Hitscope::ByteContext {

/// What the byte before a position was, as far as assertions care: none (the file starts there), a non-word byte
/// or a word byte (\w). The NFA decides \b, \B and ^ from it; a DFA has a start state per value
/// (Dfa::StartContext takes these values).
enum : int { AtFileStart = 0, AfterNonWord = 1, AfterWord = 2 };

} // namespace Hitscope::ByteContext
