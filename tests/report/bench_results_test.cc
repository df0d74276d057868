// The benchmark results file: a valid document reads back field by field; every kind of bad field
// is a UserError naming the file and the field's JSON path.
#include "tirtune/report/bench_results.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "tirtune/support/error.h"

namespace tirtune::report {
namespace {

using nlohmann::json;

constexpr const char* kValid = R"({
  "schema": "tirtune-bench/1",
  "created_at": "2026-11-22T10:00:00Z",
  "command": "bash bench/suite.sh --budget quick",
  "budget": {"name": "quick", "trials": 200},
  "machine": {"cpu": "AMD EPYC 9B45", "cores": 2, "llvm_cpu": "znver4", "os": "Debian 12"},
  "versions": {"tirtune": "0.1.0", "onednn": "2.6.3", "tvm": "0.27.0"},
  "extra": "ignored",
  "workloads": [
    {"name": "gemm:1024,1024,1024", "group": "GEMM", "kind": "operator", "flops": 2147483648,
     "tirtune": {"latency_s": 0.0101, "trials": 1000, "tuning_s": 435.8, "verified": true,
                 "trials_to_90": 120, "seconds_to_90": 50.1, "trials_to_95": 300,
                 "seconds_to_95": 130.0},
     "baselines": {"onednn": {"latency_s": 0.0099, "ratio": 0.97},
                   "metaschedule": {"latency_s": 0.0100, "trials": 1000, "tuning_s": 291.0}}},
    {"name": "softmax:1,1024", "group": "Norm", "kind": "subgraph", "flops": 1e6,
     "tirtune": {"latency_s": 1e-5, "trials": 64, "tuning_s": 10, "verified": false,
                 "seconds_to_90": null},
     "baselines": {}}
  ]
})";

json Valid() { return json::parse(kValid); }

