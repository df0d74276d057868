// The program's version, as it is printed by `tirtune --version` and stored with every record.
#pragma once

namespace tirtune {

inline constexpr const char* kProgramVersion = "tirtune 0.1.0";

}  // namespace tirtune
