// The contract every Database backend satisfies: the same suite runs on memory, SQLite,
// JSON-lines and PostgreSQL (a server of this test process, a fresh database per test).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "../common/postgres_server.h"
#include "test_records.h"
#include "tirtune/database/transfer.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune {
namespace {

using testing::Gemm;
using testing::MakeRecord;
using testing::TempDir;
using testing::TraceNumbered;

constexpr const char* kCpu = "llvm -mcpu=znver5 -num-cores=2";
constexpr const char* kOtherCpu = "llvm -mcpu=znver4 -num-cores=2";

struct Backend {
  std::string name;
  std::string file;  // "" for memory and PostgreSQL
  bool persistent;
  bool postgres = false;
};

void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

class Contract : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>();
    if (GetParam().postgres) {
      testing::PostgresServer& server = testing::PostgresServer::Shared();
      ASSERT_TRUE(server.ok()) << server.error();
      path_ = server.NewDatabase();
    } else {
      path_ = GetParam().file.empty() ? ":memory:" : dir_->File(GetParam().file);
    }
    db_ = Open();
  }
  std::unique_ptr<Database> Open() { return OpenDatabase(path_, warnings_.Options()); }
  /// A new object on the same storage (persistent backends only).
  void Reopen() {
    db_.reset();
    db_ = Open();
  }

  std::unique_ptr<TempDir> dir_;
  std::string path_;
  testing::Warnings warnings_;
  std::unique_ptr<Database> db_;
};

TEST_P(Contract, EqualWorkloadsShareOneEntry) {
  WorkloadEntry a = db_->CommitWorkload(Gemm(16));
  // Structurally equal, different function name: the same workload.
  WorkloadEntry b = db_->CommitWorkload(Gemm(16).WithName("renamed"));
  WorkloadEntry c = db_->CommitWorkload(Gemm(32));
  EXPECT_EQ(a.id, b.id);
  EXPECT_NE(a.id, c.id);
  EXPECT_EQ(a.shash, StructuralHashHex(Gemm(16)));
  EXPECT_EQ(db_->Workloads().size(), 2u);
}

TEST_P(Contract, FindWorkloadDoesNotCommit) {
  EXPECT_FALSE(db_->FindWorkload(Gemm(16)).has_value());
  EXPECT_TRUE(db_->Workloads().empty());
  WorkloadEntry a = db_->CommitWorkload(Gemm(16));
  std::optional<WorkloadEntry> found = db_->FindWorkload(Gemm(16));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, a.id);
}

TEST_P(Contract, StoredWorkloadTextParsesBackToTheFunction) {
  db_->CommitWorkload(Gemm(16));
  std::vector<WorkloadEntry> all = db_->Workloads();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(StructuralEqual(all[0].func, Gemm(16)));
  EXPECT_TRUE(StructuralEqual(ParsePrimFunc(all[0].text), Gemm(16)));
  EXPECT_EQ(all[0].text, Print(Gemm(16)));
  EXPECT_EQ(all[0].name, Gemm(16)->name);
  EXPECT_GT(all[0].created_at, 0);
}

TEST_P(Contract, TopKOrdersByMedianAndNeverReturnsFailures) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  db_->CommitRecords({
      MakeRecord(w, kCpu, 1, {3.0, 3.0, 3.0}),
      MakeRecord(w, kCpu, 2, {0.5}, RecordStatus::kWrongResult),
      MakeRecord(w, kCpu, 3, {1.0, 9.0, 1.0}),  // median 1, mean 3.7
      MakeRecord(w, kCpu, 4, {}, RecordStatus::kBuildError),
      MakeRecord(w, kCpu, 5, {2.0}),
      MakeRecord(w, kCpu, 6, {}, RecordStatus::kTimeout),
      MakeRecord(w, kCpu, 7, {0.1}, RecordStatus::kRuntimeError),
      MakeRecord(w, kCpu, 8, {}, RecordStatus::kRunnerLost),
  });
  std::vector<TuningRecord> top = db_->TopK(w, kCpu, 10);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].trace, TraceNumbered(3));
  EXPECT_EQ(top[1].trace, TraceNumbered(5));
  EXPECT_EQ(top[2].trace, TraceNumbered(1));
  EXPECT_EQ(top[0].median_secs, 1.0);
  ASSERT_EQ(db_->TopK(w, kCpu, 2).size(), 2u);
  EXPECT_TRUE(db_->TopK(w, kCpu, 0).empty());
}

