// Instructions: one recorded schedule step (a primitive call with its inputs, attributes, outputs
// and, for sampling steps, the decision taken), and the registry of instruction kinds that knows
// how to apply each kind to a schedule. Kind names and versions are part of the trace format.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace tirtune {

class Schedule;

/// What a random variable stands for: a block, a loop, or an integer expression.
enum class RVKind : uint8_t { kBlock, kLoop, kExpr };

/// A reference to a random variable of a schedule, by kind and id (ids are unique per schedule).
struct RVRef {
  RVKind kind = RVKind::kBlock;
  int64_t id = -1;
  friend bool operator==(const RVRef& a, const RVRef& b) {
    return a.kind == b.kind && a.id == b.id;
  }
};

struct BlockRV {
  int64_t id = -1;
  RVRef ref() const { return {RVKind::kBlock, id}; }
};
struct LoopRV {
  int64_t id = -1;
  RVRef ref() const { return {RVKind::kLoop, id}; }
  /// The special locations SampleComputeLocation can return: the root scope, and inlining.
  static constexpr LoopRV Root() { return {-1}; }
  static constexpr LoopRV Inline() { return {-2}; }
  bool is_root() const { return id == -1; }
  bool is_inline() const { return id == -2; }
};
struct ExprRV {
  int64_t id = -1;
  RVRef ref() const { return {RVKind::kExpr, id}; }
};

/// An instruction input: a random variable, an integer, or nothing (an optional input left out).
/// Strings and other literal parameters go in the instruction's attrs.
using InstInput = std::variant<std::monostate, RVRef, int64_t>;

struct InstructionKind;

/// One step of a trace.
struct Instruction {
  const InstructionKind* kind = nullptr;
  std::vector<InstInput> inputs;
  nlohmann::json attrs = nlohmann::json::object();
  std::vector<RVRef> outputs;
  /// The sampling decision (null for deterministic instructions).
  nlohmann::json decision;
};

/// How to apply an instruction: reads inputs (already mapped to `sch`'s random variables), attrs
/// and an optional decision, calls the Schedule method (which records the instruction again) and
/// returns the outputs.
using ApplyFn = std::function<std::vector<RVRef>(Schedule& sch, const std::vector<InstInput>& inputs,
                                                 const nlohmann::json& attrs,
                                                 const nlohmann::json& decision)>;
/// Brings the JSON of an instruction saved by an older version up to the current one.
using UpgradeFn = std::function<void(int from_version, nlohmann::json* inst)>;
/// Checks what can be checked of an instruction without a schedule (a decision's form and
/// size), so that a trace read from a file or a database row is refused before any replay;
/// throws TraceFormatError.
using CheckFn = std::function<void(const nlohmann::json& attrs, const nlohmann::json& decision)>;

struct InstructionKind {
  std::string name;
  /// Bumped whenever inputs, attrs or decision change meaning; older JSON goes through `upgrade`.
  int version = 1;
  /// A pure instruction only looks things up or samples: it can be dropped when its outputs are
  /// unused (Trace::Simplified).
  bool is_pure = false;
  ApplyFn apply;
  UpgradeFn upgrade;
  CheckFn check;  // may be empty
};

/// The kind registered under `name`, or null.
const InstructionKind* FindInstructionKind(const std::string& name);
/// Every registered kind, sorted by name.
std::vector<const InstructionKind*> AllInstructionKinds();

}  // namespace tirtune
