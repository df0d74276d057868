// The registry of instruction kinds: one line per kind, naming its version, purity and how to
// apply it. Adding a primitive adds its line here.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>

#include "tirtune/schedule/json_text.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

using json = nlohmann::json;

// A trace's instruction whose inputs or attributes do not fit its kind: TraceFormatError, to
// which Trace::ApplyTo adds the instruction's number and kind.
template <typename... Args>
[[noreturn]] void BadInstruction(fmt::format_string<Args...> format, Args&&... args) {
  throw TraceFormatError(fmt::format(format, std::forward<Args>(args)...));
}

// No loop is longer than this (a tensor of 2^48 elements would need a petabyte).
constexpr int64_t kMaxTiledExtent = int64_t{1} << 48;

// An integer of `json` within [lo, hi]; a float, a string or an out-of-range number is a
// TraceFormatError naming `what` (a float converted to int is undefined behaviour: the trace
// fuzzer found 4.6e20 as a tile count).
int64_t IntegerOf(const json& j, const std::string& what, int64_t lo = INT64_MIN,
                  int64_t hi = INT64_MAX) {
  try {
    return JsonInteger(j, what, lo, hi);
  } catch (const UserError& e) {
    throw TraceFormatError(e.what());
  }
}
int IntAttr(const json& attrs, const std::string& key) {
  if (!attrs.contains(key)) BadInstruction("attribute \"{}\" is missing", key);
  return static_cast<int>(IntegerOf(attrs.at(key), "attribute \"" + key + "\"", INT32_MIN,
                                    INT32_MAX));
}
std::vector<int64_t> IntegerList(const json& j, const std::string& what) {
  if (!j.is_array()) BadInstruction("{} is not a list of integers", what);
  std::vector<int64_t> out;
  for (const json& e : j) out.push_back(IntegerOf(e, what + " element"));
  return out;
}

RVRef InputRV(const std::vector<InstInput>& in, size_t i) {
  if (i >= in.size()) BadInstruction("it has {} input(s), input {} is missing", in.size(), i);
  if (!std::holds_alternative<RVRef>(in[i])) BadInstruction("input {} is not a variable", i);
  return std::get<RVRef>(in[i]);
}
BlockRV InputBlock(const std::vector<InstInput>& in, size_t i) {
  RVRef r = InputRV(in, i);
  if (r.kind != RVKind::kBlock) BadInstruction("input {} is not a block (b...)", i);
  return {r.id};
}
LoopRV InputLoop(const std::vector<InstInput>& in, size_t i) {
  RVRef r = InputRV(in, i);
  if (r.kind != RVKind::kLoop) BadInstruction("input {} is not a loop (l...)", i);
  return {r.id};
}
std::vector<LoopRV> InputLoops(const std::vector<InstInput>& in, size_t from = 0) {
  std::vector<LoopRV> out;
  for (size_t i = from; i < in.size(); ++i) out.push_back(InputLoop(in, i));
  return out;
}

template <typename RV>
std::vector<RVRef> Refs(const std::vector<RV>& rvs) {
  std::vector<RVRef> out;
  for (const RV& rv : rvs) out.push_back(rv.ref());
  return out;
}

