// What a function's constant weights coming from memory cost its candidates, and whether it
// changes which candidate is fastest: each trace's kernel is measured in this process by the
// runner's own code (HandleRunRequest) with the tuner's timer, with its weights warm and with
// them evicted before every call (TimerConfig::cold_constants), in turns, `rounds` times, each
// run verified against the function's reference first.
// Prints each trace's medians and both rankings.
// Usage: bench_cold_weights FUNC.tir ROUNDS TRACE.json... (target: the host's)
#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tirtune/codegen/target.h"
#include "tirtune/ir/parser.h"
#include "tirtune/measure/builder.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/runner_worker.h"
#include "traced_kernel.h"

namespace tirtune {
namespace {

struct Row {
  std::string trace;
  std::vector<double> warm_ms, cold_ms;
};

int Main(int argc, char** argv) {
  if (argc < 4) {
    fmt::print(stderr, "usage: bench_cold_weights FUNC.tir ROUNDS TRACE.json...\n");
    return 2;
  }
  const PrimFunc original = ParsePrimFunc(ReadText(argv[1]), argv[1]);
  const int rounds = std::max(1, std::atoi(argv[2]));
  const Target target = Target::Host();
  // Every kernel is verified against the function's reference before its times count.
  const MeasureTask task = MakeMeasureTask(original, target);
  std::vector<RunRequest> requests;
  std::vector<Row> rows;
  for (int i = 3; i < argc; ++i) {
    BuildResult built = Builder().BuildOne(ScheduledByTraceFile(original, argv[i]).func(), target);
    if (!built.ok()) {
      fmt::print(stderr, "{}: build failed: {}\n", argv[i], built.message);
      return 1;
    }
    const MeasureCandidate c = CandidateFor(task, std::move(built));
    RunRequest r;
    r.object = c.object;
    r.func_name = c.func_name;
    r.target = c.target;
    r.args = c.args;
    r.seed = c.seed;
    r.timer = TuningTimerConfig();
    r.reduction_length = c.reduction_length;
    r.expected = c.expected;
    requests.push_back(std::move(r));
    rows.push_back({argv[i], {}, {}});
  }
  int constants = 0;
  for (const ArgSpec& a : requests.front().args) constants += a.constant ? 1 : 0;
  fmt::print("{}: {} parameters, {} constant; {} traces, {} rounds on {}\n", original->name,
             requests.front().args.size(), constants, rows.size(), rounds, target.str());
  for (int round = 0; round < rounds; ++round) {
    for (size_t t = 0; t < requests.size(); ++t) {
      for (bool cold : {false, true}) {
        RunRequest r = requests[t];
        r.timer.cold_constants = cold;
        RunReply reply = HandleRunRequest(r);
        if (reply.kind != ReplyKind::kOk) {
          fmt::print(stderr, "{}: {}\n", rows[t].trace, reply.message);
          return 1;
        }
        (cold ? rows[t].cold_ms : rows[t].warm_ms).push_back(reply.timing.median * 1e3);
      }
    }
  }
  std::vector<size_t> by_warm(rows.size()), by_cold(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) by_warm[i] = by_cold[i] = i;
  auto warm = [&](size_t i) { return Median(rows[i].warm_ms); };
  auto cold = [&](size_t i) { return Median(rows[i].cold_ms); };
  std::sort(by_warm.begin(), by_warm.end(), [&](size_t a, size_t b) { return warm(a) < warm(b); });
  std::sort(by_cold.begin(), by_cold.end(), [&](size_t a, size_t b) { return cold(a) < cold(b); });
  fmt::print("{:>4} {:>10} {:>10} {:>6}  {}\n", "rank", "warm ms", "cold ms", "cold/w", "trace");
  for (size_t k = 0; k < by_cold.size(); ++k) {
    size_t i = by_cold[k];
    size_t warm_rank = std::find(by_warm.begin(), by_warm.end(), i) - by_warm.begin();
    fmt::print("{:>4} {:>10.4f} {:>10.4f} {:>6.3f}  {} (warm rank {})\n", k + 1, warm(i), cold(i),
               cold(i) / warm(i), rows[i].trace, warm_rank + 1);
  }
  return 0;
}

}  // namespace
}  // namespace tirtune

int main(int argc, char** argv) { return tirtune::Main(argc, argv); }
