// PrimFunc: a loop-level function over buffers, the unit that is scheduled, compiled and tuned.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tirtune/ir/buffer.h"
#include "tirtune/ir/stmt.h"

namespace tirtune {

/// A function whose parameters are buffers. In block form its body is a BlockRealize of a root
/// block (named "root") that allocates the intermediate buffers.
class PrimFuncNode : public Object {
 public:
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
  std::map<std::string, Expr> attrs;
  PrimFuncNode() : Object(kKind) {}
  static constexpr NodeKind kKind = NodeKind::kPrimFunc;
  static bool IsKind(NodeKind k) { return k == kKind; }
};

/// Handle to a PrimFunc.
class PrimFunc : public ObjectRef {
 public:
  PrimFunc() = default;
  explicit PrimFunc(ObjectPtr<const PrimFuncNode> p) : ObjectRef(std::move(p)) {}
  PrimFunc(std::string name, std::vector<Buffer> params, Stmt body,
           std::map<std::string, Expr> attrs = {});
  const PrimFuncNode* get() const { return static_cast<const PrimFuncNode*>(ObjectRef::get()); }
  const PrimFuncNode* operator->() const { return get(); }
  PrimFunc WithBody(Stmt body) const;
  PrimFunc WithName(std::string name) const;
  PrimFunc WithAttr(const std::string& key, Expr value) const;
};

/// The function attribute Schedule::Offload sets: the composite (a FusionPattern's name,
/// "dnnl.conv2d") whose library kernel runs in the function's place.
inline constexpr const char* kOffloadAttr = "tirtune.offload";
/// That attribute's value, or "" for a function that is compiled.
std::string OffloadedComposite(const PrimFunc& func);
/// The function attribute naming the library's algorithm for the composite
/// (LibraryBackend::Algorithms, "winograd4"); absent for the library's default.
inline constexpr const char* kOffloadAlgorithmAttr = "tirtune.offload_algorithm";
/// That attribute's value, or "" (the default algorithm, or a function that is compiled).
std::string OffloadedAlgorithm(const PrimFunc& func);

}  // namespace tirtune