TEST_P(Contract, TopKBreaksTiesByCommitOrder) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 9, {1.0}), MakeRecord(w, kCpu, 4, {1.0})});
  db_->CommitRecords({MakeRecord(w, kCpu, 6, {1.0})});
  std::vector<TuningRecord> top = db_->TopK(w, kCpu, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].trace, TraceNumbered(9));
  EXPECT_EQ(top[1].trace, TraceNumbered(4));
  EXPECT_EQ(top[2].trace, TraceNumbered(6));
}

TEST_P(Contract, TopKNeverReturnsAnotherTargetsRecords) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  WorkloadId other = db_->CommitWorkload(Gemm(32)).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 1, {2.0}), MakeRecord(w, kOtherCpu, 2, {1.0}),
                      MakeRecord(other, kCpu, 3, {0.5})});
  std::vector<TuningRecord> top = db_->TopK(w, kCpu, 10);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].trace, TraceNumbered(1));
  EXPECT_EQ(top[0].target, kCpu);
  ASSERT_EQ(db_->TopK(w, kOtherCpu, 10).size(), 1u);
  EXPECT_TRUE(db_->TopK(w, "cuda -arch=sm_90", 10).empty());
}

TEST_P(Contract, TargetWhitespaceIsCanonicalized) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  db_->CommitRecords({MakeRecord(w, "  llvm\t -mcpu=znver5   -num-cores=2 \n", 1, {2.0})});
  std::vector<TuningRecord> top = db_->TopK(w, kCpu, 10);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].target, kCpu);
  EXPECT_EQ(db_->TopK(w, "llvm  -mcpu=znver5 -num-cores=2", 10).size(), 1u);
}

TEST_P(Contract, RecordFieldsRoundTrip) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  TuningRecord r = MakeRecord(w, kCpu, 1, {1.5e-3, 1.25e-3, 1.75e-3, 1.0e-3});
  r.error = "note: \"quoted\"\nsecond line";
  r.device = "AMD EPYC 9B45 (2 cores)";
  r.program_version = "tirtune 0.1.0";
  r.created_at = 1712345678.123456;
  db_->CommitRecords({r});
  if (GetParam().persistent) Reopen();
  std::vector<TuningRecord> all = db_->RecordsOf(w);
  ASSERT_EQ(all.size(), 1u);
  const TuningRecord& got = all[0];
  EXPECT_EQ(got.workload, w);
  EXPECT_EQ(got.target, kCpu);
  EXPECT_EQ(got.trace, r.trace);
  EXPECT_EQ(got.status, RecordStatus::kOk);
  EXPECT_EQ(got.run_secs, r.run_secs);
  ASSERT_TRUE(got.median_secs.has_value());
  EXPECT_DOUBLE_EQ(*got.median_secs, 1.375e-3);
  EXPECT_EQ(got.error, r.error);
  EXPECT_EQ(got.device, r.device);
  EXPECT_EQ(got.program_version, r.program_version);
  EXPECT_EQ(got.created_at, r.created_at);
}

TEST_P(Contract, ZeroCreatedAtMeansNow) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  TuningRecord r = MakeRecord(w, kCpu, 1, {1.0});
  r.created_at = 0;
  db_->CommitRecords({r});
  EXPECT_GT(db_->RecordsOf(w).at(0).created_at, 1.6e9);
}

TEST_P(Contract, FailuresAreStoredWithTheirStatusAndMessage) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  for (RecordStatus s :
       {RecordStatus::kBuildError, RecordStatus::kRuntimeError, RecordStatus::kTimeout,
        RecordStatus::kWrongResult, RecordStatus::kRunnerLost}) {
    db_->CommitRecords({MakeRecord(w, kCpu, static_cast<int>(s), {}, s)});
  }
  if (GetParam().persistent) Reopen();
  std::vector<TuningRecord> all = db_->RecordsOf(w);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].status, RecordStatus::kBuildError);
  EXPECT_EQ(all[0].error, "failed: build_error");
  EXPECT_FALSE(all[0].median_secs.has_value());
  EXPECT_EQ(all[4].status, RecordStatus::kRunnerLost);
}

