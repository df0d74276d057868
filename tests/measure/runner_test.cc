// The isolated runner: a good kernel measures ok; a kernel that crashes, hangs or computes
// garbage is reported with its own status within the timeout, the worker is respawned, and the
// next good candidate measures correctly. Faulty kernels are written in lowered form.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "planted_faults.h"
#include "tirtune/codegen/build.h"
#include "tirtune/codegen/target.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/ir/parser.h"
#include "tirtune/measure/runner_pool.h"
#include "tirtune/measure/runner_worker.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;  // the planted-fault kernels

constexpr uint64_t kSeed = 7;

// A candidate whose expected outputs come from the reference gemm in the interpreter.
MeasureCandidate Candidate(const char* text) {
  static const std::vector<NDArray> expected =
      InterpretWithRandomInputs(ParsePrimFunc(kGemm), kSeed);
  PrimFunc f = ParsePrimFunc(text);
  MeasureCandidate c;
  c.object = EmitObject(f, Target::Host());
  c.func_name = f->name;
  c.target = Target::Host().str();
  c.args = ArgSpecsOf(f);
  c.seed = kSeed;
  c.expected = {NDArray(), NDArray(), expected[2]};
  return c;
}

RunnerConfig SmallConfig() {
  RunnerConfig config;
  config.timeout_s = 2;
  config.timer.warmup = 1;
  config.timer.repeat = 3;
  config.timer.min_repeat_ms = 1;
  return config;
}

void ExpectGoodGemmMeasures(RunnerPool& pool) {
  MeasureResult r = pool.MeasureOne(Candidate(kGemm));
  EXPECT_EQ(r.status, MeasureStatus::kOk) << r.message;
  EXPECT_EQ(r.seconds.size(), 3u);
  EXPECT_GT(r.median, 0);
  EXPECT_GE(r.number, 1);
}

TEST(RunnerProtocol, RequestAndReplyRoundTrip) {
  RunRequest request;
  request.object = std::string("\0ELF", 4);
  request.func_name = "f";
  request.target = "llvm";
  request.args = {{"A", {2, 3}, DataType::Float(16), {}}, {"c", {}, DataType::Float(32), {1.5}}};
  request.args[1].constant = true;
  request.seed = 99;
  request.timer.repeat = 7;
  request.timer.flush_cache = true;
  request.timer.cold_constants = true;
  request.reduction_length = 4096;
  NDArray e = NDArray::Empty({2, 3}, DataType::Float(16));
  e.FillRandom(1);
  request.expected = {e, NDArray()};
  RunRequest back = DeserializeRequest(SerializeRequest(request));
  EXPECT_EQ(back.object, request.object);
  EXPECT_EQ(back.args[0].shape, request.args[0].shape);
  EXPECT_EQ(back.args[0].dtype, DataType::Float(16));
  EXPECT_TRUE(back.args[0].values.empty());
  EXPECT_EQ(back.args[1].values, std::vector<double>{1.5});
  EXPECT_FALSE(back.args[0].constant);
  EXPECT_TRUE(back.args[1].constant);
  EXPECT_TRUE(back.timer.cold_constants);
  EXPECT_EQ(back.seed, 99u);
  EXPECT_EQ(back.timer.repeat, 7);
  EXPECT_TRUE(back.timer.flush_cache);
  EXPECT_EQ(back.reduction_length, 4096);
  ASSERT_EQ(back.expected.size(), 2u);
  EXPECT_FALSE(back.expected[1].defined());
  EXPECT_EQ(back.expected[0].GetDouble(5), e.GetDouble(5));

  RunReply reply;
  reply.kind = ReplyKind::kWrongResult;
  reply.message = "C[3]";
  reply.max_abs_error = 1.5;
  reply.timing.seconds = {1e-3, 2e-3};
  RunReply reply_back = DeserializeReply(SerializeReply(reply));
  EXPECT_EQ(reply_back.kind, ReplyKind::kWrongResult);
  EXPECT_EQ(reply_back.message, "C[3]");
  EXPECT_EQ(reply_back.max_abs_error, 1.5);
  EXPECT_EQ(reply_back.timing.seconds, reply.timing.seconds);
  EXPECT_THROW(DeserializeReply("junk"), UserError);
}

