// SPDX-License-Identifier: GPL-3.0-or-later
// Placeholder: the desktop application arrives with issue 4. Until then point users at the CLI.
#include <cstdio>

int main()
{
    std::fprintf(stderr, "hitscope: the desktop application is not built yet; use hitscope-cli scan\n");
    return 1;
}