TEST_P(Contract, CommittingTheSameRecordAgainIsIgnored) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  std::vector<TuningRecord> batch = {MakeRecord(w, kCpu, 1, {1.0}), MakeRecord(w, kCpu, 2, {2.0})};
  EXPECT_EQ(db_->CommitRecords(batch), 2u);
  // A retried measurement: same workload, target and trace, other numbers.
  batch[0].run_secs = {0.5};
  EXPECT_EQ(db_->CommitRecords(batch), 0u);
  EXPECT_EQ(db_->Size(), 2u);
  EXPECT_EQ(db_->TopK(w, kCpu, 1).at(0).run_secs, std::vector<double>{1.0});
  // Duplicates inside one batch count once; the same trace on another target is another record.
  EXPECT_EQ(db_->CommitRecords({MakeRecord(w, kCpu, 3, {1.0}), MakeRecord(w, kCpu, 3, {1.0}),
                                MakeRecord(w, kOtherCpu, 3, {1.0})}),
            2u);
  EXPECT_EQ(db_->Size(), 4u);
  if (GetParam().persistent) {
    Reopen();
    EXPECT_EQ(db_->CommitRecords(batch), 0u);
    EXPECT_EQ(db_->Size(), 4u);
  }
}

TEST_P(Contract, AddedRunTimesJoinTheRecordAndItsMedianDecidesTheOrder) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 1, {1.0, 1.0, 1.0}), MakeRecord(w, kCpu, 2, {1.5}),
                      MakeRecord(w, kOtherCpu, 1, {0.5})});
  // A re-measurement of record 1 that was lucky once: five slower samples, one of them in a
  // second entry of the same batch.
  TuningRecord more = MakeRecord(w, kCpu, 1, {2.0, 2.0, 2.0, 2.0});
  more.device = "ignored";
  EXPECT_EQ(db_->AddRunSecs({more, MakeRecord(w, kCpu, 1, {2.0})}), 1u);
  auto check = [&] {
    std::vector<TuningRecord> top = db_->TopK(w, kCpu, 5);
    ASSERT_EQ(top.size(), 2u);
    EXPECT_EQ(top[0].trace, TraceNumbered(2));
    EXPECT_EQ(top[1].trace, TraceNumbered(1));
    EXPECT_EQ(top[1].run_secs, (std::vector<double>{1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0}));
    EXPECT_EQ(top[1].median_secs, 2.0);
    EXPECT_NE(top[1].device, "ignored");
    // The same trace on another target is another record, unchanged.
    EXPECT_EQ(db_->TopK(w, kOtherCpu, 5).at(0).run_secs, std::vector<double>{0.5});
    EXPECT_EQ(db_->Size(), 3u);
    for (const RecordGroupStats& g : db_->Stats()) {
      EXPECT_EQ(g.best_median_secs, g.target == kCpu ? 1.5 : 0.5);
    }
  };
  check();
  if (GetParam().persistent) {
    Reopen();
    check();
    EXPECT_TRUE(warnings_.messages.empty()) << warnings_.messages[0];
  }
}

TEST_P(Contract, AddingRunTimesToNoOkRecordChangesNothing) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  db_->CommitRecords(
      {MakeRecord(w, kCpu, 1, {1.0}), MakeRecord(w, kCpu, 2, {}, RecordStatus::kBuildError)});
  auto expect_refused = [&](const std::vector<TuningRecord>& batch, const std::string& what) {
    try {
      db_->AddRunSecs(batch);
      ADD_FAILURE() << "expected a UserError for " << what;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("record 1"), std::string::npos) << e.what();
    }
  };
  TuningRecord good = MakeRecord(w, kCpu, 1, {3.0, 3.0});
  expect_refused({good, MakeRecord(w, kCpu, 7, {1.0})}, "a trace never stored");
  expect_refused({good, MakeRecord(w, kCpu, 2, {1.0})}, "a failed record");
  expect_refused({good, MakeRecord(w, kOtherCpu, 1, {1.0})}, "a target never stored");
  expect_refused({good, MakeRecord(w, kCpu, 1, {-1.0})}, "a negative time");
  expect_refused({good, MakeRecord(w, kCpu, 1, {})}, "no samples");
  if (GetParam().persistent) Reopen();
  EXPECT_EQ(db_->TopK(w, kCpu, 1).at(0).run_secs, std::vector<double>{1.0});
  EXPECT_EQ(db_->AddRunSecs({}), 0u);
}

