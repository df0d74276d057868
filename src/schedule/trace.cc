// Trace: JSON reading and writing (with version upgrades), replay, simplification and text.
#include "tirtune/schedule/trace.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "tirtune/schedule/json_text.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

using json = nlohmann::json;
using RVKey = std::pair<RVKind, int64_t>;

RVKey Key(const RVRef& r) { return {r.kind, r.id}; }

char Prefix(RVKind k) {
  switch (k) {
    case RVKind::kBlock:
      return 'b';
    case RVKind::kLoop:
      return 'l';
    case RVKind::kExpr:
      return 'e';
  }
  return '?';
}

// Names random variables b<i>/l<i>/e<i> by a running count, in order of definition.
class RVNamer {
 public:
  std::string Define(const RVRef& r) {
    std::string name = fmt::format("{}{}", Prefix(r.kind), count_++);
    names_[Key(r)] = name;
    return name;
  }
  std::string Use(const RVRef& r) const {
    if (r.kind == RVKind::kLoop && r.id == LoopRV::Root().id) return "root";
    if (r.kind == RVKind::kLoop && r.id == LoopRV::Inline().id) return "inline";
    auto it = names_.find(Key(r));
    TT_ICHECK(it != names_.end(), "random variable used before definition");
    return it->second;
  }

 private:
  int64_t count_ = 0;
  std::map<RVKey, std::string> names_;
};

[[noreturn]] void FormatError(size_t index, const std::string& kind, const std::string& what) {
  throw TraceFormatError(fmt::format("trace instruction {}{}: {}", index,
                                     kind.empty() ? "" : " (" + kind + ")", what));
}

}  // namespace

json Trace::ToJson() const {
  RVNamer namer;
  json insts = json::array();
  for (const Instruction& inst : insts_) {
    json inputs = json::array();
    for (const InstInput& in : inst.inputs) {
      if (std::holds_alternative<RVRef>(in)) {
        inputs.push_back(namer.Use(std::get<RVRef>(in)));
      } else if (std::holds_alternative<int64_t>(in)) {
        inputs.push_back(std::get<int64_t>(in));
      } else {
        inputs.push_back(nullptr);
      }
    }
    json outputs = json::array();
    for (const RVRef& out : inst.outputs) outputs.push_back(namer.Define(out));
    json j = {{"kind", inst.kind->name},
              {"v", inst.kind->version},
              {"inputs", inputs},
              {"attrs", inst.attrs},
              {"outputs", outputs}};
    if (!inst.decision.is_null()) j["decision"] = inst.decision;
    insts.push_back(std::move(j));
  }
  return {{"format", "tirtune-trace"}, {"version", kFormatVersion}, {"insts", insts}};
}

