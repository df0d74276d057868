// Compiling a model with the best records of a tuning database: every task replays the trace of
// its best record on the target (with --offload measured, the library's record where the best
// tuned one is not 3% faster: KeptRecord) (DefaultSchedule when there is none, or it no
// longer replays), is lowered and compiled to an object, and the whole is written as an artifact
// directory (model/artifact.h) that GraphExecutor runs.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/codegen/target.h"
#include "tirtune/database/database.h"
#include "tirtune/model/model.h"

namespace tirtune::model {

/// How one task was scheduled and compiled.
struct CompiledTask {
  std::string name;
  int weight = 0;
  std::string workload_key;
  /// True when a record's trace was replayed (the best one that still replays and lowers, among
  /// the kCompileCandidates best); false: the default schedule.
  bool tuned = false;
  /// The replayed record's median (tuned tasks only).
  std::optional<double> best_seconds;
  /// Why the default schedule was used: "no workload in the database", "no record for the
  /// target", "none of the N best records replays (the first: ...)", "no database".
  std::string fallback_reason;
  /// For a tuned task whose best record did not replay: which record was used, and why the
  /// better ones were passed over; for a library's record kept over a tuned one not 3% faster:
  /// both medians and lower quartiles (LibraryKeptWhy). Empty otherwise.
  std::string note;
  /// The object file, relative to the artifact directory (empty when a library runs it).
  std::string object_file;
  /// A function a library runs: what runs it ("oneDNN conv2d for %relu (bias, post-ops relu)"
  /// for its first call). Empty otherwise.
  std::string library;
  /// With --offload always, why a composite still got a kernel (the library declined it).
  std::string offload_note;
  double compile_ms = 0;
};

struct CompileModelOptions {
  Target target = Target::Host();
  /// Where the records come from; null: every task gets the default schedule.
  Database* db = nullptr;
  /// Where the model came from (written to the manifest).
  std::string source;
  /// kAlways: a function whose every call is a composite (the model was fused with
  /// OffloadPatterns) runs on its library, unless the library declines it.
  Offload offload = Offload::kNever;
  /// When set and it becomes true (a signal handler's flag), compiling stops before the next
  /// function with Interrupted; the half-written directory is removed and an artifact already
  /// at `dir` stays as it was. Default none.
  const std::atomic<bool>* stop = nullptr;
};

/// Schedules, lowers and compiles every task of `model` and writes the artifact to `dir`
/// (created; files already there are replaced). UserError when `dir` cannot be written or a
/// function does not compile.
std::vector<CompiledTask> CompileModel(const ModelTasks& model, const std::string& dir,
                                       const CompileModelOptions& options);

}  // namespace tirtune::model