TEST_P(Contract, AFailedReMeasurementMakesTheRecordAFailureThatNoBestQueryReturns) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 1, {1.0, 1.0}), MakeRecord(w, kCpu, 2, {1.5}),
                      MakeRecord(w, kOtherCpu, 1, {0.5})});
  // Record 1, the best, computed a wrong result when measured again (twice in the batch).
  TuningRecord wrong = MakeRecord(w, kCpu, 1, {}, RecordStatus::kWrongResult);
  wrong.error = "measured again: max abs error 3.5";
  EXPECT_EQ(db_->MarkFailed({wrong, wrong}), 1u);
  auto check = [&] {
    std::vector<TuningRecord> top = db_->TopK(w, kCpu, 5);
    ASSERT_EQ(top.size(), 1u);
    EXPECT_EQ(top[0].trace, TraceNumbered(2));
    int found = 0;
    for (const TuningRecord& r : db_->RecordsOf(w)) {
      if (r.target != kCpu || r.trace != TraceNumbered(1)) continue;
      ++found;
      EXPECT_EQ(r.status, RecordStatus::kWrongResult);
      EXPECT_EQ(r.error, "measured again: max abs error 3.5");
      EXPECT_TRUE(r.run_secs.empty());
      EXPECT_FALSE(r.median_secs.has_value());
    }
    EXPECT_EQ(found, 1);
    // The same trace on another target is another record, still ok.
    EXPECT_EQ(db_->TopK(w, kOtherCpu, 5).at(0).trace, TraceNumbered(1));
    EXPECT_EQ(db_->Size(), 3u);
    for (const RecordGroupStats& g : db_->Stats()) {
      EXPECT_EQ(g.best_median_secs, g.target == kCpu ? 1.5 : 0.5);
      if (g.target == kCpu) {
        EXPECT_EQ(g.num_ok, 1u);
      }
    }
    // Samples are no longer added to it.
    EXPECT_THROW(db_->AddRunSecs({MakeRecord(w, kCpu, 1, {1.0})}), UserError);
  };
  check();
  if (GetParam().persistent) {
    Reopen();
    check();
    EXPECT_TRUE(warnings_.messages.empty()) << warnings_.messages[0];
  }
  // All or none: an ok status, a trace never stored or a record already failed refuse the batch.
  TuningRecord slow = MakeRecord(w, kCpu, 2, {}, RecordStatus::kTimeout);
  for (const TuningRecord& bad :
       {MakeRecord(w, kCpu, 2, {1.0}), MakeRecord(w, kCpu, 7, {}, RecordStatus::kTimeout),
        MakeRecord(w, kCpu, 1, {}, RecordStatus::kTimeout)}) {
    try {
      db_->MarkFailed({slow, bad});
      ADD_FAILURE() << "expected a UserError";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("record 1"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(db_->TopK(w, kCpu, 5).size(), 1u);
  EXPECT_EQ(db_->MarkFailed({}), 0u);
}

TEST_P(Contract, TraceKeyOrderDoesNotMakeANewRecord) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  TuningRecord r = MakeRecord(w, kCpu, 1, {1.0});
  db_->CommitRecords({r});
  // The same document parsed from text with its keys in another order.
  r.trace = nlohmann::json::parse(R"({"version": 1, "insts": )" + r.trace["insts"].dump() +
                                  R"(, "format": "tirtune-trace"})");
  EXPECT_EQ(db_->CommitRecords({r}), 0u);
}

TEST_P(Contract, ABatchWithOneBadRecordCommitsNothing) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  std::vector<TuningRecord> batch = {MakeRecord(w, kCpu, 1, {1.0}), MakeRecord(w, kCpu, 2, {2.0}),
                                     MakeRecord(w, kCpu, 3, {-1.0})};
  try {
    db_->CommitRecords(batch);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("record 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(db_->Size(), 0u);
  if (GetParam().persistent) Reopen();
  EXPECT_EQ(db_->Size(), 0u);
}

TEST_P(Contract, AbsurdNumbersAreRejected) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::pair<std::vector<double>, std::string>> cases = {
      {{nan}, "finite"},   {{inf}, "finite"},    {{1.0, -1.0}, "negative"},
      {{1e300}, "absurd"}, {{}, "at least one"}, {{1.0, nan, 2.0}, "finite"},
  };
  for (const auto& [run_secs, message] : cases) {
    try {
      db_->CommitRecords({MakeRecord(w, kCpu, 1, run_secs)});
      ADD_FAILURE() << "accepted " << ::testing::PrintToString(run_secs);
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  TuningRecord bad_time = MakeRecord(w, kCpu, 1, {1.0});
  bad_time.created_at = -inf;
  EXPECT_THROW(db_->CommitRecords({bad_time}), UserError);
  TuningRecord too_many = MakeRecord(w, kCpu, 1, std::vector<double>(kMaxRunSamples + 1, 1.0));
  EXPECT_THROW(db_->CommitRecords({too_many}), UserError);
  EXPECT_EQ(db_->Size(), 0u);
}

TEST_P(Contract, AGarbageTraceIsRejected) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  for (const nlohmann::json& trace :
       {nlohmann::json("not a trace"), nlohmann::json::object(),
        nlohmann::json{{"format", "tirtune-trace"}, {"version", 99}, {"insts", {}}},
        nlohmann::json{{"format", 7}},
        nlohmann::json::parse(R"({"format": "tirtune-trace", "version": 1,
            "insts": [{"kind": "NoSuchPrimitive", "v": 1}]})")}) {
    TuningRecord r = MakeRecord(w, kCpu, 1, {1.0});
    r.trace = trace;
    EXPECT_THROW(db_->CommitRecords({r}), UserError) << trace.dump();
  }
  EXPECT_EQ(db_->Size(), 0u);
}

TEST_P(Contract, RecordsOfAnUnknownWorkloadAreRejected) {
  db_->CommitWorkload(Gemm());
  EXPECT_THROW(db_->CommitRecords({MakeRecord(12345, kCpu, 1, {1.0})}), UserError);
  EXPECT_THROW(db_->CommitRecords({MakeRecord(1, "   ", 1, {1.0})}), UserError);
  EXPECT_EQ(db_->Size(), 0u);
}

TEST_P(Contract, RecordsOfReturnsEveryStatusAndTargetInCommitOrder) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  WorkloadId other = db_->CommitWorkload(Gemm(32)).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 1, {2.0}), MakeRecord(other, kCpu, 2, {1.0}),
                      MakeRecord(w, kOtherCpu, 3, {}, RecordStatus::kTimeout)});
  db_->CommitRecords({MakeRecord(w, kCpu, 4, {0.5})});
  std::vector<TuningRecord> all = db_->RecordsOf(w);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].trace, TraceNumbered(1));
  EXPECT_EQ(all[1].trace, TraceNumbered(3));
  EXPECT_EQ(all[1].target, kOtherCpu);
  EXPECT_EQ(all[2].trace, TraceNumbered(4));
  size_t visited = 0;
  db_->ForEachRecord([&](const TuningRecord&) { ++visited; });
  EXPECT_EQ(visited, 4u);
  EXPECT_EQ(db_->Size(), 4u);
}