TEST(RunnerWorker, SeededArgsAreDrawnOnceAndHandedOutAsFreshCopies) {
  RunRequest request;
  request.args = {{"A", {4, 8}, DataType::Float(32), {}}, {"B", {3}, DataType::Int(32), {}}};
  request.seed = 5;
  std::vector<NDArray> first = SeededArgs(request);
  ASSERT_EQ(first.size(), 2u);
  NDArray want = NDArray::Empty({4, 8}, DataType::Float(32));
  RandomRange range = RandomRangeFor(DataType::Float(32));
  want.FillRandom(5, range.lo, range.hi);
  EXPECT_EQ(std::memcmp(first[0].raw(), want.raw(), want.nbytes()), 0);
  first[0].Fill(0);  // a kernel writes its outputs into the copy, never into the drawn values
  std::vector<NDArray> second = SeededArgs(request);
  EXPECT_EQ(std::memcmp(second[0].raw(), want.raw(), want.nbytes()), 0);
  EXPECT_NE(second[0].raw(), first[0].raw());
  request.seed = 6;  // another seed: drawn again
  EXPECT_NE(std::memcmp(SeededArgs(request)[0].raw(), want.raw(), want.nbytes()), 0);
  request.seed = 5;
  request.args[0].shape = {8, 4};  // another shape: drawn again, the same values for that seed
  EXPECT_EQ(SeededArgs(request)[0].shape(), (std::vector<int64_t>{8, 4}));
  // Stated values replace the random ones; a count that does not match is refused.
  request.args[1].values = {7, 8, 9};
  std::vector<NDArray> stated = SeededArgs(request);
  EXPECT_EQ(stated[1].GetDouble(0), 7);
  EXPECT_EQ(stated[1].GetDouble(2), 9);
  request.args[1].values = {7};
  EXPECT_THROW(SeededArgs(request), UserError);
  request.args[1].values = {};
  EXPECT_NE(SeededArgs(request)[1].GetDouble(0), 7);
}

TEST(Runner, ArgSpecsMarkTheLayoutFreeParametersConstant) {
  PrimFunc f = WithLayoutFreeParams(ParsePrimFunc(kGemm), {1});
  std::vector<ArgSpec> specs = ArgSpecsOf(f);
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_FALSE(specs[0].constant);
  EXPECT_TRUE(specs[1].constant);
  EXPECT_FALSE(specs[2].constant);
  for (const ArgSpec& s : ArgSpecsOf(ParsePrimFunc(kGemm))) EXPECT_FALSE(s.constant);
}

TEST(RunnerWorker, TheConstantArgumentsAreWhatColdWeightsEvict) {
  RunRequest request;
  request.args = {{"A", {4, 8}, DataType::Float(32), {}}, {"B", {8, 2}, DataType::Float(32), {}}};
  request.args[1].constant = true;
  std::vector<NDArray> args = SeededArgs(request);
  std::vector<ByteRange> ranges = ConstantArgs(request, args);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].data, args[1].raw());
  EXPECT_EQ(ranges[0].bytes, 8u * 2 * sizeof(float));
  request.args[1].constant = false;
  EXPECT_TRUE(ConstantArgs(request, args).empty());
}

TEST(Runner, AGemmWithColdWeightsIsVerifiedAndTimed) {
  RunnerConfig config = SmallConfig();
  config.timer.cold_constants = true;
  RunnerPool pool(config);
  MeasureCandidate c = Candidate(kGemm);
  c.args[1].constant = true;
  MeasureResult r = pool.MeasureOne(c);
  EXPECT_EQ(r.status, MeasureStatus::kOk) << r.message;
  EXPECT_EQ(r.seconds.size(), 3u);
  EXPECT_GT(r.median, 0);
}

TEST(Runner, GoodGemmMeasuresOk) {
  RunnerPool pool(SmallConfig());
  ExpectGoodGemmMeasures(pool);
  ExpectGoodGemmMeasures(pool);
  EXPECT_EQ(pool.spawn_count(), 1);
}

TEST(Runner, StartingAfreshMeasuresTheNextCandidatesInANewProcess) {
  RunnerPool pool(SmallConfig());
  ExpectGoodGemmMeasures(pool);
  int first = pool.worker_pids().at(0);
  EXPECT_NE(first, 0);
  pool.StartAfresh();
  EXPECT_EQ(pool.worker_pids().at(0), 0);
  pool.StartAfresh();  // nothing running: nothing to stop
  ExpectGoodGemmMeasures(pool);
  EXPECT_NE(pool.worker_pids().at(0), 0);
  EXPECT_NE(pool.worker_pids().at(0), first);
  EXPECT_EQ(pool.spawn_count(), 2);
}

