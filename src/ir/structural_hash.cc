// The stable structural hash: FNV-1a (64 bit) over the canonical text. Hashing text rather than
// node fields keeps the value independent of platform, pointer values and the kind enum's order.
#include <fmt/format.h>

#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune {
namespace {

constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ULL;
constexpr uint64_t kFnvPrime = 1099511628211ULL;

uint64_t Fnv1a64(std::string_view text) {
  uint64_t hash = kFnvOffsetBasis;
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= kFnvPrime;
  }
  return hash;
}

}  // namespace

uint64_t StructuralHash(const PrimFunc& func) {
  PrintOptions options;
  options.canonical_names = true;
  return Fnv1a64(Print(func, options));
}

std::string StructuralHashHex(const PrimFunc& func) {
  return fmt::format("{:016x}", StructuralHash(func));
}

}  // namespace tirtune