TEST_P(Contract, StatsSummarizeEachWorkloadAndTarget) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 1, {2.0}), MakeRecord(w, kCpu, 2, {1.0}),
                      MakeRecord(w, kCpu, 3, {0.1}, RecordStatus::kWrongResult),
                      MakeRecord(w, kOtherCpu, 4, {}, RecordStatus::kBuildError)});
  std::vector<RecordGroupStats> stats = db_->Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].target, kOtherCpu);  // by target string within a workload
  EXPECT_EQ(stats[0].num_records, 1u);
  EXPECT_EQ(stats[0].num_ok, 0u);
  EXPECT_FALSE(stats[0].best_median_secs.has_value());
  EXPECT_EQ(stats[1].target, kCpu);
  EXPECT_EQ(stats[1].num_records, 3u);
  EXPECT_EQ(stats[1].num_ok, 2u);
  EXPECT_EQ(stats[1].best_median_secs, 1.0);
}

TEST_P(Contract, PruneKeepsTheBestOfEachWorkloadAndTarget) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  WorkloadId other = db_->CommitWorkload(Gemm(32)).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 1, {3.0}), MakeRecord(w, kCpu, 2, {1.0}),
                      MakeRecord(w, kCpu, 3, {2.0}),
                      MakeRecord(w, kCpu, 4, {}, RecordStatus::kTimeout),
                      MakeRecord(w, kOtherCpu, 5, {7.0}), MakeRecord(other, kCpu, 6, {4.0})});
  EXPECT_EQ(db_->Prune(/*keep=*/2), 2u);
  if (GetParam().persistent) Reopen();
  EXPECT_EQ(db_->Size(), 4u);
  std::vector<TuningRecord> top = db_->TopK(w, kCpu, 10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].trace, TraceNumbered(2));
  EXPECT_EQ(top[1].trace, TraceNumbered(3));
  EXPECT_EQ(db_->TopK(w, kOtherCpu, 10).size(), 1u);
  EXPECT_EQ(db_->Workloads().size(), 2u);
  EXPECT_EQ(db_->Prune(/*keep=*/2), 0u);
  // Still writable after a prune.
  EXPECT_EQ(db_->CommitRecords({MakeRecord(w, kCpu, 7, {0.5})}), 1u);
  EXPECT_EQ(db_->TopK(w, kCpu, 1).at(0).trace, TraceNumbered(7));
}

