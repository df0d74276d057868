// Reading a whole text file for a command, with the user-facing error when it cannot be opened.
#pragma once

#include <string>

namespace tirtune::cli {

/// The contents of `path`; UserError "cannot open 'PATH'" when it cannot be read.
std::string ReadTextFile(const std::string& path);

}  // namespace tirtune::cli