namespace {

// Trace::FromJson's reading, each field's type checked before it is read.
Trace FromJsonChecked(const json& doc) {
  if (!doc.is_object() || !doc.contains("format") || !doc["format"].is_string() ||
      doc["format"].get<std::string>() != "tirtune-trace") {
    throw TraceFormatError("not a trace: expected an object with \"format\": \"tirtune-trace\"");
  }
  if (!doc.contains("version") || !doc["version"].is_number_integer()) {
    throw TraceFormatError("trace has no integer \"version\"");
  }
  int version = doc["version"].get<int>();
  if (version > Trace::kFormatVersion || version < 1) {
    throw TraceFormatError(fmt::format(
        "trace format version {} is not supported (this tirtune reads versions 1 to {})", version,
        Trace::kFormatVersion));
  }
  if (!doc.contains("insts") || !doc["insts"].is_array()) {
    throw TraceFormatError("trace has no \"insts\" array");
  }
  Trace trace;
  std::map<std::string, RVRef> names;
  int64_t next_id = 0;
  const json& insts = doc["insts"];
  for (size_t i = 0; i < insts.size(); ++i) {
    json inst_json = insts[i];
    if (!inst_json.is_object() || !inst_json.contains("kind") || !inst_json["kind"].is_string()) {
      FormatError(i, "", "expected an object with a string \"kind\"");
    }
    std::string kind_name = inst_json["kind"].get<std::string>();
    const InstructionKind* kind = FindInstructionKind(kind_name);
    if (kind == nullptr) FormatError(i, kind_name, "unknown instruction kind");
    int v = inst_json.contains("v") && inst_json["v"].is_number_integer()
                ? inst_json["v"].get<int>()
                : -1;
    if (v < 1 || v > kind->version) {
      FormatError(i, kind_name,
                  fmt::format("version {} is not supported (this tirtune knows versions 1 to {})",
                              v, kind->version));
    }
    if (v < kind->version) {
      if (!kind->upgrade) FormatError(i, kind_name, fmt::format("no upgrade from version {}", v));
      kind->upgrade(v, &inst_json);
    }
    Instruction inst;
    inst.kind = kind;
    const json& inputs = inst_json.value("inputs", json::array());
    if (!inputs.is_array()) FormatError(i, kind_name, "\"inputs\" is not an array");
    for (size_t k = 0; k < inputs.size(); ++k) {
      const json& in = inputs[k];
      if (in.is_null()) {
        inst.inputs.emplace_back(std::monostate{});
      } else if (in.is_number_integer()) {
        inst.inputs.emplace_back(in.get<int64_t>());
      } else if (in == "root") {
        inst.inputs.emplace_back(LoopRV::Root().ref());
      } else if (in == "inline") {
        inst.inputs.emplace_back(LoopRV::Inline().ref());
      } else if (in.is_string()) {
        auto it = names.find(in.get<std::string>());
        if (it == names.end()) {
          FormatError(i, kind_name,
                      fmt::format("input {} refers to '{}', which no earlier instruction defines",
                                  k, in.get<std::string>()));
        }
        inst.inputs.emplace_back(it->second);
      } else {
        FormatError(
            i, kind_name,
            fmt::format("input {} is a {}; inputs are names, integers or null", k, in.type_name()));
      }
    }
    inst.attrs = inst_json.value("attrs", json::object());
    if (!inst.attrs.is_object()) FormatError(i, kind_name, "\"attrs\" is not an object");
    const json& outputs = inst_json.value("outputs", json::array());
    if (!outputs.is_array()) FormatError(i, kind_name, "\"outputs\" is not an array");
    for (const json& out : outputs) {
      std::string name = out.is_string() ? out.get<std::string>() : "";
      RVKind rv_kind;
      if (name.size() >= 2 && name[0] == 'b') {
        rv_kind = RVKind::kBlock;
      } else if (name.size() >= 2 && name[0] == 'l') {
        rv_kind = RVKind::kLoop;
      } else if (name.size() >= 2 && name[0] == 'e') {
        rv_kind = RVKind::kExpr;
      } else {
        FormatError(i, kind_name,
                    fmt::format("output {} is not a name like b0, l1 or e2", out.dump()));
      }
      if (names.count(name)) FormatError(i, kind_name, fmt::format("'{}' defined twice", name));
      RVRef ref{rv_kind, next_id++};
      names[name] = ref;
      inst.outputs.push_back(ref);
    }
    if (inst_json.contains("decision")) inst.decision = inst_json["decision"];
    if (inst.kind->check) {
      try {
        inst.kind->check(inst.attrs, inst.decision);
      } catch (const TraceFormatError& e) {
        FormatError(i, kind_name, e.what());
      }
    }
    trace.Append(std::move(inst));
  }
  return trace;
}

}  // namespace

Trace Trace::FromJson(const json& doc) {
  // Every field's type is checked before it is read; a JSON error that still escapes is a
  // malformed trace all the same, never a raw library message.
  try {
    return FromJsonChecked(doc);
  } catch (const json::exception& e) {
    throw TraceFormatError(fmt::format("malformed trace: {}", JsonErrorText(e)));
  }
}