TEST_P(Contract, PruneAlsoKeepsTheOkRecordsAPredicateAccepts) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 1, {3.0}), MakeRecord(w, kCpu, 2, {1.0}),
                      MakeRecord(w, kCpu, 3, {2.0}), MakeRecord(w, kCpu, 4, {4.0}),
                      MakeRecord(w, kCpu, 5, {}, RecordStatus::kTimeout)});
  // Record 4 (the slowest) is accepted, record 2 too (kept anyway); a failure never is.
  auto accepted = [](const TuningRecord& r) {
    return r.trace == TraceNumbered(4) || r.trace == TraceNumbered(2) ||
           r.trace == TraceNumbered(5);
  };
  EXPECT_EQ(db_->Prune(/*keep=*/1, accepted), 3u);
  if (GetParam().persistent) Reopen();
  std::vector<TuningRecord> top = db_->TopK(w, kCpu, 10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].trace, TraceNumbered(2));
  EXPECT_EQ(top[1].trace, TraceNumbered(4));
  EXPECT_EQ(db_->Size(), 2u);
}

TEST_P(Contract, ContentsSurviveReopening) {
  if (!GetParam().persistent) GTEST_SKIP() << "in-memory";
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 1, {2.0}), MakeRecord(w, kCpu, 2, {1.0})});
  Reopen();
  EXPECT_EQ(db_->CommitWorkload(Gemm()).id, w);
  EXPECT_EQ(db_->Workloads().size(), 1u);
  EXPECT_EQ(db_->Size(), 2u);
  EXPECT_EQ(db_->TopK(w, kCpu, 1).at(0).trace, TraceNumbered(2));
  WorkloadId next = db_->CommitWorkload(Gemm(32)).id;
  EXPECT_NE(next, w);
  EXPECT_TRUE(warnings_.messages.empty()) << warnings_.messages[0];
}

TEST_P(Contract, CopyIntoAnotherBackendKeepsEverythingAndIsIdempotent) {
  WorkloadId w = db_->CommitWorkload(Gemm()).id;
  WorkloadId other = db_->CommitWorkload(Gemm(32)).id;
  db_->CommitRecords({MakeRecord(w, kCpu, 1, {2.0}), MakeRecord(other, kOtherCpu, 2, {1.0}),
                      MakeRecord(w, kCpu, 3, {}, RecordStatus::kBuildError)});
  std::unique_ptr<Database> copy = MakeMemoryDatabase();
  copy->CommitWorkload(Gemm(64));  // ids in the copy differ from ids here
  CopyStats stats = CopyDatabase(*db_, *copy, /*batch_size=*/2);
  EXPECT_EQ(stats.workloads, 2u);
  EXPECT_EQ(stats.records_read, 3u);
  EXPECT_EQ(stats.records_new, 3u);
  WorkloadId copied_other = copy->FindWorkload(Gemm(32))->id;
  ASSERT_EQ(copy->TopK(copied_other, kOtherCpu, 5).size(), 1u);
  EXPECT_EQ(copy->TopK(copied_other, kOtherCpu, 5)[0].trace, TraceNumbered(2));
  EXPECT_EQ(CopyDatabase(*db_, *copy).records_new, 0u);
  // And back: nothing new.
  EXPECT_EQ(CopyDatabase(*copy, *db_).records_new, 0u);
  EXPECT_EQ(db_->Size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Backends, Contract,
                         ::testing::Values(Backend{"memory", "", false},
                                           Backend{"sqlite", "tuning.db", true},
                                           Backend{"sqlite_ext", "tuning.sqlite", true},
                                           Backend{"jsonl", "tuning.jsonl", true},
                                           Backend{"postgres", "", true, /*postgres=*/true}),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tirtune
