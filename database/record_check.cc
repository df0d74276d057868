// CheckForCommit, RecordProblem and the parsing of stored trace and run-seconds text.
#include "record_check.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "tirtune/schedule/json_text.h"
#include "tirtune/schedule/trace.h"

namespace tirtune::database_internal {

using json = nlohmann::json;

namespace {

std::optional<std::string> NumberProblem(const char* what, double v) {
  if (!std::isfinite(v)) return fmt::format("{} is not a finite number", what);
  if (v < 0) return fmt::format("{} is negative ({})", what, v);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> RecordProblem(const TuningRecord& r) {
  if (r.workload < 0) return fmt::format("workload id {} is invalid", r.workload);
  if (r.target.empty()) return std::string("target is empty");
  if (r.run_secs.size() > kMaxRunSamples) {
    return fmt::format("{} run samples (more than {})", r.run_secs.size(), kMaxRunSamples);
  }
  for (double s : r.run_secs) {
    if (auto p = NumberProblem("a run time", s)) return p;
    if (s > kMaxRunSecs) return fmt::format("a run time of {} s is absurd", s);
  }
  if (r.status == RecordStatus::kOk && r.run_secs.empty()) {
    return std::string("status ok needs at least one run time");
  }
  if (r.median_secs) {
    if (auto p = NumberProblem("median_secs", *r.median_secs)) return p;
  }
  std::optional<double> median = MedianOf(r.run_secs);
  if (median.has_value() != r.median_secs.has_value() ||
      (median && std::fabs(*median - *r.median_secs) > 1e-12 * std::max(1.0, *median))) {
    return std::string("median_secs does not match run_secs");
  }
  if (auto p = NumberProblem("created_at", r.created_at)) return p;
  try {
    Trace::FromJson(r.trace);
  } catch (const TraceFormatError& e) {
    return fmt::format("trace is not a valid trace: {}", e.what());
  } catch (const json::exception& e) {
    return fmt::format("trace is not a valid trace: {}", JsonErrorText(e));
  }
  return std::nullopt;
}

CheckedRecord CheckForCommit(const TuningRecord& record, size_t index) {
  CheckedRecord c;
  c.record = record;
  try {
    c.record.target = CanonicalTarget(record.target);
  } catch (const UserError& e) {
    TT_USER_ERROR("record {}: {}", index, e.what());
  }
  c.record.median_secs = MedianOf(record.run_secs);
  if (c.record.created_at == 0) c.record.created_at = NowUnixSeconds();
  if (std::optional<std::string> p = RecordProblem(c.record)) {
    TT_USER_ERROR("record {}: {}", index, *p);
  }
  c.trace_text = c.record.trace.dump();
  c.trace_hash = TraceHash(c.trace_text);
  return c;
}

std::vector<CheckedRecord> CheckForAddRunSecs(const std::vector<TuningRecord>& records) {
  std::vector<CheckedRecord> checked;
  checked.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    TuningRecord r = records[i];
    r.status = RecordStatus::kOk;
    r.created_at = 0;
    if (r.run_secs.empty()) TT_USER_ERROR("record {}: no run times to add", i);
    checked.push_back(CheckForCommit(r, i));
  }
  return checked;
}

std::vector<CheckedRecord> CheckForMarkFailed(const std::vector<TuningRecord>& records) {
  std::vector<CheckedRecord> checked;
  checked.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    TuningRecord r = records[i];
    if (r.status == RecordStatus::kOk) {
      TT_USER_ERROR("record {}: status ok: only a failed measurement marks a record failed", i);
    }
    r.run_secs.clear();
    r.created_at = 0;
    checked.push_back(CheckForCommit(r, i));
  }
  return checked;
}

void AppendRunSecs(TuningRecord& stored, const std::vector<double>& more, size_t index) {
  if (stored.run_secs.size() + more.size() > kMaxRunSamples) {
    TT_USER_ERROR("record {}: {} run samples would be more than {}", index,
                  stored.run_secs.size() + more.size(), kMaxRunSamples);
  }
  stored.run_secs.insert(stored.run_secs.end(), more.begin(), more.end());
  stored.median_secs = MedianOf(stored.run_secs);
}

void AddToRow(std::map<int64_t, TuningRecord>& updated, int64_t id, std::string_view stored_text,
              const std::vector<double>& more, size_t index, const std::string& where) {
  auto it = updated.find(id);
  if (it == updated.end()) {
    std::string problem;
    std::optional<std::vector<double>> stored = ParseRunSecsText(stored_text, &problem);
    if (!stored) TT_USER_ERROR("{}: record {} (row {}): {}", where, index, id, problem);
    it = updated.emplace(id, TuningRecord()).first;
    it->second.run_secs = std::move(*stored);
  }
  AppendRunSecs(it->second, more, index);
}

std::optional<json> ParseTraceText(std::string_view text, std::string* problem) {
  std::string why;
  std::optional<json> j = TryParseJsonText(text, &why);
  if (!j) *problem = "trace is " + why;
  return j;
}

std::optional<std::vector<double>> ParseRunSecsText(std::string_view text, std::string* problem) {
  std::string why;
  json j = TryParseJsonText(text, &why).value_or(json::value_t::discarded);
  if (j.is_discarded() || !j.is_array()) {
    *problem = "run_secs is not a JSON array";
    return std::nullopt;
  }
  if (j.size() > kMaxRunSamples) {
    *problem = fmt::format("{} run samples (more than {})", j.size(), kMaxRunSamples);
    return std::nullopt;
  }
  std::vector<double> out;
  out.reserve(j.size());
  for (const json& v : j) {
    if (!v.is_number()) {
      *problem = "run_secs holds something other than numbers";
      return std::nullopt;
    }
    out.push_back(v.get<double>());
  }
  return out;
}

std::string RunSecsText(const std::vector<double>& run_secs) { return json(run_secs).dump(); }

std::string TraceHash(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

double NowUnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

WarningHandler WarningsOrStderr(const WarningHandler& handler) {
  if (handler) return handler;
  return [](const std::string& message) { fmt::print(stderr, "warning: {}\n", message); };
}

}  // namespace tirtune::database_internal
