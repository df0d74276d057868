// LowerForFeatures: lowering without unrolled copies, with a small least-recently-used memo of
// lowered functions, keyed by the identity of the scheduled function. The function itself is held,
// so its address cannot be reused by another function while it is a key.
#include <list>
#include <mutex>
#include <unordered_map>

#include "tirtune/lower/lower.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class LoweredMemo {
 public:
  // Four populations of the default size (256): a candidate scored in a round is usually still
  // here when the cost model learns from its measurement (the hit rate is not measured).
  static constexpr size_t kCapacity = 1024;

  std::optional<PrimFunc> Find(const PrimFunc& func) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(func.get());
    if (it == index_.end()) return std::nullopt;
    order_.splice(order_.begin(), order_, it->second);  // now the most recent
    return it->second->lowered;
  }

  void Add(const PrimFunc& func, const PrimFunc& lowered) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (index_.count(func.get()) != 0) return;
    order_.push_front(Entry{func, lowered});
    index_[func.get()] = order_.begin();
    if (order_.size() > kCapacity) {
      index_.erase(order_.back().func.get());
      order_.pop_back();
    }
  }

 private:
  struct Entry {
    PrimFunc func;
    PrimFunc lowered;
  };
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<const Object*, std::list<Entry>::iterator> index_;
};

LoweredMemo& Memo() {
  static LoweredMemo memo;
  return memo;
}

}  // namespace

PrimFunc LowerForFeatures(const PrimFunc& func) {
  if (std::optional<PrimFunc> found = Memo().Find(func)) return *found;
  LowerOptions options;
  options.max_explicit_unroll = 0;
  options.expand_auto_unroll = false;
  options.unswitch_tile_guards = false;  // one guarded body, its guards counted per element
  PrimFunc lowered =
      HasThreadBindings(func) ? LowerGpuToLoops(func, options) : Lower(func, options);
  Memo().Add(func, lowered);
  return lowered;
}

}  // namespace tirtune
