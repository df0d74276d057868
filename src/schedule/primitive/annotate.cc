// annotate / unannotate: attach or remove a key-value annotation on a loop or a block. Values
// are integers (int64), floats (float64) or strings; annotations steer later passes, e.g.
// "pragma_auto_unroll_max_step" for the unroller. A value may also be a sampled integer (an
// ExprRV), recorded as the instruction's second input instead of the "value" attribute.
// offload: the function attribute that hands the whole function to a library.
#include <fmt/format.h>

#include "tirtune/ir/op.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

Expr AnnotationValue(const std::string& key, const nlohmann::json& value) {
  if (value.is_boolean()) return IntImm(DataType::Index(), value.get<bool>() ? 1 : 0);
  if (value.is_number_integer()) return IntImm(DataType::Index(), value.get<int64_t>());
  if (value.is_number_float()) return FloatImm(DataType::Float(64), value.get<double>());
  if (value.is_string()) return StringImm(value.get<std::string>());
  TT_USER_ERROR("annotation '{}' has a {} value; use an integer, a float or a string", key,
                value.type_name());
}

Stmt LoopWithAnnotations(const ForNode* loop, Annotations annotations) {
  return MakeFor(loop->loop_var, loop->min, loop->extent, loop->for_kind, loop->body,
                 loop->thread_tag, std::move(annotations));
}

Stmt BlockWithAnnotations(const BlockRealizeNode* realize, Annotations annotations) {
  const BlockNode* b = realize->block.get();
  Block block = MakeBlock(b->name, b->iter_vars, b->reads, b->writes, b->body, b->init,
                          b->alloc_buffers, std::move(annotations));
  return MakeBlockRealize(realize->iter_values, realize->predicate, block);
}

SimpleScheduleError MissingKey(const std::string& what, const std::string& key,
                               const Object* node) {
  return SimpleScheduleError("AnnotationNotFoundError",
                             fmt::format("{} has no annotation '{}'", what, key), {node});
}

}  // namespace

void Schedule::Annotate(LoopRV loop_rv, const std::string& key, const nlohmann::json& value) {
  const ForNode* loop = Get(loop_rv);
  Annotations annotations = loop->annotations;
  annotations[key] = AnnotationValue(key, value);
  if (check_only_) return;
  state_.Replace(loop, LoopWithAnnotations(loop, std::move(annotations)));
  Record("Annotate", {loop_rv.ref()}, {{"key", key}, {"value", value}}, {});
}

void Schedule::Annotate(BlockRV block_rv, const std::string& key, const nlohmann::json& value) {
  const BlockRealizeNode* realize = Get(block_rv);
  Annotations annotations = realize->block->annotations;
  annotations[key] = AnnotationValue(key, value);
  if (check_only_) return;
  state_.Replace(realize, BlockWithAnnotations(realize, std::move(annotations)));
  Record("Annotate", {block_rv.ref()}, {{"key", key}, {"value", value}}, {});
}

void Schedule::Annotate(LoopRV loop_rv, const std::string& key, ExprRV value) {
  const ForNode* loop = Get(loop_rv);
  Annotations annotations = loop->annotations;
  annotations[key] = IntImm(DataType::Index(), Get(value));
  if (check_only_) return;
  state_.Replace(loop, LoopWithAnnotations(loop, std::move(annotations)));
  Record("Annotate", {loop_rv.ref(), value.ref()}, {{"key", key}}, {});
}

void Schedule::Annotate(BlockRV block_rv, const std::string& key, ExprRV value) {
  const BlockRealizeNode* realize = Get(block_rv);
  Annotations annotations = realize->block->annotations;
  annotations[key] = IntImm(DataType::Index(), Get(value));
  if (check_only_) return;
  state_.Replace(realize, BlockWithAnnotations(realize, std::move(annotations)));
  Record("Annotate", {block_rv.ref(), value.ref()}, {{"key", key}}, {});
}

void Schedule::Unannotate(LoopRV loop_rv, const std::string& key) {
  const ForNode* loop = Get(loop_rv);
  Annotations annotations = loop->annotations;
  if (annotations.erase(key) == 0) {
    throw MissingKey(fmt::format("loop '{}'", loop->loop_var->name), key, loop);
  }
  if (check_only_) return;
  state_.Replace(loop, LoopWithAnnotations(loop, std::move(annotations)));
  Record("Unannotate", {loop_rv.ref()}, {{"key", key}}, {});
}

void Schedule::Unannotate(BlockRV block_rv, const std::string& key) {
  const BlockRealizeNode* realize = Get(block_rv);
  Annotations annotations = realize->block->annotations;
  if (annotations.erase(key) == 0) {
    throw MissingKey(fmt::format("block '{}'", realize->block->name), key, realize);
  }
  if (check_only_) return;
  state_.Replace(realize, BlockWithAnnotations(realize, std::move(annotations)));
  Record("Unannotate", {block_rv.ref()}, {{"key", key}}, {});
}

void Schedule::Offload(const std::string& composite, const std::string& algorithm) {
  if (composite.find('.') == std::string::npos || composite.front() == '.') {
    throw SimpleScheduleError("OffloadError",
                              fmt::format("'{}' names no library composite (BACKEND.KIND)",
                                          composite),
                              {});
  }
  if (!OffloadedComposite(func()).empty()) {
    throw SimpleScheduleError("OffloadError", "the function is offloaded already", {});
  }
  if (check_only_) return;
  PrimFunc offloaded = func().WithAttr(kOffloadAttr, StringImm(composite));
  nlohmann::json attrs = {{"composite", composite}};
  if (!algorithm.empty()) {
    offloaded = offloaded.WithAttr(kOffloadAlgorithmAttr, StringImm(algorithm));
    attrs["algorithm"] = algorithm;
  }
  state_.SetFunc(offloaded);
  Record("Offload", {}, attrs, {});
}

}  // namespace tirtune
