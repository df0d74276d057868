// ReplaceBuffers: a StmtMutator whose only rule is the buffer map.
#include "replace_buffers.h"

#include "tirtune/ir/functor.h"

namespace tirtune::lower {
namespace {

class BufferReplacer : public StmtMutator {
 public:
  explicit BufferReplacer(const BufferMap& bmap) : bmap_(bmap) {}
  Buffer VisitBuffer(const Buffer& buffer) override {
    auto it = bmap_.find(buffer.get());
    return it == bmap_.end() ? buffer : it->second;
  }

 private:
  const BufferMap& bmap_;
};

}  // namespace

Stmt ReplaceBuffers(const Stmt& stmt, const BufferMap& bmap) {
  if (bmap.empty()) return stmt;
  return BufferReplacer(bmap).VisitStmt(stmt);
}

}  // namespace tirtune::lower
