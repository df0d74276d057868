// A piece of host memory: where it starts and how many bytes it holds.
#pragma once

#include <cstddef>

namespace tirtune {

struct ByteRange {
  const void* data = nullptr;
  size_t bytes = 0;
};

}  // namespace tirtune
