// Finding the loads of a buffer, and comparing index tuples.
#include "buffer_loads.h"

#include "tirtune/ir/functor.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune {
namespace {

bool IsLoadOf(const Object* node, const Buffer& buffer) {
  return node->kind() == NodeKind::kBufferLoad &&
         static_cast<const BufferLoadNode*>(node)->buffer.same_as(buffer);
}

}  // namespace

std::vector<const BufferLoadNode*> LoadsOf(const Expr& expr, const Buffer& buffer) {
  std::vector<const BufferLoadNode*> loads;
  PostOrderVisit(expr, [&](const Object* node) {
    if (IsLoadOf(node, buffer)) loads.push_back(static_cast<const BufferLoadNode*>(node));
  });
  return loads;
}

bool LoadsBuffer(const Expr& expr, const Buffer& buffer) {
  bool found = false;
  PostOrderVisit(expr, [&](const Object* node) { found |= IsLoadOf(node, buffer); });
  return found;
}

bool LoadsBuffer(const Stmt& stmt, const Buffer& buffer) {
  bool found = false;
  PostOrderVisit(stmt, [&](const Object* node) { found |= IsLoadOf(node, buffer); });
  return found;
}

bool SameIndices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d) {
    if (!StructuralEqual(a[d], b[d])) return false;
  }
  return true;
}

}  // namespace tirtune
