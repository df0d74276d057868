// Trace: the instructions a schedule executed, in order. It serializes to versioned JSON, replays
// onto a fresh schedule of the same function (optionally with changed sampling decisions, which
// is how the search mutates candidates), and prints as readable text.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tirtune/schedule/instruction.h"
#include "tirtune/support/error.h"

namespace tirtune {

/// A trace JSON document that cannot be read: the message names the instruction and field.
class TraceFormatError : public UserError {
 public:
  explicit TraceFormatError(const std::string& what) : UserError(what) {}
};

class Schedule;

/// Rewrites an instruction's decision just before it is replayed (Trace::ApplyTo), seeing the
/// schedule as it is then and the instruction's resolved inputs: e.g. a tiling recorded on
/// another shape fitted to this one's loop (search/tune/transfer.cc). Returns the decision to use.
using DecisionAdapter =
    std::function<nlohmann::json(Schedule& sch, const Instruction& inst,
                                 const std::vector<InstInput>& inputs, const nlohmann::json& decision)>;

class Trace {
 public:
  /// Version of the JSON document layout (instruction kinds carry their own versions).
  static constexpr int kFormatVersion = 1;

  const std::vector<Instruction>& insts() const { return insts_; }
  void Append(Instruction inst) { insts_.push_back(std::move(inst)); }
  bool empty() const { return insts_.empty(); }

  /// {"format": "tirtune-trace", "version": 1, "insts": [{"kind", "v", "inputs", "attrs",
  /// "outputs", "decision"?}, ...]}; random variables are named b<i>/l<i>/e<i> in order of
  /// definition.
  nlohmann::json ToJson() const;
  /// Reads a document written by ToJson of this or an older version; TraceFormatError otherwise.
  static Trace FromJson(const nlohmann::json& json);

  /// Replays every instruction on `sch`. `decisions` replaces the decisions of the instructions
  /// at the given indices. With `remove_postproc`, stops at EnterPostproc. `adapt`, when given,
  /// sees every decision (after `decisions`) and returns the one replayed.
  void ApplyTo(Schedule& sch, const std::map<size_t, nlohmann::json>& decisions = {},
               bool remove_postproc = false, const DecisionAdapter& adapt = {}) const;

  /// A copy with the decision of instruction `index` replaced.
  Trace WithDecision(size_t index, nlohmann::json decision) const;
  /// A copy without pure instructions whose outputs are never used (and, with
  /// `remove_postproc`, without anything from EnterPostproc on).
  Trace Simplified(bool remove_postproc) const;
  /// One line per instruction, e.g. `l1, l2 = Split(l0, factors=[e3, e4])  # decision [4, 8]`.
  std::string ToText() const;

 private:
  std::vector<Instruction> insts_;
};

}  // namespace tirtune