// A verified result carries the largest error found within the tolerance.
TEST(Runner, AVerifiedResultReportsItsLargestError) {
  RunnerPool pool(SmallConfig());
  MeasureCandidate c = Candidate(kGemm);
  NDArray nudged = NDArray::Empty(c.expected[2].shape(), c.expected[2].dtype());
  for (int64_t i = 0; i < nudged.size(); ++i) nudged.SetDouble(i, c.expected[2].GetDouble(i));
  nudged.SetDouble(3, nudged.GetDouble(3) + 1e-6);
  c.expected[2] = nudged;
  MeasureResult r = pool.MeasureOne(c);
  ASSERT_EQ(r.status, MeasureStatus::kOk) << r.message;
  EXPECT_GT(r.max_abs_error, 5e-7);
  EXPECT_LT(r.max_abs_error, 2e-6);
}

TEST(Runner, SegfaultIsRuntimeErrorAndWorkerIsRespawned) {
  RunnerPool pool(SmallConfig());
  MeasureResult r = pool.MeasureOne(Candidate(kSegfault));
  EXPECT_EQ(r.status, MeasureStatus::kRuntimeError) << r.message;
  EXPECT_EQ(r.signal_name, "SIGSEGV") << r.message;
  EXPECT_EQ(pool.spawn_count(), 2);
  ExpectGoodGemmMeasures(pool);
}

TEST(Runner, EndlessLoopTimesOutAndWorkerIsRespawned) {
  RunnerPool pool(SmallConfig());
  auto start = std::chrono::steady_clock::now();
  MeasureResult r = pool.MeasureOne(Candidate(kEndless));
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, MeasureStatus::kTimeout) << r.message;
  EXPECT_LT(elapsed, 10);
  EXPECT_EQ(pool.spawn_count(), 2);
  ExpectGoodGemmMeasures(pool);
}

TEST(Runner, GarbageOutputIsWrongResultWithItsError) {
  RunnerPool pool(SmallConfig());
  MeasureResult r = pool.MeasureOne(Candidate(kGarbage));
  EXPECT_EQ(r.status, MeasureStatus::kWrongResult) << r.message;
  EXPECT_GT(r.max_abs_error, 30);
  EXPECT_TRUE(r.seconds.empty());
  EXPECT_EQ(pool.spawn_count(), 1);  // a wrong result does not cost the worker
  ExpectGoodGemmMeasures(pool);
}

TEST(Runner, ACandidateSlowerThanTheCutoffIsVerifiedButNotTimed) {
  RunnerConfig config = SmallConfig();
  config.timer.min_repeat_ms = 0;  // no floor under the cut: the tiny gemm is cut too
  RunnerPool pool(config);
  SlowCutoff cutoff;
  cutoff.factor = 2;
  cutoff.long_run_seconds = 1e-12;
  MeasureResult slow = pool.Measure({Candidate(kGemm)}, cutoff).front();
  ASSERT_EQ(slow.status, MeasureStatus::kOk) << slow.message;
  EXPECT_EQ(slow.seconds.size(), 1u);
  EXPECT_EQ(slow.number, 1);
  // The cutoff never spares verification: garbage is still a wrong result.
  EXPECT_EQ(pool.Measure({Candidate(kGarbage)}, cutoff).front().status,
            MeasureStatus::kWrongResult);
  ExpectGoodGemmMeasures(pool);
}

TEST(Runner, ASlowCutoffShortensTheTimeoutOnceAMedianIsKnown) {
  RunnerConfig config = SmallConfig();
  config.timeout_s = 30;
  RunnerPool pool(config);
  SlowCutoff cutoff;
  cutoff.factor = 2;
  cutoff.grace_s = 0.5;
  // No median known before the batch: the first gemm's result sets one, and the hung candidate
  // after it is stopped at 0.5 s plus 4 gemm medians instead of 30 s.
  std::vector<size_t> told;
  std::vector<MeasureResult> results =
      pool.Measure({Candidate(kGemm), Candidate(kEndless)}, cutoff,
                   [&](size_t index, const MeasureResult&) { told.push_back(index); });
  ASSERT_EQ(results[0].status, MeasureStatus::kOk) << results[0].message;
  EXPECT_EQ(results[0].seconds.size(), 3u);  // fast: timed in full despite the cutoff
  ASSERT_EQ(results[1].status, MeasureStatus::kTimeout);
  EXPECT_NE(results[1].message.find("within 0.5"), std::string::npos) << results[1].message;
  EXPECT_EQ(told, (std::vector<size_t>{0, 1}));
  ExpectGoodGemmMeasures(pool);
}