/// The message of the UserError that parsing `doc` throws ("" when it does not throw).
std::string ErrorOf(const json& doc) {
  try {
    ParseBenchResults(doc, "results.json");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(BenchResults, ReadsEveryField) {
  BenchResults r = ParseBenchResults(Valid(), "results.json");
  EXPECT_EQ(r.created_at, "2026-11-22T10:00:00Z");
  EXPECT_EQ(r.command, "bash bench/suite.sh --budget quick");
  EXPECT_EQ(r.budget_name, "quick");
  EXPECT_EQ(r.budget_trials, 200);
  ASSERT_EQ(r.machine.size(), 4u);
  EXPECT_EQ(r.machine[0], (std::pair<std::string, std::string>{"cores", "2"}));
  EXPECT_EQ(r.machine[1], (std::pair<std::string, std::string>{"cpu", "AMD EPYC 9B45"}));
  EXPECT_EQ(r.versions.size(), 3u);
  ASSERT_EQ(r.workloads.size(), 2u);
  const BenchWorkload& gemm = r.workloads[0];
  EXPECT_EQ(gemm.name, "gemm:1024,1024,1024");
  EXPECT_EQ(gemm.group, "GEMM");
  EXPECT_EQ(gemm.kind, "operator");
  EXPECT_EQ(gemm.flops, 2147483648.0);
  EXPECT_EQ(gemm.tirtune.latency_s, 0.0101);
  EXPECT_EQ(gemm.tirtune.trials, 1000);
  EXPECT_EQ(gemm.tirtune.tuning_s, 435.8);
  EXPECT_EQ(gemm.tirtune.verified, true);
  EXPECT_EQ(gemm.tirtune.trials_to_90, 120);
  EXPECT_EQ(gemm.tirtune.seconds_to_95, 130.0);
  ASSERT_EQ(gemm.baselines.size(), 2u);
  EXPECT_EQ(gemm.baselines[0].first, "metaschedule");  // in name order
  EXPECT_EQ(gemm.baselines[0].second.trials, 1000);
  EXPECT_EQ(gemm.baselines[1].first, "onednn");
  EXPECT_EQ(gemm.baselines[1].second.latency_s, 0.0099);
  EXPECT_EQ(gemm.baselines[1].second.trials, std::nullopt);
  EXPECT_EQ(gemm.baselines[1].second.ratio, 0.97);
  EXPECT_EQ(gemm.baselines[0].second.ratio, std::nullopt);
  const BenchWorkload& softmax = r.workloads[1];
  EXPECT_TRUE(softmax.baselines.empty());
  EXPECT_EQ(softmax.tirtune.verified, false);
  EXPECT_EQ(softmax.tirtune.seconds_to_90, std::nullopt);  // null: not reached
}

TEST(BenchResults, BadFieldsNameTheFileAndTheJsonPath) {
  struct Case {
    std::function<void(json&)> spoil;
    std::string message;
  };
  std::vector<Case> cases = {
      {[](json& d) { d["workloads"][0]["baselines"]["onednn"]["latency_s"] = -1; },
       "results.json: workloads[0].baselines.onednn.latency_s: expected a positive number"},
      {[](json& d) { d["workloads"][1]["tirtune"]["latency_s"] = "fast"; },
       "results.json: workloads[1].tirtune.latency_s: expected a positive number"},
      {[](json& d) { d["workloads"][0]["tirtune"].erase("trials"); },
       "results.json: workloads[0].tirtune.trials: missing (expected an integer >= 0)"},
      {[](json& d) { d["workloads"][0]["tirtune"]["trials_to_90"] = 1.5; },
       "results.json: workloads[0].tirtune.trials_to_90: expected an integer >= 0"},
      {[](json& d) { d["workloads"][0]["tirtune"]["seconds_to_95"] = -2; },
       "results.json: workloads[0].tirtune.seconds_to_95: expected a number of seconds >= 0"},
      {[](json& d) { d["workloads"][0]["tirtune"]["verified"] = "yes"; },
       "results.json: workloads[0].tirtune.verified: expected true or false"},
      {[](json& d) { d["workloads"][1]["kind"] = "layer"; },
       "results.json: workloads[1].kind: expected operator, subgraph or network, got \"layer\""},
      {[](json& d) { d["workloads"][0]["baselines"]["onednn"]["ratio"] = 0; },
       "results.json: workloads[0].baselines.onednn.ratio: expected a positive number"},
      {[](json& d) { d["workloads"][0]["flops"] = 0; },
       "results.json: workloads[0].flops: expected a positive number"},
      {[](json& d) { d["workloads"][0]["baselines"] = json::array(); },
       "results.json: workloads[0].baselines: expected an object"},
      {[](json& d) { d["workloads"][0]["baselines"]["mkl"] = 3; },
       "results.json: workloads[0].baselines.mkl: expected an object"},
      {[](json& d) { d["workloads"][0].erase("name"); },
       "results.json: workloads[0].name: missing (expected a string)"},
      {[](json& d) { d["workloads"] = json::object(); },
       "results.json: workloads: expected an array"},
      {[](json& d) { d["workloads"][1] = 7; }, "results.json: workloads[1]: expected an object"},
      {[](json& d) { d["schema"] = "tirtune-bench/2"; },
       "results.json: schema: expected \"tirtune-bench/1\", got \"tirtune-bench/2\""},
      {[](json& d) { d.erase("schema"); }, "results.json: schema: missing (expected a string)"},
      {[](json& d) { d["budget"]["trials"] = -200; },
       "results.json: budget.trials: expected an integer >= 0"},
      {[](json& d) { d["machine"]["cpu"] = json::object(); },
       "results.json: machine.cpu: expected a string or a number"},
      {[](json& d) { d.erase("versions"); },
       "results.json: versions: missing (expected an object)"},
      {[](json& d) { d = json::array(); }, "results.json: the document: expected an object"},
  };
  for (const Case& c : cases) {
    json doc = Valid();
    c.spoil(doc);
    EXPECT_EQ(ErrorOf(doc), c.message);
  }
}

TEST(BenchResults, ReadingAFileNamesItInErrors) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("tirtune_bench_results_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string good = (dir / "good.json").string(), bad = (dir / "bad.json").string(),
              spoiled = (dir / "spoiled.json").string();
  std::ofstream(good) << kValid;
  std::ofstream(bad) << "{\"schema\": ";
  json doc = Valid();
  doc["workloads"][0]["tirtune"]["latency_s"] = 0;
  std::ofstream(spoiled) << doc.dump();

  EXPECT_EQ(ReadBenchResults(good).workloads.size(), 2u);
  auto message = [](const std::string& path) -> std::string {
    try {
      ReadBenchResults(path);
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(bad).find(bad + ": not valid JSON"), std::string::npos) << message(bad);
  EXPECT_EQ(message(spoiled),
            spoiled + ": workloads[0].tirtune.latency_s: expected a positive number");
  std::string absent = (dir / "absent.json").string();
  EXPECT_NE(message(absent).find(absent + ": cannot open"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tirtune::report
