// PrimFunc construction.
#include "tirtune/ir/function.h"

#include <set>

#include "tirtune/support/error.h"

namespace tirtune {

PrimFunc::PrimFunc(std::string name, std::vector<Buffer> params, Stmt body,
                   std::map<std::string, Expr> attrs) {
  std::set<const Object*> seen;
  for (const Buffer& b : params) {
    TT_ICHECK(b.defined(), "function {} has an undefined parameter", name);
    TT_ICHECK(seen.insert(b.get()).second, "function {} lists buffer {} twice", name, b->name);
  }
  TT_ICHECK(body.defined(), "function {} without a body", name);
  auto n = MakeObject<PrimFuncNode>();
  n->name = std::move(name);
  n->params = std::move(params);
  n->body = std::move(body);
  n->attrs = std::move(attrs);
  data_ = ObjectPtr<const Object>(n);
}

PrimFunc PrimFunc::WithBody(Stmt body) const {
  if (body.same_as(get()->body)) return *this;
  return PrimFunc(get()->name, get()->params, std::move(body), get()->attrs);
}

PrimFunc PrimFunc::WithName(std::string name) const {
  return PrimFunc(std::move(name), get()->params, get()->body, get()->attrs);
}

PrimFunc PrimFunc::WithAttr(const std::string& key, Expr value) const {
  std::map<std::string, Expr> attrs = get()->attrs;
  attrs[key] = std::move(value);
  return PrimFunc(get()->name, get()->params, get()->body, std::move(attrs));
}

namespace {
std::string StringAttr(const PrimFunc& func, const char* key) {
  auto it = func->attrs.find(key);
  if (it == func->attrs.end()) return "";
  const auto* s = it->second.as<StringImmNode>();
  return s != nullptr ? s->value : "";
}
}  // namespace

std::string OffloadedComposite(const PrimFunc& func) { return StringAttr(func, kOffloadAttr); }

std::string OffloadedAlgorithm(const PrimFunc& func) {
  return StringAttr(func, kOffloadAlgorithmAttr);
}

}  // namespace tirtune
