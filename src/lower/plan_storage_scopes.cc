// PlanStorageScopes: settles where each allocation lives on the CPU, as the contract of lower.h
// promises: `local` only for scratch that fits the stack (a constant size of at most
// options.max_stack_bytes), `global` otherwise. `shared` has no meaning on the CPU and becomes
// `global`; a large `local` buffer becomes `global` too.
//
//   with allocate(S, (4096,), float32,             with allocate(S, (4096,), float32):
//                 scope="shared"):                     ...
//     ...
//   with allocate(T, (1000000,), float32,           with allocate(T, (1000000,), float32):
//                 scope="local"):                      ...
//     ...
#include "replace_buffers.h"
#include "tirtune/ir/functor.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

// The scope `buffer` (flattened) should have.
StorageScope PlannedScope(const Buffer& buffer, const LowerOptions& options) {
  if (buffer->scope != StorageScope::kLocal) return StorageScope::kGlobal;
  int64_t bytes = buffer->dtype.bytes();
  for (const Expr& e : buffer->shape) {
    const int64_t* n = AsConstInt(e);
    if (n == nullptr || *n > options.max_stack_bytes) return StorageScope::kGlobal;
    bytes *= *n;
    if (bytes > options.max_stack_bytes) return StorageScope::kGlobal;
  }
  return StorageScope::kLocal;
}

}  // namespace

PrimFunc PlanStorageScopes(const PrimFunc& func, const LowerOptions& options) {
  lower::BufferMap bmap;
  PreOrderVisit(func->body, [&](const Object* node) {
    if (const auto* alloc = node->as<AllocateNode>()) {
      StorageScope scope = PlannedScope(alloc->buffer, options);
      if (scope != alloc->buffer->scope) bmap[alloc->buffer.get()] = alloc->buffer.WithScope(scope);
    }
    return true;
  });
  return func.WithBody(lower::ReplaceBuffers(func->body, bmap));
}

}  // namespace tirtune
