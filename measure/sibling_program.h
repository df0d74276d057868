// Where the measure module finds the programs it starts (tirtune-runner, tirtune-gpu-runner).
#pragma once

#include <filesystem>
#include <string>

namespace tirtune {

/// The program `name` beside the running executable (an installed or bundled copy) when there is
/// one, else `built` (the path it was built at).
inline std::string SiblingProgram(const std::string& name, const std::string& built) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && std::filesystem::exists(self.parent_path() / name)) {
    return (self.parent_path() / name).string();
  }
  return built;
}

}  // namespace tirtune
