#pragma once

#include "base/result.h"

namespace gpuplacement::app {

// Exit codes of the command line.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCannotPlace = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitFailure = 3;

int runCli(int argc, char** argv);

// Says "error: FIELD: MESSAGE" on stderr and returns kExitBadInput.
int badInput(const base::Error& error);

}  // namespace gpuplacement::app