void Trace::ApplyTo(Schedule& sch, const std::map<size_t, json>& decisions,
                    bool remove_postproc, const DecisionAdapter& adapt) const {
  std::map<RVKey, RVRef> rv_map;
  for (size_t i = 0; i < insts_.size(); ++i) {
    const Instruction& inst = insts_[i];
    if (remove_postproc && inst.kind->name == "EnterPostproc") break;
    std::vector<InstInput> inputs;
    for (const InstInput& in : inst.inputs) {
      if (std::holds_alternative<RVRef>(in) && std::get<RVRef>(in).id < 0) {
        inputs.push_back(in);  // the special locations root and inline
      } else if (std::holds_alternative<RVRef>(in)) {
        auto it = rv_map.find(Key(std::get<RVRef>(in)));
        if (it == rv_map.end()) {
          throw TraceFormatError(fmt::format(
              "trace instruction {} ({}): uses a variable no earlier instruction defined", i,
              inst.kind->name));
        }
        inputs.emplace_back(it->second);
      } else {
        inputs.push_back(in);
      }
    }
    auto override_it = decisions.find(i);
    const json& given = override_it != decisions.end() ? override_it->second : inst.decision;
    json adapted;
    if (adapt && !given.is_null()) adapted = adapt(sch, inst, inputs, given);
    const json& decision = adapt && !given.is_null() ? adapted : given;
    std::vector<RVRef> outputs;
    try {
      outputs = inst.kind->apply(sch, inputs, inst.attrs, decision);
    } catch (const json::exception& e) {
      throw TraceFormatError(
          fmt::format("trace instruction {} ({}): malformed attrs or "
                      "decision: {}",
                      i, inst.kind->name, JsonErrorText(e)));
    } catch (const TraceFormatError& e) {
      throw TraceFormatError(fmt::format("trace instruction {} ({}): {}", i, inst.kind->name,
                                         e.what()));
    }
    if (outputs.size() != inst.outputs.size()) {
      throw SimpleScheduleError(
          "TraceReplayError",
          fmt::format("replaying instruction {} ({}) gave {} outputs where the trace has {}", i,
                      inst.kind->name, outputs.size(), inst.outputs.size()));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].kind != inst.outputs[k].kind) {
        static const char* const kKinds[] = {"a block (b...)", "a loop (l...)",
                                             "an expression (e...)"};
        throw TraceFormatError(fmt::format(
            "trace instruction {} ({}): output {} is {}, the trace names it as {}", i,
            inst.kind->name, k, kKinds[static_cast<int>(outputs[k].kind)],
            kKinds[static_cast<int>(inst.outputs[k].kind)]));
      }
      rv_map[Key(inst.outputs[k])] = outputs[k];
    }
  }
}

Trace Trace::WithDecision(size_t index, json decision) const {
  TT_ICHECK(index < insts_.size(), "no instruction {}", index);
  Trace t = *this;
  t.insts_[index].decision = std::move(decision);
  return t;
}

Trace Trace::Simplified(bool remove_postproc) const {
  size_t end = insts_.size();
  if (remove_postproc) {
    for (size_t i = 0; i < insts_.size(); ++i) {
      if (insts_[i].kind->name == "EnterPostproc") {
        end = i;
        break;
      }
    }
  }
  std::set<RVKey> used;
  std::vector<bool> keep(end, false);
  for (size_t i = end; i-- > 0;) {
    const Instruction& inst = insts_[i];
    bool needed = !inst.kind->is_pure;
    for (const RVRef& out : inst.outputs) needed |= used.count(Key(out)) > 0;
    if (!needed) continue;
    keep[i] = true;
    for (const InstInput& in : inst.inputs) {
      if (std::holds_alternative<RVRef>(in)) used.insert(Key(std::get<RVRef>(in)));
    }
  }
  Trace t;
  for (size_t i = 0; i < end; ++i) {
    if (keep[i]) t.Append(insts_[i]);
  }
  return t;
}

std::string Trace::ToText() const {
  RVNamer namer;
  std::string out;
  for (const Instruction& inst : insts_) {
    std::vector<std::string> args;
    for (const InstInput& in : inst.inputs) {
      if (std::holds_alternative<RVRef>(in)) {
        args.push_back(namer.Use(std::get<RVRef>(in)));
      } else if (std::holds_alternative<int64_t>(in)) {
        args.push_back(std::to_string(std::get<int64_t>(in)));
      } else {
        args.push_back("None");
      }
    }
    for (const auto& [key, value] : inst.attrs.items()) args.push_back(key + "=" + value.dump());
    std::vector<std::string> outs;
    for (const RVRef& r : inst.outputs) outs.push_back(namer.Define(r));
    std::string line = fmt::format("{}({})", inst.kind->name, fmt::join(args, ", "));
    if (!outs.empty()) line = fmt::format("{} = {}", fmt::join(outs, ", "), line);
    if (!inst.decision.is_null()) line += "  # decision: " + inst.decision.dump();
    out += line + "\n";
  }
  return out;
}

}  // namespace tirtune