std::vector<RVRef> ApplyGetBlock(Schedule& sch, const std::vector<InstInput>&, const json& attrs,
                                 const json&) {
  return {sch.GetBlock(attrs.at("name").get<std::string>()).ref()};
}
std::vector<RVRef> ApplyGetLoops(Schedule& sch, const std::vector<InstInput>& in, const json&,
                                 const json&) {
  return Refs(sch.GetLoops(InputBlock(in, 0)));
}
std::vector<RVRef> ApplyGetChildBlocks(Schedule& sch, const std::vector<InstInput>& in,
                                       const json&, const json&) {
  RVRef r = InputRV(in, 0);
  if (r.kind == RVKind::kLoop) return Refs(sch.GetChildBlocks(LoopRV{r.id}));
  return Refs(sch.GetChildBlocks(BlockRV{r.id}));
}
std::vector<RVRef> ApplySamplePerfectTile(Schedule& sch, const std::vector<InstInput>& in,
                                          const json& attrs, const json& decision) {
  std::optional<std::vector<int64_t>> d;
  if (!decision.is_null()) d = IntegerList(decision, "the decision");
  return Refs(sch.SamplePerfectTile(InputLoop(in, 0), IntAttr(attrs, "n"),
                                    IntAttr(attrs, "max_innermost_factor"), d));
}
std::vector<RVRef> ApplySampleGuardedTile(Schedule& sch, const std::vector<InstInput>& in,
                                          const json& attrs, const json& decision) {
  std::optional<std::vector<int64_t>> d;
  if (!decision.is_null()) d = IntegerList(decision, "the decision");
  return Refs(sch.SampleGuardedTile(InputLoop(in, 0), IntAttr(attrs, "n"),
                                    IntAttr(attrs, "max_innermost_factor"), d));
}
// A perfect (or guarded) tiling's parts: positive, and their product no larger than any loop can be
// (the reported [4611686018427387905, 128] wraps around to 128 in 64 bits).
void CheckSamplePerfectTile(const json& attrs, const json& decision) {
  if (decision.is_null()) return;
  std::vector<int64_t> parts = IntegerList(decision, "the decision");
  if (attrs.contains("n") && attrs["n"].is_number_integer() &&
      attrs["n"].get<int64_t>() != static_cast<int64_t>(parts.size())) {
    BadInstruction("the decision has {} parts where attribute \"n\" asks for {}", parts.size(),
                   attrs["n"].get<int64_t>());
  }
  int64_t product = 1;
  for (int64_t p : parts) {
    if (p < 1) BadInstruction("the decision has a part {} (parts are at least 1)", p);
    if (__builtin_mul_overflow(product, p, &product) || product > kMaxTiledExtent) {
      BadInstruction("the decision's parts multiply to more than any loop's extent (2^48)");
    }
  }
}
void CheckSampleCategorical(const json& attrs, const json& decision) {
  if (decision.is_null() || !attrs.contains("candidates") || !attrs["candidates"].is_array()) {
    return;
  }
  IntegerOf(decision, "the decision", 0, static_cast<int64_t>(attrs["candidates"].size()) - 1);
}
std::vector<RVRef> ApplySampleCategorical(Schedule& sch, const std::vector<InstInput>&,
                                          const json& attrs, const json& decision) {
  std::optional<int64_t> d;
  if (!decision.is_null()) d = IntegerOf(decision, "the decision");
  return {sch.SampleCategorical(IntegerList(attrs.at("candidates"), "attribute \"candidates\""),
                                attrs.at("probs").get<std::vector<double>>(), d)
              .ref()};
}
std::vector<RVRef> ApplySplit(Schedule& sch, const std::vector<InstInput>& in, const json&,
                              const json&) {
  std::vector<SplitFactor> factors;
  for (size_t i = 1; i < in.size(); ++i) {
    if (std::holds_alternative<int64_t>(in[i])) {
      factors.emplace_back(std::get<int64_t>(in[i]));
    } else if (std::holds_alternative<RVRef>(in[i])) {
      RVRef r = std::get<RVRef>(in[i]);
      if (r.kind != RVKind::kExpr) BadInstruction("split factor {} is not an expression (e...)", i);
      factors.emplace_back(ExprRV{r.id});
    } else {
      factors.emplace_back(std::monostate{});
    }
  }
  return Refs(sch.Split(InputLoop(in, 0), factors));
}
std::vector<RVRef> ApplyFuse(Schedule& sch, const std::vector<InstInput>& in, const json&,
                             const json&) {
  if (in.empty()) BadInstruction("it fuses no loops");
  return {sch.Fuse(InputLoops(in)).ref()};
}
std::vector<RVRef> ApplyReorder(Schedule& sch, const std::vector<InstInput>& in, const json&,
                                const json&) {
  sch.Reorder(InputLoops(in));
  return {};
}
std::vector<RVRef> ApplyParallel(Schedule& sch, const std::vector<InstInput>& in, const json&,
                                 const json&) {
  sch.Parallel(InputLoop(in, 0));
  return {};
}
std::vector<RVRef> ApplyVectorize(Schedule& sch, const std::vector<InstInput>& in, const json&,
                                  const json&) {
  sch.Vectorize(InputLoop(in, 0));
  return {};
}
std::vector<RVRef> ApplyUnroll(Schedule& sch, const std::vector<InstInput>& in, const json&,
                               const json&) {
  sch.Unroll(InputLoop(in, 0));
  return {};
}
std::vector<RVRef> ApplyBind(Schedule& sch, const std::vector<InstInput>& in, const json& attrs,
                             const json&) {
  sch.Bind(InputLoop(in, 0), attrs.at("thread_axis").get<std::string>());
  return {};
}
std::vector<RVRef> ApplyAnnotate(Schedule& sch, const std::vector<InstInput>& in,
                                 const json& attrs, const json&) {
  RVRef r = InputRV(in, 0);
  const std::string key = attrs.at("key").get<std::string>();
  if (in.size() > 1) {  // the value is a sampled integer
    RVRef value = InputRV(in, 1);
    if (value.kind != RVKind::kExpr) {
      BadInstruction("the annotation's value (input 1) is not an expression (e...)");
    }
    if (r.kind == RVKind::kLoop) {
      sch.Annotate(LoopRV{r.id}, key, ExprRV{value.id});
    } else {
      sch.Annotate(BlockRV{r.id}, key, ExprRV{value.id});
    }
  } else if (r.kind == RVKind::kLoop) {
    sch.Annotate(LoopRV{r.id}, key, attrs.at("value"));
  } else {
    sch.Annotate(BlockRV{r.id}, key, attrs.at("value"));
  }
  return {};
}
std::vector<RVRef> ApplyUnannotate(Schedule& sch, const std::vector<InstInput>& in,
                                   const json& attrs, const json&) {
  RVRef r = InputRV(in, 0);
  const std::string key = attrs.at("key").get<std::string>();
  if (r.kind == RVKind::kLoop) {
    sch.Unannotate(LoopRV{r.id}, key);
  } else {
    sch.Unannotate(BlockRV{r.id}, key);
  }
  return {};
}
// Version 1 of ComputeAt and ReverseComputeAt had no "index": the block went to the front (back)
// of the loop body. Version 2 places it after its producers and before its consumers; -1 asks for
// that automatic placement, which is where version 1 put it whenever that was correct.
void UpgradeComputeAtV1(int from_version, json* inst) {
  if (from_version == 1) (*inst)["attrs"]["index"] = -1;
}