TEST(Runner, WithoutAKnownMedianOnlyTheConfiguredTimeoutApplies) {
  RunnerPool pool(SmallConfig());  // timeout 2 s
  SlowCutoff cutoff;
  cutoff.factor = 2;
  cutoff.grace_s = 0.5;
  MeasureResult r = pool.Measure({Candidate(kEndless)}, cutoff).front();
  ASSERT_EQ(r.status, MeasureStatus::kTimeout);
  EXPECT_NE(r.message.find("within 2 s"), std::string::npos) << r.message;
}

TEST(Runner, UnloadableObjectIsRuntimeError) {
  RunnerPool pool(SmallConfig());
  MeasureCandidate c = Candidate(kGemm);
  c.object = "not an object";
  MeasureResult r = pool.MeasureOne(c);
  EXPECT_EQ(r.status, MeasureStatus::kRuntimeError);
  EXPECT_NE(r.message.find("cannot load"), std::string::npos) << r.message;
  ExpectGoodGemmMeasures(pool);
}

TEST(Runner, MissingExecutableIsRunnerLost) {
  RunnerConfig config = SmallConfig();
  config.runner_path = "/nonexistent/tirtune-runner";
  RunnerPool pool(config);
  MeasureResult r = pool.MeasureOne(Candidate(kGemm));
  EXPECT_EQ(r.status, MeasureStatus::kRunnerLost);
  EXPECT_FALSE(r.message.empty());
}

TEST(Runner, PinnedWorkersMeasureAMixedBatchInOrder) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &allowed)) ++cpu;
  RunnerConfig config = SmallConfig();
  config.num_workers = 2;
  config.cpu_sets = {{cpu}, {cpu}};
  RunnerPool pool(config);
  std::vector<MeasureResult> results =
      pool.Measure({Candidate(kGemm), Candidate(kSegfault), Candidate(kGarbage), Candidate(kGemm)});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].status, MeasureStatus::kOk) << results[0].message;
  EXPECT_EQ(results[1].status, MeasureStatus::kRuntimeError) << results[1].message;
  EXPECT_EQ(results[2].status, MeasureStatus::kWrongResult) << results[2].message;
  EXPECT_EQ(results[3].status, MeasureStatus::kOk) << results[3].message;
}

TEST(Runner, ASandboxedWorkerHasNoNetworkAndNoNewPrivileges) {
  RunnerConfig config = SmallConfig();
  config.sandbox = true;
  RunnerPool pool(config);
  ExpectGoodGemmMeasures(pool);
  int pid = pool.worker_pids().front();
  ASSERT_GT(pid, 0);
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line, no_new_privs;
  while (std::getline(status, line)) {
    if (line.rfind("NoNewPrivs:", 0) == 0) no_new_privs = line;
  }
  EXPECT_EQ(no_new_privs, "NoNewPrivs:\t1");
  std::error_code ec;
  auto ours = std::filesystem::read_symlink("/proc/self/ns/net", ec);
  auto theirs = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/net", ec);
  EXPECT_NE(ours, theirs) << "the sandboxed worker shares our network namespace";
}

TEST(Runner, AStoppedWorkerCannotHoldTheTunerPastTheTimeout) {
  RunnerConfig config = SmallConfig();
  config.timeout_s = 1;
  RunnerPool pool(config);
  ExpectGoodGemmMeasures(pool);
  int pid = pool.worker_pids().front();
  kill(pid, SIGSTOP);
  // A request larger than the socket's buffer: the send itself would block on a stopped reader.
  MeasureCandidate big = Candidate(kGemm);
  big.object = std::string(size_t{16} << 20, 'x');
  MeasureResult r = pool.MeasureOne(big);
  EXPECT_EQ(r.status, MeasureStatus::kTimeout) << r.message;
  ExpectGoodGemmMeasures(pool);
}

}  // namespace
}  // namespace tirtune
