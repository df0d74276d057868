// oneDNN memory for the baselines: tirtune arrays seen as oneDNN memory, and the untimed reorders
// into the formats a primitive prefers and back into the workload's own layout.
#pragma once

#include <cstdint>
#include <dnnl.hpp>
#include <vector>

#include "tirtune/support/ndarray.h"

namespace tirtune::bench {

/// The CPU engine and the stream every baseline runs on (made once).
dnnl::engine& Engine();
dnnl::stream& Stream();

/// A float32 array of `shape` with values uniform in [-1, 1), seeded.
NDArray RandomArray(std::vector<int64_t> shape, uint64_t seed);

/// `array`'s storage described by `md` (no copy; the array must outlive the memory).
dnnl::memory Wrap(NDArray& array, const dnnl::memory::desc& md);

/// `user` if it already has format `md`; otherwise a copy reordered into `md` (done now, so
/// never timed).
dnnl::memory InFormat(dnnl::memory user, const dnnl::memory::desc& md);

/// Memory of format `md` for a primitive to write: `user` itself when the formats agree.
dnnl::memory OutputIn(const dnnl::memory& user, const dnnl::memory::desc& md);

/// Copies `result` into `user` unless they are the same memory (a reorder out of a blocked
/// format), and waits.
void ReadBack(dnnl::memory result, dnnl::memory user);

/// Logical dims in row-major order with the strides of a layout: `dims` lists the extents in
/// oneDNN's logical order and `strides` gives each one's stride in elements.
dnnl::memory::desc Strided(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides);

}  // namespace tirtune::bench
