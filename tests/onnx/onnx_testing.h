// Helpers shared by the ONNX tests: building small models with the ONNX protobuf API, and
// converting TensorProtos (test data) to arrays.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "tirtune/support/ndarray.h"

namespace tirtune::graph::testing {

/// A ModelProto under construction: one graph, opset 13 of ai.onnx unless told otherwise.
class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("tirtune-test");
    onnx::OperatorSetIdProto* op_set = model_.add_opset_import();
    op_set->set_domain("");
    op_set->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  /// A graph input of element type `elem_type`; a negative extent is a symbolic dimension.
  OnnxModelBuilder& Input(const std::string& name, std::vector<int64_t> shape,
                          int elem_type = onnx::TensorProto::FLOAT) {
    SetType(graph()->add_input(), name, shape, elem_type);
    return *this;
  }
  /// A graph output (the checker wants its shape too).
  OnnxModelBuilder& Output(const std::string& name, std::vector<int64_t> shape,
                           int elem_type = onnx::TensorProto::FLOAT) {
    SetType(graph()->add_output(), name, shape, elem_type);
    return *this;
  }
  /// A float initializer of `shape` filled deterministically from `seed` in [lo, hi).
  OnnxModelBuilder& Weight(const std::string& name, std::vector<int64_t> shape, uint64_t seed,
                           double lo = -1.0, double hi = 1.0) {
    NDArray a = NDArray::Empty(shape, DataType::Float(32));
    a.FillRandom(seed, lo, hi);
    onnx::TensorProto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->add_dims(d);
    t->set_raw_data(std::string(static_cast<const char*>(a.raw()), a.nbytes()));
    return *this;
  }
  OnnxModelBuilder& Int64s(const std::string& name, std::vector<int64_t> values) {
    onnx::TensorProto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  /// A node; returns it for attributes.
  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string& name = "") {
    onnx::NodeProto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? outputs.at(0) + "_node" : name);
    for (const std::string& i : inputs) n->add_input(i);
    for (const std::string& o : outputs) n->add_output(o);
    return n;
  }
  static void SetInts(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void SetInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void SetString(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  onnx::ModelProto& model() { return model_; }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  static void SetType(onnx::ValueInfoProto* v, const std::string& name,
                      const std::vector<int64_t>& shape, int elem_type) {
    v->set_name(name);
    auto* tensor = v->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elem_type);
    auto* s = tensor->mutable_shape();
    for (int64_t d : shape) {
      auto* dim = s->add_dim();
      if (d >= 0) {
        dim->set_dim_value(d);
      } else {
        dim->set_dim_param("batch");
      }
    }
  }

  onnx::ModelProto model_;
};

/// The array a TensorProto holds, in its own element type; undefined for types the graph does
/// not hold (strings, complex, float8) or a payload that does not fit the shape.
inline NDArray ArrayFromProto(const onnx::TensorProto& t) {
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  DataType dtype;
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      dtype = DataType::Float(32);
      break;
    case onnx::TensorProto::DOUBLE:
      dtype = DataType::Float(64);
      break;
    case onnx::TensorProto::FLOAT16:
      dtype = DataType::Float(16);
      break;
    case onnx::TensorProto::BFLOAT16:
      dtype = DataType::BFloat16();
      break;
    case onnx::TensorProto::INT8:
      dtype = DataType::Int(8);
      break;
    case onnx::TensorProto::INT16:
      dtype = DataType::Int(16);
      break;
    case onnx::TensorProto::INT32:
      dtype = DataType::Int(32);
      break;
    case onnx::TensorProto::INT64:
      dtype = DataType::Int(64);
      break;
    case onnx::TensorProto::UINT8:
      dtype = DataType::UInt(8);
      break;
    case onnx::TensorProto::UINT16:
      dtype = DataType::UInt(16);
      break;
    case onnx::TensorProto::UINT32:
      dtype = DataType::UInt(32);
      break;
    case onnx::TensorProto::UINT64:
      dtype = DataType::UInt(64);
      break;
    case onnx::TensorProto::BOOL:
      dtype = DataType::Bool();
      break;
    default:
      return NDArray();
  }
  NDArray a = NDArray::Empty(shape, dtype);
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != n * dtype.bytes()) return NDArray();
    std::memcpy(a.raw(), t.raw_data().data(), t.raw_data().size());
    return a;
  }
  auto fill = [&](const auto& field, auto set) {
    if (field.size() != n) return false;
    for (int64_t i = 0; i < n; ++i) set(i, field.Get(static_cast<int>(i)));
    return true;
  };
  auto as_double = [&](int64_t i, double v) { a.SetDouble(i, v); };
  bool ok = false;
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      ok = fill(t.float_data(), as_double);
      break;
    case onnx::TensorProto::DOUBLE:
      ok = fill(t.double_data(), as_double);
      break;
    case onnx::TensorProto::INT64:
      ok = fill(t.int64_data(), [&](int64_t i, int64_t v) { a.data<int64_t>()[i] = v; });
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      ok = fill(t.uint64_data(), [&](int64_t i, uint64_t v) {
        if (dtype.bits() == 64)
          a.data<uint64_t>()[i] = v;
        else
          a.data<uint32_t>()[i] = static_cast<uint32_t>(v);
      });
      break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:  // the 16 bits of each value
      ok = fill(t.int32_data(),
                [&](int64_t i, int32_t v) { a.data<uint16_t>()[i] = static_cast<uint16_t>(v); });
      break;
    default:  // the narrow integers and bool
      ok = fill(t.int32_data(), as_double);
      break;
  }
  return ok ? a : NDArray();
}

}  // namespace tirtune::graph::testing
