// bench_postgres: the PostgreSQL backend against SQLite, on a throwaway PostgreSQL server of its
// own (tests/common/postgres_server.h, with fsync on: a server as deployed).
//
//   bench_postgres [--writers 4] [--per-writer 5000] [--batch 64] [--records 1000000]
//                  [--skip-writers] [--skip-topk]
//
// (a) Concurrent writers: WRITERS processes (this program again, with --writer) commit
//     PER_WRITER records each into one database in batches of BATCH, reading the top-k before
//     each batch as the tuner does, and each batch also carries one record that every writer
//     commits (a duplicate delivery). Reports errors, lost records (expected minus stored, by
//     writer) and duplicates; the same run on one SQLite file for comparison.
// (b) Top-k: fills RECORDS records (4 workloads, one target, 10% failures) into PostgreSQL and
//     into SQLite through the public API, then times TopK(k=64) on each, on a fresh connection
//     and repeated; prints the ratio.
#include <fcntl.h>
#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../tests/common/postgres_server.h"
#include "tirtune/database/database.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

extern char** environ;

namespace {

using tirtune::Database;
using tirtune::RecordStatus;
using tirtune::TuningRecord;
using tirtune::WorkloadId;
using Clock = std::chrono::steady_clock;

constexpr const char* kTarget = "llvm -mcpu=znver5 -num-cores=2";
constexpr size_t kTopK = 64;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// A schedule trace like the tuner's (sampled tiles, split, parallel, annotation), whose last
/// annotation carries `value` so that every value gives another record.
nlohmann::json Trace(int64_t value) {
  static const nlohmann::json base = [] {
    tirtune::Schedule sch(tirtune::MakeWorkload("gemm:256,256,256").func);
    auto blocks = sch.GetChildBlocks(sch.GetBlock("root"));
    auto loops = sch.GetLoops(blocks.back());
    auto i_tiles = sch.SamplePerfectTile(loops[0], 3, 0);
    auto j_tiles = sch.SamplePerfectTile(loops[1], 3, 0);
    auto i_parts = sch.Split(loops[0], {i_tiles[0], i_tiles[1], i_tiles[2]});
    auto j_parts = sch.Split(loops[1], {j_tiles[0], j_tiles[1], j_tiles[2]});
    sch.Reorder({i_parts[0], j_parts[0], i_parts[1], j_parts[1], i_parts[2], j_parts[2]});
    sch.Parallel(i_parts[0]);
    sch.Annotate(i_parts[0], "bench.candidate", 0);
    return sch.trace().ToJson();
  }();
  nlohmann::json t = base;
  t["insts"][t["insts"].size() - 1]["attrs"]["value"] = value;
  return t;
}

TuningRecord MakeRecord(WorkloadId w, int64_t value, uint64_t roll) {
  TuningRecord r;
  r.workload = w;
  r.target = kTarget;
  r.trace = Trace(value);
  if (roll % 10 == 0) {
    r.status = RecordStatus::kBuildError;
    r.error = "bench: build failed";
  } else {
    double base = 1e-4 * static_cast<double>(1 + (roll >> 8) % 100000) / 1000.0;
    r.run_secs = {base * 1.02, base, base * 1.01};
  }
  r.device = "bench device";
  r.program_version = "tirtune 0.1.0";
  return r;
}

uint64_t NextRandom(uint64_t& state) {  // xorshift: fixed, so reruns are identical
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

// ---- (a) concurrent writers

/// The child process: commits its records and prints "errors N new N".
int RunWriter(const std::string& db_path, int writer, size_t records, size_t batch_size) {
  size_t errors = 0, added = 0;
  std::unique_ptr<Database> db = tirtune::OpenDatabase(db_path);
  WorkloadId w = db->CommitWorkload(tirtune::MakeWorkload("gemm:256,256,256").func).id;
  uint64_t rng = 88172645463325252ull + static_cast<uint64_t>(writer);
  for (size_t i = 0, b = 0; i < records; ++b) {
    std::vector<TuningRecord> batch;
    for (; batch.size() < batch_size && i < records; ++i) {
      TuningRecord r =
          MakeRecord(w, static_cast<int64_t>((writer + 1) * 10000000 + i), NextRandom(rng));
      r.status = RecordStatus::kOk;  // every record is an ok one: lost ones show in top-k too
      if (r.run_secs.empty()) r.run_secs = {1e-3};
      r.device = fmt::format("writer {}", writer);
      batch.push_back(std::move(r));
    }
    batch.push_back(MakeRecord(w, -1 - static_cast<int64_t>(b), 1));
    batch.back().device = "shared";
    try {
      db->TopK(w, kTarget, 5);
      added += db->CommitRecords(batch);
    } catch (const std::exception& e) {
      ++errors;
      fmt::print(stderr, "writer {}: {}\n", writer, e.what());
    }
  }
  fmt::print("errors {} new {}\n", errors, added);
  return 0;
}

struct WriterRun {
  size_t errors = 0;
  size_t lost = 0;
  size_t duplicates = 0;
  size_t stored = 0;
  double seconds = 0;
};

WriterRun RunWriters(const std::string& self, const std::string& db_path, int writers,
                     size_t per_writer, size_t batch_size, const std::string& out_dir) {
  tirtune::OpenDatabase(db_path);  // the schema first, as a tuner that opened it earlier would
  WriterRun run;
  auto start = Clock::now();
  std::vector<pid_t> pids;
  for (int i = 0; i < writers; ++i) {
    std::string out = fmt::format("{}/writer{}.out", out_dir, i);
    std::vector<std::string> args = {self,
                                     "--writer",
                                     std::to_string(i),
                                     "--db",
                                     db_path,
                                     "--per-writer",
                                     std::to_string(per_writer),
                                     "--batch",
                                     std::to_string(batch_size)};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ) == 0) {
      pids.push_back(pid);
    } else {
      ++run.errors;
    }
    posix_spawn_file_actions_destroy(&actions);
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    ::waitpid(pids[i], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++run.errors;
    std::ifstream in(fmt::format("{}/writer{}.out", out_dir, i));
    std::string word;
    size_t errors = 0, added = 0;
    if (!(in >> word >> errors >> word >> added)) ++run.errors;
    run.errors += errors;
  }
  run.seconds = SecondsSince(start);
  std::unique_ptr<Database> db = tirtune::OpenDatabase(db_path);
  std::map<std::string, size_t> by_device;
  std::map<std::string, size_t> seen;
  db->ForEachRecord([&](const TuningRecord& r) {
    ++by_device[r.device];
    if (++seen[r.trace.dump()] == 2) ++run.duplicates;
  });
  for (int i = 0; i < writers; ++i) {
    size_t got = by_device[fmt::format("writer {}", i)];
    run.lost += per_writer > got ? per_writer - got : 0;
  }
  size_t batches = (per_writer + batch_size - 1) / batch_size;
  run.lost += batches > by_device["shared"] ? batches - by_device["shared"] : 0;
  run.stored = db->Size();
  return run;
}

void PrintWriters(const char* name, const WriterRun& run, int writers, size_t per_writer,
                  size_t batch) {
  fmt::print(
      "  {}: {} errors, {} lost, {} duplicates; {} records stored ({} expected) in {:.1f} s, "
      "{:.0f} records/s\n",
      name, run.errors, run.lost, run.duplicates, run.stored,
      writers * per_writer + (per_writer + batch - 1) / batch, run.seconds,
      static_cast<double>(run.stored) / run.seconds);
}

// ---- (b) top-k on a million records

constexpr int kWorkloads = 4;

std::vector<WorkloadId> Fill(Database& db, size_t records) {
  std::vector<WorkloadId> ids;
  for (int w = 0; w < kWorkloads; ++w) {
    int n = 128 + 64 * w;
    ids.push_back(
        db.CommitWorkload(tirtune::MakeWorkload(fmt::format("gemm:{},{},{}", n, n, n)).func).id);
  }
  if (db.Size() >= records) return ids;  // kept from an earlier run
  constexpr size_t kBatch = 10000;
  uint64_t rng = 88172645463325252ull;
  auto start = Clock::now();
  std::vector<TuningRecord> batch;
  for (size_t i = 0; i < records;) {
    batch.clear();
    for (; batch.size() < kBatch && i < records; ++i) {
      batch.push_back(MakeRecord(ids[i % ids.size()], static_cast<int64_t>(i), NextRandom(rng)));
    }
    db.CommitRecords(batch);
  }
  fmt::print("  fill {}: {} records in {:.1f} s\n", db.Describe(), records, SecondsSince(start));
  return ids;
}

struct TopKTimes {
  double fresh_ms = 0;     // median of the first query on a fresh connection, per workload
  double repeated_ms = 0;  // median of repeated queries
};

TopKTimes TimeTopK(const std::string& path, const std::vector<WorkloadId>& ids) {
  TopKTimes t;
  std::vector<double> fresh, repeated;
  for (WorkloadId w : ids) {
    std::unique_ptr<Database> db = tirtune::OpenDatabase(path);
    auto start = Clock::now();
    size_t got = db->TopK(w, kTarget, kTopK).size();
    fresh.push_back(SecondsSince(start) * 1e3);
    if (got != kTopK) fmt::print(stderr, "unexpected: {} records\n", got);
  }
  std::unique_ptr<Database> db = tirtune::OpenDatabase(path);
  for (int round = 0; round < 50; ++round) {
    for (WorkloadId w : ids) {
      auto start = Clock::now();
      db->TopK(w, kTarget, kTopK);
      repeated.push_back(SecondsSince(start) * 1e3);
    }
  }
  t.fresh_ms = Median(fresh);
  t.repeated_ms = Median(repeated);
  return t;
}

struct Args {
  int writers = 4;
  size_t per_writer = 5000;
  size_t batch = 64;
  size_t records = 1000000;
  bool skip_writers = false;
  bool skip_topk = false;
  int writer = -1;  // set in the child processes
  std::string db;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--writers" && has_value) {
      a.writers = std::stoi(argv[++i]);
    } else if (arg == "--per-writer" && has_value) {
      a.per_writer = std::stoul(argv[++i]);
    } else if (arg == "--batch" && has_value) {
      a.batch = std::stoul(argv[++i]);
    } else if (arg == "--records" && has_value) {
      a.records = std::stoul(argv[++i]);
    } else if (arg == "--writer" && has_value) {
      a.writer = std::stoi(argv[++i]);
    } else if (arg == "--db" && has_value) {
      a.db = argv[++i];
    } else if (arg == "--skip-writers") {
      a.skip_writers = true;
    } else if (arg == "--skip-topk") {
      a.skip_topk = true;
    } else {
      fmt::print(stderr,
                 "usage: bench_postgres [--writers N] [--per-writer N] [--batch N] [--records N] "
                 "[--skip-writers] [--skip-topk]\n");
      std::exit(2);
    }
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = ParseArgs(argc, argv);
  try {
    if (args.writer >= 0) return RunWriter(args.db, args.writer, args.per_writer, args.batch);
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::string dir =
        (std::filesystem::temp_directory_path() / fmt::format("bench_postgres_{}", ::getpid()))
            .string();
    std::filesystem::create_directories(dir);
    tirtune::testing::PostgresServer server(
        tirtune::testing::PostgresServerOptions{.unsafe_fast = false});
    if (!server.ok()) {
      fmt::print(stderr, "error: {}\n", server.error());
      return 1;
    }
    fmt::print("bench_postgres: PostgreSQL {} on 127.0.0.1:{} (fsync on), SQLite in {}\n",
               server.Sql("SHOW server_version"), server.port(), dir);
    if (!args.skip_writers) {
      fmt::print("(a) {} writer processes x {} records, batches of {} (+1 shared record each):\n",
                 args.writers, args.per_writer, args.batch);
      WriterRun pg =
          RunWriters(self, server.NewDatabase(), args.writers, args.per_writer, args.batch, dir);
      PrintWriters("postgresql", pg, args.writers, args.per_writer, args.batch);
      WriterRun lite =
          RunWriters(self, dir + "/writers.db", args.writers, args.per_writer, args.batch, dir);
      PrintWriters("sqlite    ", lite, args.writers, args.per_writer, args.batch);
    }
    if (!args.skip_topk) {
      fmt::print("(b) top-k (k={}) on {} records, {} workloads x 1 target, 10% failures:\n", kTopK,
                 args.records, kWorkloads);
      std::string pg_url = server.NewDatabase();
      std::string lite_path = dir + "/topk.db";
      std::vector<WorkloadId> pg_ids, lite_ids;
      {
        std::unique_ptr<Database> pg = tirtune::OpenDatabase(pg_url);
        pg_ids = Fill(*pg, args.records);
        std::unique_ptr<Database> lite = tirtune::OpenDatabase(lite_path);
        lite_ids = Fill(*lite, args.records);
      }
      server.Sql("VACUUM ANALYZE", pg_url.substr(pg_url.rfind('/') + 1));
      TopKTimes pg = TimeTopK(pg_url, pg_ids);
      TopKTimes lite = TimeTopK(lite_path, lite_ids);
      fmt::print("  postgresql: fresh connection {:.3f} ms, repeated {:.3f} ms (median)\n",
                 pg.fresh_ms, pg.repeated_ms);
      fmt::print("  sqlite:     fresh connection {:.3f} ms, repeated {:.3f} ms (median)\n",
                 lite.fresh_ms, lite.repeated_ms);
      fmt::print("  ratio postgresql / sqlite: fresh {:.2f}, repeated {:.2f}\n",
                 pg.fresh_ms / lite.fresh_ms, pg.repeated_ms / lite.repeated_ms);
    }
    std::filesystem::remove_all(dir);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
