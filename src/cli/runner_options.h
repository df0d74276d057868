// The options that say where candidates are measured, shared by `tune` and `time`: the local
// runner pool (the default) or a device pool behind a broker (`--runner redis://HOST:PORT`).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "commands.h"
#include "tirtune/measure/runner_pool.h"

namespace tirtune::cli {

struct RunnerCli {
  /// "local" or redis://[USER@]HOST:PORT.
  std::string runner = "local";
  std::string device_class;
  std::string password_file;
  std::string key_file;

  void AddOptions(CLI::App* cmd);
  bool remote() const { return runner != "local"; }
  /// A RemoteRunner for `target` (canonical) when --runner names a broker, else a RunnerPool of
  /// `local`. UserError for a bad --runner, an unreachable broker, no live agent of the class.
  std::unique_ptr<Runner> Make(const std::string& target, const RunnerConfig& local,
                               const GlobalOptions& global) const;
};

/// The broker password: the first line of `password_file`, else the environment's (read by
/// main into GlobalOptions), else none.
std::string BrokerPassword(const std::string& password_file, const GlobalOptions& global);

}  // namespace tirtune::cli
