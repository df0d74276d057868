// Ctrl-C and SIGTERM for the long commands (tune, compile): while a StopOnSignals lives, the
// first signal sets a flag that the command checks between its steps and prints a line saying
// what happens next; the handler resets itself (SA_RESETHAND), so a second signal ends the
// process at once. A signal the shell told us to ignore (nohup, background jobs) stays ignored.
#pragma once

#include <atomic>

namespace tirtune::cli {

class StopOnSignals {
 public:
  /// `message` (a string literal: printed from the signal handler) ends with a newline, e.g.
  /// "tirtune: stopping after the current batch (again to abort)\n". The flag starts false.
  explicit StopOnSignals(const char* message);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  /// Set once a signal came; for TuneOptions::stop, CompileModelOptions::stop and the like.
  const std::atomic<bool>* flag() const;
};

}  // namespace tirtune::cli
