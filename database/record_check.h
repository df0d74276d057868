// Checks shared by every backend: a record is checked (and normalized) before it is stored, and
// every row is checked again when it is read back, because a file may have been written by
// another program, an older version, or a hostile hand.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "tirtune/database/database.h"

namespace tirtune::database_internal {

/// A record ready to store: target canonicalized, median computed, created_at filled in, and
/// the compact trace text with its hash (the record's identity within its workload and target).
struct CheckedRecord {
  TuningRecord record;
  std::string trace_text;
  std::string trace_hash;
};

/// Normalizes and checks record number `index` of a batch; UserError "record INDEX: PROBLEM".
CheckedRecord CheckForCommit(const TuningRecord& record, size_t index);

/// The records of an AddRunSecs batch, each checked like a commit of an ok record: target
/// canonicalized, a valid trace and at least one valid sample; UserError "record INDEX: PROBLEM".
std::vector<CheckedRecord> CheckForAddRunSecs(const std::vector<TuningRecord>& records);
/// The records of a MarkFailed batch, each checked like a commit of a failed record without
/// samples; UserError "record INDEX: PROBLEM", also for one whose status is ok.
std::vector<CheckedRecord> CheckForMarkFailed(const std::vector<TuningRecord>& records);
/// AddRunSecs's pending update of stored row `id`: its stored samples (`stored_text`, read the
/// first time the row comes up) with `more` appended; UserError naming `where`, record `index`
/// and the row when the stored text is not samples.
void AddToRow(std::map<int64_t, TuningRecord>& updated, int64_t id, std::string_view stored_text,
              const std::vector<double>& more, size_t index, const std::string& where);
/// Appends `more` to `stored`'s samples and recomputes its median; UserError naming record
/// `index` when the samples would be more than kMaxRunSamples.
void AppendRunSecs(TuningRecord& stored, const std::vector<double>& more, size_t index);

/// Why a (read back or about to be stored) record must not be used, or nullopt when it is fine:
/// a trace that Trace::FromJson rejects, non-finite / negative / absurd numbers, an ok record
/// without samples, or a median that does not match the samples.
std::optional<std::string> RecordProblem(const TuningRecord& record);

/// Parses stored trace text; on failure returns nullopt and sets `problem`.
std::optional<nlohmann::json> ParseTraceText(std::string_view text, std::string* problem);
/// Parses a stored JSON array of run seconds; on failure returns nullopt and sets `problem`.
std::optional<std::vector<double>> ParseRunSecsText(std::string_view text, std::string* problem);
/// The JSON array text of `run_secs` (shortest round-trip form).
std::string RunSecsText(const std::vector<double>& run_secs);

/// 16 hex digits of FNV-1a (64 bit) over `text`.
std::string TraceHash(std::string_view text);

double NowUnixSeconds();

/// `handler`, or one that prints "warning: MESSAGE" on stderr when it is empty.
WarningHandler WarningsOrStderr(const WarningHandler& handler);

}  // namespace tirtune::database_internal
