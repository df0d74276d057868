// Race detection on shared memory: a read of an element another thread wrote in the same phase,
// a write of one another thread wrote or read in it.
#include "race_detector.h"

#include <fmt/format.h>

#include "tirtune/interp/gpu_executor.h"

namespace tirtune::interp {

RaceDetector::RaceDetector(std::string buffer_name, int64_t elements, const PhaseClock* clock)
    : buffer_name_(std::move(buffer_name)), entries_(elements), clock_(clock) {}

std::string RaceDetector::ThreadText(int32_t thread) const {
  const auto& d = clock_->block_dim;
  return fmt::format("thread ({}, {}, {})", thread % d[0], thread / d[0] % d[1],
                     thread / (d[0] * d[1]));
}

void RaceDetector::Race(int64_t offset, const char* access, const std::string& other) const {
  throw GpuRaceError(
      fmt::format("race on shared buffer {} in {}: {} {} {}[{}], which {} since the last "
                  "sync_threads() (a missing barrier?)",
                  buffer_name_, clock_->block_text, ThreadText(clock_->thread), access,
                  buffer_name_, offset, other));
}

void RaceDetector::OnLoad(int64_t offset, Machine& /*m*/) {
  Entry& e = entries_[offset];
  const int32_t t = clock_->thread;
  if (e.write_phase == clock_->phase && e.writer != t)
    Race(offset, "reads", ThreadText(e.writer) + " wrote");
  if (e.read_phase != clock_->phase) {
    e.read_phase = clock_->phase;
    e.reader = t;
  } else if (e.reader != t) {
    e.reader = kManyReaders;
  }
}

void RaceDetector::OnStore(int64_t offset, Machine& /*m*/) {
  Entry& e = entries_[offset];
  const int32_t t = clock_->thread;
  if (e.write_phase == clock_->phase && e.writer != t) {
    Race(offset, "writes", ThreadText(e.writer) + " wrote too");
  }
  if (e.read_phase == clock_->phase && e.reader != t) {
    Race(
        offset, "writes",
        (e.reader == kManyReaders ? std::string("other threads") : ThreadText(e.reader)) + " read");
  }
  e.write_phase = clock_->phase;
  e.writer = t;
}

}  // namespace tirtune::interp
