// ReadTextFile.
#include "file_text.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tirtune/support/error.h"

namespace tirtune::cli {

std::string ReadTextFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    TT_USER_ERROR("'{}' is a directory, not a file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) TT_USER_ERROR("cannot open '{}'", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) TT_USER_ERROR("cannot read '{}'", path);
  return ss.str();
}

}  // namespace tirtune::cli
