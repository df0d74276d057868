// Running the `tirtune` program from a test as a user would: its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace tirtune::testing {

/// The whole content of file `path` ("" when it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CliResult {
  int exit_code;
  std::string out;
  std::string err;
  nlohmann::json Json() const { return nlohmann::json::parse(out); }
};

/// Runs `binary args` through the shell; its stdout and stderr go through files in `dir`.
inline CliResult RunCli(const std::string& binary, const std::string& args,
                        const std::filesystem::path& dir) {
  std::filesystem::path out = dir / "stdout", err = dir / "stderr";
  std::string cmd = binary + " " + args + " > " + out.string() + " 2> " + err.string();
  int status = std::system(cmd.c_str());
  return {WEXITSTATUS(status), ReadFile(out), ReadFile(err)};
}

}  // namespace tirtune::testing
