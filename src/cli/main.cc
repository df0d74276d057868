// Entry point of the `tirtune` command: wires the subcommands and maps failures to exit codes
// (1: bad input, reported on stderr; 2: bad usage; 70: internal error).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <new>

#include "commands.h"
#if TIRTUNE_WITH_MODELS
#include "tirtune/offload/library.h"
#endif
#include "tirtune/support/error.h"
#include "tirtune/support/version.h"

int main(int argc, char** argv) {
#if TIRTUNE_WITH_MODELS
  tirtune::offload::BoundOpenMpSpinning(argv);
#endif
  // nvJitLink must compile every cubin itself, or it prints no ptxas report for the resource
  // gates (src/codegen/cuda/nvrtc_compiler.cc); set here, before any thread runs.
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  CLI::App app{"tirtune: a tensor-program auto-tuner"};
  app.require_subcommand(1);
  // Subcommands copy this setting when created: options they do not know (such as --json) are
  // handed to the parent, so global flags may come before or after the subcommand.
  app.fallthrough();
  app.set_version_flag("--version", tirtune::kProgramVersion);
  tirtune::cli::GlobalOptions global;
  app.add_flag("--json", global.json, "print machine-readable JSON")->configurable(false);
  if (const char* password = std::getenv("TIRTUNE_BROKER_PASSWORD")) {
    global.broker_password = password;
  }
  tirtune::cli::AddWorkloadCommand(app, global);
  tirtune::cli::AddIrCommand(app, global);
  tirtune::cli::AddScheduleCommand(app, global);
  tirtune::cli::AddCompileCommands(app, global);
  tirtune::cli::AddDbCommand(app, global);
  tirtune::cli::AddTuneCommand(app, global);
  tirtune::cli::AddReportCommand(app, global);
  tirtune::cli::AddPoolCommand(app, global);
  tirtune::cli::AddModelCommands(app, global);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const tirtune::UserError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  } catch (const tirtune::InternalError& e) {
    fmt::print(stderr, "{}\nThis is a bug in tirtune; please report it with the input.\n",
               e.what());
    return 70;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr,
               "error: out of memory: the function's tensors, or the work on them, do not fit in "
               "this machine's memory\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
