// Several processes on one SQLite file: concurrent writers lose nothing and never see "database is
// locked", and a writer killed with SIGKILL mid-commit leaves whole batches only. The test binary
// re-invokes itself (posix_spawn) to run SqliteWorker.Run in the child processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "test_records.h"

extern char** environ;

namespace tirtune {
namespace {

using testing::Gemm;
using testing::MakeRecord;
using testing::TempDir;

constexpr const char* kCpu = "llvm -mcpu=znver5 -num-cores=2";
constexpr const char* kWorkerEnv = "TIRTUNE_DB_TEST_WORKER";

/// What a child process does, passed in kWorkerEnv as "PATH WORKER BATCHES BATCH_SIZE".
struct WorkerJob {
  std::string path;
  int worker = 0;
  int batches = 0;  // 0: until killed
  int batch_size = 0;
};

/// The trace value of record `i` of batch `batch` of `worker`: unique per record.
int64_t TraceValue(int worker, int batch, int i) {
  return (int64_t{worker} * 100000 + batch) * 100000 + i;
}

/// The child: commits batches, reading the current best before each (read-then-write, the
/// pattern that fails with deferred transactions). Each batch also holds one record that every
/// worker commits (a duplicate delivery). Every record of a batch names the batch in `device`.
void RunWorker(const WorkerJob& job) {
  std::unique_ptr<Database> db = OpenDatabase(job.path);
  WorkloadId w = db->CommitWorkload(Gemm()).id;
  for (int b = 0; job.batches == 0 || b < job.batches; ++b) {
    db->TopK(w, kCpu, 5);
    std::vector<TuningRecord> batch;
    for (int i = 0; i < job.batch_size; ++i) {
      batch.push_back(MakeRecord(w, kCpu, TraceValue(job.worker, b, i), {1e-3 * (1 + i % 97)}));
      batch.back().device = "worker " + std::to_string(job.worker) + " batch " + std::to_string(b);
    }
    TuningRecord shared = MakeRecord(w, kCpu, -1 - b, {1.0});
    shared.device = "shared";
    batch.push_back(shared);
    db->CommitRecords(batch);
  }
}

TEST(SqliteWorker, Run) {
  const char* spec = std::getenv(kWorkerEnv);
  if (spec == nullptr) GTEST_SKIP() << "run by the multi-process tests only";
  WorkerJob job;
  std::istringstream in(spec);
  in >> job.path >> job.worker >> job.batches >> job.batch_size;
  ASSERT_TRUE(in) << spec;
  try {
    RunWorker(job);
  } catch (const std::exception& e) {
    FAIL() << "worker " << job.worker << ": " << e.what();
  }
}

/// A child process running one WorkerJob, its output in `log`.
struct Child {
  pid_t pid = -1;
  std::string log;
};

Child Spawn(const WorkerJob& job, const TempDir& dir) {
  Child child;
  child.log = dir.File("worker" + std::to_string(job.worker) + ".log");
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=SqliteWorker.Run";
  std::string env_var = std::string(kWorkerEnv) + "=" + job.path + " " +
                        std::to_string(job.worker) + " " + std::to_string(job.batches) + " " +
                        std::to_string(job.batch_size);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(env_var.data());
  env.push_back(nullptr);
  char* argv[] = {self.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, child.log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  int rc = posix_spawn(&child.pid, self.c_str(), &actions, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "posix_spawn failed";
  return child;
}

std::string ReadLog(const Child& child) {
  std::ifstream in(child.log);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Waits for `child`; its exit status (128 + signal when killed).
int Wait(const Child& child) {
  int status = 0;
  waitpid(child.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(SqliteProcesses, FourConcurrentWritersLoseNothingAndNeverSeeLocked) {
  TempDir dir;
  std::string path = dir.File("shared.db");
  constexpr int kWorkers = 4, kBatches = 25, kBatchSize = 40;
  std::vector<Child> children;
  for (int w = 0; w < kWorkers; ++w) {
    children.push_back(Spawn({path, w, kBatches, kBatchSize}, dir));
  }
  for (const Child& c : children) {
    int code = Wait(c);
    std::string log = ReadLog(c);
    EXPECT_EQ(code, 0) << log;
    EXPECT_EQ(log.find("database is locked"), std::string::npos) << log;
    EXPECT_NE(log.find("[  PASSED  ] 1 test"), std::string::npos) << log;
  }
  std::unique_ptr<Database> db = OpenDatabase(path);
  // One workload although all four committed it at once; every record once, the shared ones
  // (one per batch index) once in all.
  ASSERT_EQ(db->Workloads().size(), 1u);
  EXPECT_EQ(db->Size(), size_t{kWorkers * kBatches * kBatchSize + kBatches});
  std::map<std::string, size_t> per_batch;
  db->ForEachRecord([&](const TuningRecord& r) { ++per_batch[r.device]; });
  EXPECT_EQ(per_batch.size(), size_t{kWorkers * kBatches + 1});
  for (const auto& [device, n] : per_batch) {
    if (device != "shared") {
      EXPECT_EQ(n, size_t{kBatchSize}) << device;
    }
  }
}

TEST(SqliteProcesses, AWriterKilledMidCommitLeavesWholeBatchesOnly) {
  TempDir dir;
  std::string path = dir.File("killed.db");
  // Batches large enough (about 4 MB, past SQLite's default 2 MB page cache) to spill pages of the
  // open transaction into the WAL before it commits, so that a kill can leave uncommitted frames
  // behind for recovery to ignore.
  constexpr int kBatchSize = 6000;
  std::mt19937 rng(7);
  size_t total = 0;
  for (int round = 0; round < 3; ++round) {
    Child child = Spawn({path, round, /*batches=*/0, kBatchSize}, dir);
    // Let it commit at least one batch, then kill it at a random moment of a later one.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    size_t seen = total;
    while (seen == total && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::unique_ptr<Database> peek = OpenDatabase(path);
      seen = peek->Size();
    }
    ASSERT_GT(seen, total) << "the worker committed nothing: " << ReadLog(child);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 800));
    kill(child.pid, SIGKILL);
    ASSERT_EQ(Wait(child), 128 + SIGKILL) << ReadLog(child);

    testing::Warnings warnings;
    std::unique_ptr<Database> db = OpenDatabase(path, warnings.Options());
    std::map<std::string, size_t> per_batch;
    db->ForEachRecord([&](const TuningRecord& r) { ++per_batch[r.device]; });
    for (const auto& [device, n] : per_batch) {
      if (device != "shared") {
        EXPECT_EQ(n, size_t{kBatchSize}) << "round " << round << " " << device;
      }
    }
    EXPECT_TRUE(warnings.messages.empty()) << warnings.messages[0];
    total = db->Size();
    // And it takes new batches.
    TuningRecord after = MakeRecord(db->CommitWorkload(Gemm()).id, kCpu, -1000 - round, {1.0});
    after.device = "shared";
    ASSERT_EQ(db->CommitRecords({after}), 1u);
    ++total;
  }
}

}  // namespace
}  // namespace tirtune
