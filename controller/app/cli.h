#pragma once

namespace gpuplacement::app {

// Exit codes of the command line.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCannotPlace = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitFailure = 3;

int runCli(int argc, char** argv);

}  // namespace gpuplacement::app
