// Reading "tirtune-bench/1" documents: every field is checked where it is read, and the first bad
// one is reported with the file and its JSON path.
#include "tirtune/report/bench_results.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "tirtune/schedule/json_text.h"
#include "tirtune/support/error.h"

namespace tirtune::report {
namespace {

using nlohmann::json;

/// The fields of one JSON object, with errors that name the file and the object's path.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string path, std::string_view source)
      : object_(object), path_(std::move(path)), source_(source) {
    if (!object_.is_object()) {
      Fail(path_.empty() ? "the document" : path_, "expected an object");
    }
  }

  /// `key`'s path, for errors and for nested readers.
  std::string PathOf(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  [[noreturn]] void Fail(const std::string& path, std::string_view problem) const {
    TT_USER_ERROR("{}: {}: {}", source_, path, problem);
  }

  std::string String(const char* key) { return *ReadString(key, /*required=*/true); }

  std::optional<bool> OptionalBool(const char* key, bool required = false) {
    const json* j = Get(key, required, "true or false");
    if (!j) return std::nullopt;
    if (!j->is_boolean()) Fail(PathOf(key), "expected true or false");
    return j->get<bool>();
  }

  double PositiveNumber(const char* key) {
    const json* j = Get(key, /*required=*/true, "a positive number");
    double v = j->is_number() ? j->get<double>() : 0;
    if (!(v > 0) || !std::isfinite(v)) Fail(PathOf(key), "expected a positive number");
    return v;
  }

  std::optional<double> OptionalSeconds(const char* key, bool required = false) {
    const json* j = Get(key, required, "a number of seconds >= 0");
    if (!j) return std::nullopt;
    double v = j->is_number() ? j->get<double>() : -1;
    if (!(v >= 0) || !std::isfinite(v)) Fail(PathOf(key), "expected a number of seconds >= 0");
    return v;
  }

  std::optional<double> OptionalPositive(const char* key) {
    const json* j = Get(key, /*required=*/false, "a positive number");
    if (!j) return std::nullopt;
    double v = j->is_number() ? j->get<double>() : 0;
    if (!(v > 0) || !std::isfinite(v)) Fail(PathOf(key), "expected a positive number");
    return v;
  }

  std::optional<int64_t> OptionalCount(const char* key, bool required = false) {
    const json* j = Get(key, required, "an integer >= 0");
    if (!j) return std::nullopt;
    bool fits = j->is_number_unsigned()
                    ? j->get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()}
                    : j->is_number_integer() && j->get<int64_t>() >= 0;
    if (!fits) Fail(PathOf(key), "expected an integer >= 0");
    return j->get<int64_t>();
  }

  /// A required member that must be an object.
  ObjectReader Object(const char* key) {
    return ObjectReader(*Get(key, /*required=*/true, "an object"), PathOf(key), source_);
  }

  /// A required member that must be an array.
  const json& Array(const char* key) {
    const json* j = Get(key, /*required=*/true, "an array");
    if (!j->is_array()) Fail(PathOf(key), "expected an array");
    return *j;
  }

  /// Every member as (key, text); values must be strings, numbers or booleans.
  std::vector<std::pair<std::string, std::string>> ScalarsAsText() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [key, value] : object_.items()) {
      if (value.is_string()) {
        out.emplace_back(key, value.get<std::string>());
      } else if (value.is_number() || value.is_boolean()) {
        out.emplace_back(key, value.dump());
      } else {
        Fail(PathOf(key), "expected a string or a number");
      }
    }
    return out;
  }

  /// Calls `fn(key, reader)` for every member; each must be an object.
  template <typename Fn>
  void ForEachObject(Fn fn) const {
    for (const auto& [key, value] : object_.items()) {
      fn(key, ObjectReader(value, PathOf(key), source_));
    }
  }

 private:
  std::optional<std::string> ReadString(const char* key, bool required) {
    const json* j = Get(key, required, "a string");
    if (!j) return std::nullopt;
    if (!j->is_string()) Fail(PathOf(key), "expected a string");
    return j->get<std::string>();
  }

  /// The member `key`; nullptr when it is absent or null and not required.
  const json* Get(const char* key, bool required, std::string_view expected) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
      if (required) Fail(PathOf(key), fmt::format("missing (expected {})", expected));
      return nullptr;
    }
    return &*it;
  }

  const json& object_;
  std::string path_;
  std::string_view source_;
};

/// tirtune's entry requires the tuning fields; a baseline's requires only the latency.
BenchTiming ReadTiming(ObjectReader r, bool tuned) {
  BenchTiming t;
  t.latency_s = r.PositiveNumber("latency_s");
  t.trials = r.OptionalCount("trials", /*required=*/tuned);
  t.tuning_s = r.OptionalSeconds("tuning_s", /*required=*/tuned);
  t.verified = r.OptionalBool("verified", /*required=*/tuned);
  t.trials_to_90 = r.OptionalCount("trials_to_90");
  t.seconds_to_90 = r.OptionalSeconds("seconds_to_90");
  t.trials_to_95 = r.OptionalCount("trials_to_95");
  t.seconds_to_95 = r.OptionalSeconds("seconds_to_95");
  if (!tuned) t.ratio = r.OptionalPositive("ratio");
  return t;
}

BenchWorkload ReadWorkload(ObjectReader r) {
  BenchWorkload w;
  w.name = r.String("name");
  w.group = r.String("group");
  w.kind = r.String("kind");
  if (w.kind != "operator" && w.kind != "subgraph" && w.kind != "network") {
    r.Fail(r.PathOf("kind"),
           fmt::format("expected operator, subgraph or network, got \"{}\"", w.kind));
  }
  w.flops = r.PositiveNumber("flops");
  w.tirtune = ReadTiming(r.Object("tirtune"), /*tuned=*/true);
  r.Object("baselines").ForEachObject([&](const std::string& name, ObjectReader baseline) {
    w.baselines.emplace_back(name, ReadTiming(baseline, /*tuned=*/false));
  });
  return w;
}

}  // namespace

BenchResults ParseBenchResults(const json& doc, std::string_view source) {
  ObjectReader r(doc, "", source);
  std::string schema = r.String("schema");
  if (schema != kBenchSchema) {
    r.Fail("schema", fmt::format("expected \"{}\", got \"{}\"", kBenchSchema, schema));
  }
  BenchResults results;
  results.created_at = r.String("created_at");
  results.command = r.String("command");
  ObjectReader budget = r.Object("budget");
  results.budget_name = budget.String("name");
  results.budget_trials = *budget.OptionalCount("trials", /*required=*/true);
  results.machine = r.Object("machine").ScalarsAsText();
  results.versions = r.Object("versions").ScalarsAsText();
  const json& workloads = r.Array("workloads");
  for (size_t i = 0; i < workloads.size(); ++i) {
    results.workloads.push_back(
        ReadWorkload(ObjectReader(workloads[i], fmt::format("workloads[{}]", i), source)));
  }
  return results;
}

BenchResults ReadBenchResults(const std::string& path) {
  std::ifstream in(path);
  if (!in) TT_USER_ERROR("{}: cannot open the benchmark results file", path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseBenchResults(ParseJsonText(text.str(), path), path);
}

}  // namespace tirtune::report
