// The subcommands of the `tirtune` program. Each Add*Command registers its options on the CLI11
// app and the function that runs it; main() owns error reporting and exit codes.
#pragma once

#include <CLI/CLI.hpp>

namespace tirtune::cli {

/// Options shared by every command.
struct GlobalOptions {
  /// Print machine-readable JSON on stdout instead of text.
  bool json = false;
  /// A device pool broker's password from the environment (TIRTUNE_BROKER_PASSWORD), read by
  /// main(); --password-file wins over it.
  std::string broker_password;
};

void AddWorkloadCommand(CLI::App& app, const GlobalOptions& global);
void AddIrCommand(CLI::App& app, const GlobalOptions& global);
void AddScheduleCommand(CLI::App& app, const GlobalOptions& global);
void AddCompileCommands(CLI::App& app, const GlobalOptions& global);
void AddDbCommand(CLI::App& app, const GlobalOptions& global);
void AddTuneCommand(CLI::App& app, const GlobalOptions& global);
void AddReportCommand(CLI::App& app, const GlobalOptions& global);
/// `pool status` and `pool keygen` (device pools).
void AddPoolCommand(CLI::App& app, const GlobalOptions& global);
/// `compile` and `run` (models); registers nothing when built without ONNX support.
void AddModelCommands(CLI::App& app, const GlobalOptions& global);

}  // namespace tirtune::cli
