// OpenDatabase (the backend chosen by the URL or file name), record status names, target
// canonicalization and the median.
#include "tirtune/database/database.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "postgres_connection.h"
#include "tirtune/support/error.h"

namespace tirtune {

namespace {

constexpr std::array<std::pair<RecordStatus, std::string_view>, 7> kStatusNames = {{
    {RecordStatus::kOk, "ok"},
    {RecordStatus::kBuildError, "build_error"},
    {RecordStatus::kRuntimeError, "runtime_error"},
    {RecordStatus::kTimeout, "timeout"},
    {RecordStatus::kWrongResult, "wrong_result"},
    {RecordStatus::kRunnerLost, "runner_lost"},
    {RecordStatus::kDeviceLost, "device_lost"},
}};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string_view RecordStatusName(RecordStatus status) {
  for (const auto& [s, name] : kStatusNames) {
    if (s == status) return name;
  }
  TT_UNREACHABLE("RecordStatus {}", static_cast<int>(status));
}

std::optional<RecordStatus> ParseRecordStatus(std::string_view name) {
  for (const auto& [s, n] : kStatusNames) {
    if (n == name) return s;
  }
  return std::nullopt;
}

std::string CanonicalTarget(std::string_view target) {
  std::string out;
  bool pending_space = false;
  for (char c : target) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  if (out.empty()) TT_USER_ERROR("the target is empty");
  return out;
}

std::optional<double> MedianOf(std::vector<double> samples) {
  if (samples.empty()) return std::nullopt;
  // NaN breaks the ordering nth_element relies on (out-of-bounds reads in libstdc++).
  if (std::any_of(samples.begin(), samples.end(), [](double v) { return std::isnan(v); })) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + mid, samples.end());
  double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  double lower = *std::max_element(samples.begin(), samples.begin() + mid);
  return lower + (upper - lower) / 2;
}

std::unique_ptr<Database> OpenDatabase(const std::string& path, const OpenOptions& options) {
  if (path == ":memory:") return MakeMemoryDatabase(options);
  // Before the extensions: a URL may well end in ".db".
  if (database_internal::IsPostgresUrl(path)) return OpenPostgresDatabase(path, options);
  if (EndsWith(path, ".db") || EndsWith(path, ".sqlite")) return OpenSqliteDatabase(path, options);
  if (EndsWith(path, ".jsonl")) return OpenJsonlDatabase(path, options);
  TT_USER_ERROR(
      "'{}': unknown database kind; use a name ending in .db or .sqlite (SQLite), .jsonl "
      "(JSON-lines), a postgresql://user@host:port/database URL (PostgreSQL) or ':memory:'",
      database_internal::RedactPostgresUrl(path));
}

void RequireIntact(Database& db, std::string_view what) {
  std::vector<std::string> problems = db.CheckIntegrity();
  if (problems.empty()) return;
  TT_USER_ERROR(
      "{}: {} is damaged ({}{}); `tirtune db check` lists the problems and `tirtune db export` "
      "copies out what still reads",
      what, db.Describe(), problems.front(),
      problems.size() > 1 ? fmt::format(", and {} more", problems.size() - 1) : "");
}

}  // namespace tirtune
