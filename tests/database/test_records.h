// Workloads and records for the database tests: small real functions, traces that differ by one
// annotation value, and records built from them.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tirtune/database/database.h"
#include "tirtune/ir/parser.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::testing {

inline PrimFunc Gemm(int n = 16) {
  return MakeWorkload("gemm:" + std::to_string(n) + "," + std::to_string(n) + "," +
                      std::to_string(n))
      .func;
}

/// A real trace of a schedule of Gemm(): it annotates the outer loop with `value`, so each value
/// gives a different trace.
inline nlohmann::json TraceNumbered(int64_t value) {
  static const nlohmann::json base = [] {
    Schedule sch(Gemm());
    std::vector<BlockRV> blocks = sch.GetChildBlocks(sch.GetBlock("root"));
    std::vector<LoopRV> loops = sch.GetLoops(blocks.back());
    sch.Annotate(loops[0], "test.candidate", 0);
    return sch.trace().ToJson();
  }();
  nlohmann::json trace = base;
  nlohmann::json& insts = trace["insts"];
  insts[insts.size() - 1]["attrs"]["value"] = value;
  return trace;
}

inline TuningRecord MakeRecord(WorkloadId workload, const std::string& target, int64_t trace_value,
                               std::vector<double> run_secs,
                               RecordStatus status = RecordStatus::kOk) {
  TuningRecord r;
  r.workload = workload;
  r.target = target;
  r.trace = TraceNumbered(trace_value);
  r.status = status;
  r.run_secs = std::move(run_secs);
  r.device = "test device";
  r.program_version = "tirtune test";
  r.created_at = 1700000000.0 + static_cast<double>(trace_value);
  if (status != RecordStatus::kOk) r.error = "failed: " + std::string(RecordStatusName(status));
  return r;
}

/// A fresh directory under the system temp directory, removed at destruction.
class TempDir {
 public:
  TempDir() {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        std::string(info ? info->test_suite_name() : "db") + "_" + (info ? info->name() : "x");
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    path_ = std::filesystem::temp_directory_path() /
            ("tirtune_db_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Collects warnings instead of printing them.
struct Warnings {
  std::vector<std::string> messages;
  OpenOptions Options() {
    OpenOptions o;
    o.on_warning = [this](const std::string& m) { messages.push_back(m); };
    return o;
  }
  bool Any(const std::string& needle) const {
    for (const std::string& m : messages) {
      if (m.find(needle) != std::string::npos) return true;
    }
    return false;
  }
};

}  // namespace tirtune::testing
