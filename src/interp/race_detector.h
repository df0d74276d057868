// Race detection on one shared buffer for the GPU executor: per element, who wrote it and who
// read it in the current phase (the code between two barriers of a block).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "code.h"

namespace tirtune::interp {

/// Which thread is running and in which phase; owned by the executor, read by the detectors.
struct PhaseClock {
  /// Increases with every phase of every block, so that entries of an earlier phase are stale
  /// without being cleared.
  int64_t phase = 0;
  /// The running thread's index in its block (x fastest).
  int32_t thread = 0;
  /// The running block for messages: "block (1, 0, 0) of kernel K".
  std::string block_text;
  /// Threads per block, x, y, z.
  std::array<int64_t, 3> block_dim = {1, 1, 1};
};

/// Throws GpuRaceError at the access that races with another thread's access of the same phase.
class RaceDetector final : public AccessObserver {
 public:
  RaceDetector(std::string buffer_name, int64_t elements, const PhaseClock* clock);
  void OnLoad(int64_t offset, Machine& m) override;
  void OnStore(int64_t offset, Machine& m) override;

 private:
  static constexpr int32_t kManyReaders = -2;
  struct Entry {
    int64_t write_phase = -1;
    int64_t read_phase = -1;
    int32_t writer = -1;
    int32_t reader = -1;  // kManyReaders when several threads read it
  };
  // "THREAD `access` BUFFER[offset], which `other` since the last barrier".
  [[noreturn]] void Race(int64_t offset, const char* access, const std::string& other) const;
  std::string ThreadText(int32_t thread) const;

  std::string buffer_name_;
  std::vector<Entry> entries_;
  const PhaseClock* clock_;
};

}  // namespace tirtune::interp
