// The messages between the tuner and a `tirtune-runner` worker: one request per candidate (the
// compiled object, its argument specs, a seed, the timing configuration and the expected
// outputs) and one reply (a status kind, the error, the timing samples). Each message travels as
// an 8-byte little-endian length followed by that many bytes of payload.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/measure/timer.h"
#include "tirtune/support/ndarray.h"

namespace tirtune {

/// One kernel parameter as the runner allocates it.
struct ArgSpec {
  std::string name;
  std::vector<int64_t> shape;
  DataType dtype;
  /// Empty: random contents (FillRandom). Otherwise the parameter's contents, row-major: a small
  /// constant of the model whose value a library's kernel depends on (a GELU written out divides
  /// by sqrt(2)), so the reference and every candidate run with it.
  std::vector<double> values;
  /// Empty: the kernel takes the parameter as drawn. Otherwise a packed layout
  /// (ir/packed_layout.h, PackedLayout::ToJson) the scheduled kernel reads it in: the runner draws
  /// the tensor of `shape` as always and passes it packed, so every candidate sees the same
  /// numbers.
  std::string layout = {};
  /// A constant of the model (a weight: one of the function's layout-free parameters). With
  /// TimerConfig::cold_constants it is evicted from the caches before every timed call.
  bool constant = false;
};

/// Sets each array whose spec states values to those values. UserError when a count does not
/// match the array's size.
void FillStatedValues(const std::vector<ArgSpec>& specs, std::vector<NDArray>& args);

struct RunRequest {
  /// A relocatable object made by EmitObject; for a `cuda` target, a serialized GpuProgram.
  std::string object;
  std::string func_name;
  /// Target::str() of the target the object was compiled for.
  std::string target;
  /// One per kernel parameter, in order; parameter i is filled by FillRandom(seed + i) over
  /// RandomRangeFor(its dtype), as InterpretWithRandomInputs does.
  std::vector<ArgSpec> args;
  uint64_t seed = 0;
  TimerConfig timer;
  /// 0, or a time past which the candidate is not worth timing: when its verification run takes
  /// longer, that run is its only sample (number 1) and the warm-up and repeats are skipped.
  double slow_cutoff_seconds = 0;
  /// The most terms one output element sums (LongestReduction), widening float32 tolerances.
  double reduction_length = 1;
  /// Empty, or one entry per parameter: the parameter's expected contents after one run, or an
  /// undefined NDArray for a parameter not to compare. Empty means run without verifying.
  std::vector<NDArray> expected;
  /// Run once and send every parameter back, without verifying or timing: how a reference is
  /// computed out of the tuner's process.
  bool return_outputs = false;
  /// A library candidate (a function Schedule::Offload hands to a library): the composite's
  /// description (offload/library.h CompositeToJson); `object` is then empty and the library's
  /// kernel runs on the parameters (the composite's arguments, then its result), its constants
  /// taken from the seeded parameters. Empty for a compiled candidate.
  std::string library;
};

/// What a worker can say about a candidate. Timeouts and lost workers are seen by the parent only.
enum class ReplyKind : uint8_t {
  kOk = 0,
  kRuntimeError = 1,  // an exception, a load failure or a non-zero kernel status
  kWrongResult = 2,
};

struct RunReply {
  ReplyKind kind = ReplyKind::kOk;
  std::string message;
  double max_abs_error = 0;
  double max_rel_error = 0;
  TimingResult timing;
  /// Every parameter after the run, for RunRequest::return_outputs; empty otherwise.
  std::vector<NDArray> outputs;
  /// The worker cannot measure further (a GPU kernel's fault poisoned its CUDA context) and
  /// exits after this reply; the pool starts a fresh one for the next candidate.
  bool restart = false;
};

std::string SerializeRequest(const RunRequest& request);
/// Throws UserError for a malformed payload.
RunRequest DeserializeRequest(const std::string& payload);
std::string SerializeReply(const RunReply& reply);
/// Throws UserError for a malformed payload.
RunReply DeserializeReply(const std::string& payload);

/// Writes the length prefix and `payload` to `fd` (a pipe or a stream socket), retrying short
/// writes; false when the peer is gone. Never raises SIGPIPE on a socket.
bool WriteFrame(int fd, const std::string& payload);
/// Reads one frame from `fd`; nullopt at end of file or on an error.
std::optional<std::string> ReadFrame(int fd);

}  // namespace tirtune