std::vector<RVRef> ApplyComputeAt(Schedule& sch, const std::vector<InstInput>& in,
                                  const json& attrs, const json&) {
  sch.ComputeAt(InputBlock(in, 0), InputLoop(in, 1), attrs.at("preserve_unit_loops").get<bool>(),
                IntAttr(attrs, "index"));
  return {};
}
std::vector<RVRef> ApplyReverseComputeAt(Schedule& sch, const std::vector<InstInput>& in,
                                         const json& attrs, const json&) {
  sch.ReverseComputeAt(InputBlock(in, 0), InputLoop(in, 1),
                       attrs.at("preserve_unit_loops").get<bool>(), IntAttr(attrs, "index"));
  return {};
}
StorageScope AttrScope(const json& attrs) {
  StorageScope scope = StorageScope::kGlobal;
  if (!StorageScopeFromName(attrs.at("scope").get<std::string>(), &scope)) {
    BadInstruction("unknown storage scope {} (global, shared or local)", attrs.at("scope").dump());
  }
  return scope;
}
std::vector<RVRef> ApplyAddUnitLoop(Schedule& sch, const std::vector<InstInput>& in, const json&,
                                    const json&) {
  RVRef r = InputRV(in, 0);
  if (r.kind == RVKind::kLoop) return {sch.AddUnitLoop(LoopRV{r.id}).ref()};
  return {sch.AddUnitLoop(BlockRV{r.id}).ref()};
}
std::vector<RVRef> ApplySetScope(Schedule& sch, const std::vector<InstInput>& in, const json& attrs,
                                 const json&) {
  sch.SetScope(InputBlock(in, 0), IntAttr(attrs, "write_index"), AttrScope(attrs));
  return {};
}
std::vector<RVRef> ApplyStorageAlign(Schedule& sch, const std::vector<InstInput>& in,
                                     const json& attrs, const json&) {
  sch.StorageAlign(InputBlock(in, 0), IntAttr(attrs, "write_index"),
                   IntAttr(attrs, "axis"), IntAttr(attrs, "factor"),
                   IntAttr(attrs, "offset"));
  return {};
}
std::vector<RVRef> ApplyCacheRead(Schedule& sch, const std::vector<InstInput>& in,
                                  const json& attrs, const json&) {
  return {
      sch.CacheRead(InputBlock(in, 0), IntAttr(attrs, "read_index"), AttrScope(attrs)).ref()};
}
std::vector<RVRef> ApplyPadEinsum(Schedule& sch, const std::vector<InstInput>& in,
                                  const json& attrs, const json&) {
  if (!attrs.contains("padding")) BadInstruction("attribute \"padding\" is missing");
  sch.PadEinsum(InputBlock(in, 0), IntegerList(attrs["padding"], "attribute \"padding\""));
  return {};
}
std::vector<RVRef> ApplyCacheWrite(Schedule& sch, const std::vector<InstInput>& in,
                                   const json& attrs, const json&) {
  return {sch.CacheWrite(InputBlock(in, 0), IntAttr(attrs, "write_index"), AttrScope(attrs))
              .ref()};
}
std::vector<RVRef> ApplyRFactor(Schedule& sch, const std::vector<InstInput>& in, const json& attrs,
                                const json&) {
  return {sch.RFactor(InputLoop(in, 0), IntAttr(attrs, "factor_axis")).ref()};
}
std::vector<RVRef> ApplyGetProducers(Schedule& sch, const std::vector<InstInput>& in, const json&,
                                     const json&) {
  return Refs(sch.GetProducers(InputBlock(in, 0)));
}
std::vector<RVRef> ApplyGetConsumers(Schedule& sch, const std::vector<InstInput>& in, const json&,
                                     const json&) {
  return Refs(sch.GetConsumers(InputBlock(in, 0)));
}
std::vector<RVRef> ApplyComputeInline(Schedule& sch, const std::vector<InstInput>& in, const json&,
                                      const json&) {
  sch.ComputeInline(InputBlock(in, 0));
  return {};
}
std::vector<RVRef> ApplySampleComputeLocation(Schedule& sch, const std::vector<InstInput>& in,
                                              const json&, const json& decision) {
  std::optional<int64_t> d;
  if (!decision.is_null()) d = IntegerOf(decision, "the decision");
  return {sch.SampleComputeLocation(InputBlock(in, 0), d).ref()};
}
std::vector<RVRef> ApplyReverseComputeInline(Schedule& sch, const std::vector<InstInput>& in,
                                             const json&, const json&) {
  sch.ReverseComputeInline(InputBlock(in, 0));
  return {};
}
std::vector<RVRef> ApplyFuseReductionEpilogue(Schedule& sch, const std::vector<InstInput>& in,
                                              const json&, const json&) {
  sch.FuseReductionEpilogue(InputBlock(in, 0), InputBlock(in, 1));
  return {};
}
std::vector<RVRef> ApplyDecomposeReduction(Schedule& sch, const std::vector<InstInput>& in,
                                           const json&, const json&) {
  return {sch.DecomposeReduction(InputBlock(in, 0), InputLoop(in, 1)).ref()};
}
void CheckOffload(const json& attrs, const json&) {
  if (!attrs.contains("composite") || !attrs["composite"].is_string()) {
    BadInstruction("Offload needs the attribute \"composite\" as a string");
  }
  if (attrs.contains("algorithm") && !attrs["algorithm"].is_string()) {
    BadInstruction("Offload's attribute \"algorithm\" must be a string");
  }
}
std::vector<RVRef> ApplyOffload(Schedule& sch, const std::vector<InstInput>&, const json& attrs,
                                const json&) {
  sch.Offload(attrs.at("composite").get<std::string>(),
              attrs.contains("algorithm") ? attrs.at("algorithm").get<std::string>() : "");
  return {};
}

