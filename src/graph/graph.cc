// The graph IR's containers: tensor types, attributes and the graph itself.
#include "tirtune/graph/graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tirtune/support/error.h"

namespace tirtune::graph {

bool IsTensorElementType(DataType t) {
  if (!t.is_scalar()) return false;
  if (t.is_bool()) return true;
  if (t.is_integral()) return t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
  if (t.code() == DataType::Code::kBFloat) return t.bits() == 16;
  if (t.code() == DataType::Code::kFloat) return t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
  return false;
}

int64_t TensorType::NumElements() const {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

std::string TensorType::str() const {
  return fmt::format("{}[{}]", dtype.str(), fmt::join(shape, ", "));
}

namespace {

template <typename T>
const T& GetAs(const std::map<std::string, AttrValue>& values, const std::string& name,
               const char* type) {
  auto it = values.find(name);
  if (it == values.end()) TT_USER_ERROR("missing attribute '{}'", name);
  const T* v = std::get_if<T>(&it->second);
  if (!v) {
    TT_USER_ERROR("attribute '{}' is {}, expected {}", name, AttrValueToString(it->second), type);
  }
  return *v;
}

}  // namespace

int64_t Attrs::GetInt(const std::string& name) const {
  return GetAs<int64_t>(values_, name, "an integer");
}

double Attrs::GetFloat(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end()) {
    if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  }
  return GetAs<double>(values_, name, "a float");
}

const std::vector<int64_t>& Attrs::GetInts(const std::string& name) const {
  return GetAs<std::vector<int64_t>>(values_, name, "a list of integers");
}

const std::string& Attrs::GetString(const std::string& name) const {
  return GetAs<std::string>(values_, name, "a string");
}

std::string AttrValueToString(const AttrValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return fmt::format("{}", *i);
  if (const auto* f = std::get_if<double>(&value)) {
    std::string s = fmt::format("{}", *f);
    // Keep floats recognizable: 1.0 prints as "1.0", not "1".
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  }
  if (const auto* l = std::get_if<std::vector<int64_t>>(&value)) {
    return fmt::format("[{}]", fmt::join(*l, ", "));
  }
  return fmt::format("\"{}\"", std::get<std::string>(value));
}

const char* OpPatternName(OpPattern pattern) {
  switch (pattern) {
    case OpPattern::kElemWise:
      return "elemwise";
    case OpPattern::kBroadcast:
      return "broadcast";
    case OpPattern::kInjective:
      return "injective";
    case OpPattern::kCommReduce:
      return "comm_reduce";
    case OpPattern::kOutEWiseFusable:
      return "out_ewise_fusable";
    case OpPattern::kOpaque:
      return "opaque";
  }
  return "?";
}

ValueId Graph::AddValue(Value value) {
  if (value.name.empty()) TT_USER_ERROR("graph: a value needs a name");
  if (names_.count(value.name)) TT_USER_ERROR("graph: the name %{} is used twice", value.name);
  ValueId id = static_cast<ValueId>(values_.size());
  names_[value.name] = id;
  values_.push_back(std::move(value));
  return id;
}

void Graph::RenameValue(ValueId id, std::string name) {
  const std::string& old = value(id).name;
  if (old == name) return;
  if (name.empty()) TT_USER_ERROR("graph: a value needs a name");
  if (names_.count(name)) TT_USER_ERROR("graph: the name %{} is used twice", name);
  names_.erase(old);
  names_[name] = id;
  values_[id].name = std::move(name);
}

ValueId Graph::AddInput(std::string name, TensorType type) {
  Value value;
  value.name = std::move(name);
  value.kind = ValueKind::kInput;
  value.type = std::move(type);
  return AddValue(std::move(value));
}

ValueId Graph::AddConstant(std::string name, NDArray data) {
  TT_ICHECK(data.defined(), "constant {} without data", name);
  TensorType type{data.shape(), data.dtype()};
  return AddValue(Value{.name = std::move(name),
                        .kind = ValueKind::kConstant,
                        .type = std::move(type),
                        .data = std::move(data)});
}

ValueId Graph::AddCall(std::string name, Call call, TensorType type) {
  Value value;
  value.name = std::move(name);
  value.kind = ValueKind::kCall;
  value.type = std::move(type);
  value.producer = static_cast<int>(calls_.size());
  ValueId id = AddValue(std::move(value));
  call.output = id;
  calls_.push_back(std::move(call));
  return id;
}

ValueId Graph::AddOp(std::string name, std::string op, std::vector<ValueId> args, Attrs attrs,
                     TensorType type) {
  Call call;
  call.kind = CallKind::kOp;
  call.op = std::move(op);
  call.args = std::move(args);
  call.attrs = std::move(attrs);
  return AddCall(std::move(name), std::move(call), std::move(type));
}

std::vector<ValueId> Graph::Inputs() const {
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (values_[i].kind == ValueKind::kInput) inputs.push_back(static_cast<ValueId>(i));
  }
  return inputs;
}

const Value& Graph::value(ValueId id) const {
  TT_ICHECK(id >= 0 && id < static_cast<ValueId>(values_.size()), "no value {}", id);
  return values_[id];
}

const Call& Graph::call(int index) const {
  TT_ICHECK(index >= 0 && index < static_cast<int>(calls_.size()), "no call {}", index);
  return calls_[index];
}

Call& Graph::mutable_call(int index) {
  TT_ICHECK(index >= 0 && index < static_cast<int>(calls_.size()), "no call {}", index);
  return calls_[index];
}

ValueId Graph::Find(const std::string& name) const {
  auto it = names_.find(name);
  return it == names_.end() ? -1 : it->second;
}

const Call& Graph::CallOf(const std::string& name) const {
  ValueId id = Find(name);
  if (id < 0 || values_[id].kind != ValueKind::kCall) TT_USER_ERROR("graph: no call %{}", name);
  return calls_[values_[id].producer];
}

std::string Graph::FreshName(const std::string& base) const {
  if (!names_.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string name = fmt::format("{}_{}", base, i);
    if (!names_.count(name)) return name;
  }
}

}  // namespace tirtune::graph
