// Block instances in the interpreter: binding iterators, the predicate, per-instance buffer
// allocation, and TVM's rule for when a reduction's init runs.
#include <fmt/format.h>

#include "code.h"
#include "tirtune/interp/interpreter.h"

namespace tirtune::interp {
namespace {

class BlockRealizeCode final : public StmtCode {
 public:
  explicit BlockRealizeCode(BlockRealizeParts parts) : p_(std::move(parts)) {}

  void Exec(Machine& m) const override {
    // Step 1. Bindings and predicate, in the enclosing scope. A false predicate skips the
    // instance before any domain check: a non-divisible split binds values past the domain
    // exactly where its predicate is false.
    const IterCode* iters = p_.iters.data();
    const size_t num_iters = p_.iters.size();
    for (size_t k = 0; k < num_iters; ++k) iters[k].binding->Eval(m);
    if (p_.predicate != nullptr) {
      p_.predicate->Eval(m);
      if (p_.predicate->result[0].i == 0) return;
    }
    // Step 2. Check each value against its domain and bind it. Init runs iff every reduce
    // iterator sits at its domain min.
    bool run_init = p_.init != nullptr;
    for (size_t k = 0; k < num_iters; ++k) {
      const IterCode& it = iters[k];
      int64_t lo = it.dom_lo;
      int64_t extent = it.dom_size;
      if (!it.constant_domain) {
        it.dom_min->Eval(m);
        it.dom_extent->Eval(m);
        lo = it.dom_min->result[0].i;
        extent = it.dom_extent->result[0].i;
      }
      int64_t v = it.binding->result[0].i;
      if (v < lo || v - lo >= extent) {
        throw InterpError(
            fmt::format("block \"{}\": iterator {} is bound to {}, outside its "
                        "domain [{}, {})",
                        *p_.name, it.var->name, v, lo, lo + extent));
      }
      it.slot->i = v;
      if (it.is_reduce && v != lo) run_init = false;
    }
    // Step 3. Fresh zeroed buffers for this instance, then init and body.
    const std::string* outer_block = m.block;
    m.block = p_.name;
    for (BufferSlot* b : p_.alloc_buffers) AllocateBuffer(b, m);
    if (run_init) p_.init->Exec(m);
    p_.body->Exec(m);
    for (BufferSlot* b : p_.alloc_buffers) ReleaseBuffer(b);
    m.block = outer_block;
  }

 private:
  BlockRealizeParts p_;
};

}  // namespace

StmtCodePtr MakeBlockRealizeCode(BlockRealizeParts parts) {
  return std::make_unique<BlockRealizeCode>(std::move(parts));
}

}  // namespace tirtune::interp