void CheckTransformLayout(const json& attrs, const json&) {
  if (!attrs.contains("layout") || !attrs["layout"].is_object()) {
    BadInstruction("TransformLayout needs the attribute \"layout\" as an object");
  }
  PackedLayout::FromJson(attrs["layout"].dump(), "TransformLayout's attribute \"layout\"");
}
std::vector<RVRef> ApplyTransformLayout(Schedule& sch, const std::vector<InstInput>&,
                                        const json& attrs, const json&) {
  sch.TransformLayout(
      IntAttr(attrs, "param_index"),
      PackedLayout::FromJson(attrs.at("layout").dump(), "TransformLayout's attribute \"layout\""));
  return {};
}

std::vector<RVRef> ApplyEnterPostproc(Schedule& sch, const std::vector<InstInput>&, const json&,
                                      const json&) {
  sch.EnterPostproc();
  return {};
}

const std::map<std::string, InstructionKind>& Registry() {
  static const std::map<std::string, InstructionKind> kinds = [] {
    std::map<std::string, InstructionKind> m;
    auto add = [&m](const char* name, int version, bool pure, ApplyFn apply,
                    UpgradeFn upgrade = nullptr) {
      m[name] = InstructionKind{name, version, pure, std::move(apply), std::move(upgrade), {}};
    };
    // name                   version  pure   apply
    add("AddUnitLoop",        1,       false, ApplyAddUnitLoop);
    add("Annotate",           1,       false, ApplyAnnotate);
    add("Bind",               1,       false, ApplyBind);
    add("CacheRead",          1,       false, ApplyCacheRead);
    add("CacheWrite",         1,       false, ApplyCacheWrite);
    add("ComputeAt",          2,       false, ApplyComputeAt, UpgradeComputeAtV1);
    add("ComputeInline",      1,       false, ApplyComputeInline);
    add("DecomposeReduction", 1,       false, ApplyDecomposeReduction);
    add("EnterPostproc",      1,       false, ApplyEnterPostproc);
    add("Fuse",               1,       false, ApplyFuse);
    add("FuseReductionEpilogue", 1,    false, ApplyFuseReductionEpilogue);
    add("GetBlock",           1,       true,  ApplyGetBlock);
    add("Offload",            1,       false, ApplyOffload);
    add("GetChildBlocks",     1,       true,  ApplyGetChildBlocks);
    add("GetConsumers",       1,       true,  ApplyGetConsumers);
    add("GetLoops",           1,       true,  ApplyGetLoops);
    add("GetProducers",       1,       true,  ApplyGetProducers);
    add("PadEinsum", 1, false, ApplyPadEinsum);
    add("Parallel",           1,       false, ApplyParallel);
    add("RFactor",            1,       false, ApplyRFactor);
    add("Reorder",            1,       false, ApplyReorder);
    add("ReverseComputeAt",   2,       false, ApplyReverseComputeAt, UpgradeComputeAtV1);
    add("ReverseComputeInline", 1,     false, ApplyReverseComputeInline);
    add("SampleCategorical",  1,       true,  ApplySampleCategorical);
    add("SampleComputeLocation", 1,    true,  ApplySampleComputeLocation);
    add("SampleGuardedTile", 1, true, ApplySampleGuardedTile);
    add("SamplePerfectTile",  1,       true,  ApplySamplePerfectTile);
    add("SetScope",           1,       false, ApplySetScope);
    add("Split",              1,       false, ApplySplit);
    add("StorageAlign",       1,       false, ApplyStorageAlign);
    add("TransformLayout", 1, false, ApplyTransformLayout);
    add("Unannotate",         1,       false, ApplyUnannotate);
    add("Unroll",             1,       false, ApplyUnroll);
    add("Vectorize",          1,       false, ApplyVectorize);
    m["SampleCategorical"].check = CheckSampleCategorical;
    m["SamplePerfectTile"].check = CheckSamplePerfectTile;
    m["SampleGuardedTile"].check = CheckSamplePerfectTile;
    m["Offload"].check = CheckOffload;
    m["TransformLayout"].check = CheckTransformLayout;
    return m;
  }();
  return kinds;
}

}  // namespace

const InstructionKind* FindInstructionKind(const std::string& name) {
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<const InstructionKind*> AllInstructionKinds() {
  std::vector<const InstructionKind*> out;
  for (const auto& [name, kind] : Registry()) out.push_back(&kind);
  return out;
}

}  // namespace tirtune
