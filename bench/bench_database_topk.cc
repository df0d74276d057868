// bench_database_topk: top-k latency on a SQLite tuning database with a million records.
//
//   bench_database_topk [--records N] [--db FILE] [--keep]
//
// Fills FILE (default: a temporary file, removed afterwards; an existing FILE with enough
// records is reused) through the public Database API with N records spread over 10 workloads x
// 4 targets (10% failures), then times Database::TopK(k=10) for every (workload, target) pair,
// cold (a fresh connection) and warm, and, for comparison, the same query forced to scan the
// table (NOT INDEXED). Prints milliseconds.
#include <fmt/core.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tirtune/database/database.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

namespace {

using tirtune::Database;
using tirtune::RecordStatus;
using tirtune::TuningRecord;
using tirtune::WorkloadId;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

/// A real schedule trace whose last instruction (an annotation) carries `value`.
nlohmann::json Trace(int64_t value) {
  static const nlohmann::json base = [] {
    tirtune::Schedule sch(tirtune::MakeWorkload("gemm:64,64,64").func);
    auto blocks = sch.GetChildBlocks(sch.GetBlock("root"));
    auto loops = sch.GetLoops(blocks.back());
    auto tiles = sch.SamplePerfectTile(loops[0], 2, 0);
    auto parts = sch.Split(loops[0], {tiles[0], tiles[1]});
    sch.Parallel(parts[0]);
    sch.Annotate(parts[1], "bench.candidate", 0);
    return sch.trace().ToJson();
  }();
  nlohmann::json t = base;
  t["insts"][t["insts"].size() - 1]["attrs"]["value"] = value;
  return t;
}

struct Args {
  size_t records = 1000000;
  std::string db;
  bool keep = false;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--records" && i + 1 < argc) {
      a.records = std::stoul(argv[++i]);
    } else if (arg == "--db" && i + 1 < argc) {
      a.db = argv[++i];
    } else if (arg == "--keep") {
      a.keep = true;
    } else {
      fmt::print(stderr, "usage: bench_database_topk [--records N] [--db FILE.db] [--keep]\n");
      std::exit(2);
    }
  }
  if (a.db.empty()) {
    a.db = (std::filesystem::temp_directory_path() /
            fmt::format("bench_database_topk_{}.db", ::getpid()))
               .string();
  } else {
    a.keep = true;
  }
  return a;
}

constexpr int kWorkloads = 10;
const char* kTargets[] = {"llvm -mcpu=znver5 -num-cores=2", "llvm -mcpu=znver4 -num-cores=8",
                          "llvm -mcpu=skylake-avx512", "cuda -arch=sm_90"};

std::vector<WorkloadId> CommitWorkloads(Database& db) {
  std::vector<WorkloadId> ids;
  for (int w = 0; w < kWorkloads; ++w) {
    int n = 32 + 16 * w;
    ids.push_back(
        db.CommitWorkload(tirtune::MakeWorkload(fmt::format("gemm:{},{},{}", n, n, n)).func).id);
  }
  return ids;
}

void Fill(Database& db, const std::vector<WorkloadId>& workloads, size_t records) {
  constexpr size_t kBatch = 10000;
  uint64_t rng = 88172645463325252ull;  // xorshift: fixed, so reruns are identical
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  auto start = Clock::now();
  std::vector<TuningRecord> batch;
  for (size_t i = db.Size(); i < records;) {
    batch.clear();
    for (; batch.size() < kBatch && i < records; ++i) {
      TuningRecord r;
      r.workload = workloads[i % workloads.size()];
      r.target = kTargets[(i / workloads.size()) % 4];
      r.trace = Trace(static_cast<int64_t>(i));
      uint64_t roll = next();
      if (roll % 10 == 0) {
        r.status = RecordStatus::kBuildError;
        r.error = "bench: build failed";
      } else {
        double base = 1e-4 * static_cast<double>(1 + (roll >> 8) % 100000) / 1000.0;
        r.run_secs = {base * 1.02, base, base * 1.01};
      }
      r.device = "bench device";
      r.program_version = "tirtune 0.1.0";
      batch.push_back(std::move(r));
    }
    db.CommitRecords(batch);
    if ((i / kBatch) % 10 == 0) {
      fmt::print(stderr, "\r  filled {} / {} records", i, records);
    }
  }
  fmt::print(stderr, "\n");
  double ms = MsSince(start);
  fmt::print("fill: {} records in {:.1f} s ({:.0f} records/s, batches of {})\n", records, ms / 1000,
             static_cast<double>(records) / (ms / 1000), kBatch);
}

/// TopK(k) for every (workload, target); the time of each call in ms.
std::vector<double> TimeTopK(Database& db, const std::vector<WorkloadId>& workloads, size_t k) {
  std::vector<double> ms;
  for (WorkloadId w : workloads) {
    for (const char* target : kTargets) {
      auto start = Clock::now();
      std::vector<TuningRecord> top = db.TopK(w, target, k);
      ms.push_back(MsSince(start));
      if (top.size() != k) fmt::print(stderr, "unexpected: {} records\n", top.size());
    }
  }
  return ms;
}

/// The top-k query forced to scan the table, for comparison; ms per query.
double TimeScan(const std::string& path, WorkloadId workload) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT id FROM tuning_record NOT INDEXED WHERE workload_id = ?1 AND "
                     "target_id = 1 AND status = 'ok' ORDER BY median_secs, id LIMIT 10",
                     -1, &stmt, nullptr);
  sqlite3_bind_int64(stmt, 1, workload);
  auto start = Clock::now();
  while (sqlite3_step(stmt) == SQLITE_ROW) {
  }
  double ms = MsSince(start);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = ParseArgs(argc, argv);
  fmt::print("bench_database_topk: {} records in {}\n", args.records, args.db);
  try {
    std::vector<WorkloadId> workloads;
    {
      std::unique_ptr<Database> db = tirtune::OpenDatabase(args.db);
      workloads = CommitWorkloads(*db);
      Fill(*db, workloads, args.records);
      fmt::print("size: {} records, file {:.0f} MB\n", db->Size(),
                 static_cast<double>(std::filesystem::file_size(args.db)) / 1e6);
    }
    constexpr size_t kK = 10;
    std::unique_ptr<Database> db = tirtune::OpenDatabase(args.db);
    std::vector<double> cold = TimeTopK(*db, workloads, kK);
    std::vector<double> warm;
    for (int round = 0; round < 20; ++round) {
      std::vector<double> ms = TimeTopK(*db, workloads, kK);
      warm.insert(warm.end(), ms.begin(), ms.end());
    }
    fmt::print("topk k={} over {} (workload, target) pairs of ~{} records each:\n", kK, cold.size(),
               args.records / cold.size());
    fmt::print("  first query per pair (fresh connection): median {:.3f} ms, max {:.3f} ms\n",
               Percentile(cold, 0.5), Percentile(cold, 1.0));
    fmt::print("  repeated ({} queries): median {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms\n",
               warm.size(), Percentile(warm, 0.5), Percentile(warm, 0.99), Percentile(warm, 1.0));
    fmt::print("  the same query without the index (full scan): {:.1f} ms\n",
               TimeScan(args.db, workloads[0]));
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  if (!args.keep) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(args.db + suffix);
  }
  return 0;
}
