// TensorProto → NDArray: ONNX's payload is either little-endian raw_data or one of the typed
// repeated fields, depending on the element type.
#include <cstring>

#include "import_context.h"

namespace tirtune::graph::onnx_import {

std::string ElemTypeName(int elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  }
  return fmt::format("element type {}", elem_type);
}

bool GraphDataType(int elem_type, DataType* dtype) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
      *dtype = DataType::Float(32);
      return true;
    case onnx::TensorProto::DOUBLE:
      *dtype = DataType::Float(64);
      return true;
    case onnx::TensorProto::FLOAT16:
      *dtype = DataType::Float(16);
      return true;
    case onnx::TensorProto::BFLOAT16:
      *dtype = DataType::BFloat16();
      return true;
    case onnx::TensorProto::INT8:
      *dtype = DataType::Int(8);
      return true;
    case onnx::TensorProto::INT16:
      *dtype = DataType::Int(16);
      return true;
    case onnx::TensorProto::INT32:
      *dtype = DataType::Int(32);
      return true;
    case onnx::TensorProto::INT64:
      *dtype = DataType::Int(64);
      return true;
    case onnx::TensorProto::UINT8:
      *dtype = DataType::UInt(8);
      return true;
    case onnx::TensorProto::UINT16:
      *dtype = DataType::UInt(16);
      return true;
    case onnx::TensorProto::UINT32:
      *dtype = DataType::UInt(32);
      return true;
    case onnx::TensorProto::UINT64:
      *dtype = DataType::UInt(64);
      return true;
    case onnx::TensorProto::BOOL:
      *dtype = DataType::Bool();
      return true;
    default:
      return false;
  }
}

bool HostDataType(int elem_type, DataType* dtype) {
  DataType exact;
  if (!GraphDataType(elem_type, &exact)) return false;
  *dtype = HostForm(exact);
  return true;
}

namespace {

// The i-th element of a little-endian raw payload of `elem_type`, as int64.
int64_t RawInt(const std::string& raw, int elem_type, int64_t i) {
  auto read = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, raw.data() + i * sizeof(v), sizeof(v));
    return static_cast<int64_t>(v);
  };
  switch (elem_type) {
    case onnx::TensorProto::INT8:
      return read(int8_t{});
    case onnx::TensorProto::INT16:
      return read(int16_t{});
    case onnx::TensorProto::INT32:
      return read(int32_t{});
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return read(uint8_t{});
    case onnx::TensorProto::UINT16:
      return read(uint16_t{});
    case onnx::TensorProto::UINT32:
      return read(uint32_t{});
    case onnx::TensorProto::UINT64:
      return static_cast<int64_t>(read(uint64_t{}));
    default:
      return read(int64_t{});
  }
}

int ElemBytes(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return 1;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::FLOAT:
      return 4;
    default:
      return 8;
  }
}

}  // namespace

NDArray TensorFromProto(const onnx::TensorProto& proto, const std::string& what) {
  DataType dtype;
  if (!HostDataType(proto.data_type(), &dtype)) {
    TT_USER_ERROR("{}: element type {} is not supported (floats, integers and bool are)", what,
                  ElemTypeName(proto.data_type()));
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    TT_USER_ERROR("{}: tensors stored in external data files are not supported", what);
  }
  if (proto.has_segment()) TT_USER_ERROR("{}: segmented tensors are not supported", what);
  std::vector<int64_t> shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) TT_USER_ERROR("{}: negative dimension {}", what, d);
    shape.push_back(d);
  }
  int64_t count = NumElements(shape);
  int type = proto.data_type();
  // The data that is there is checked against the shape before anything is allocated: a model
  // may declare any shape (a few bytes claiming 12 GB).
  auto check = [&](int64_t n) {
    if (n != count) {
      TT_USER_ERROR("{}: {} values given for shape {} ({} elements)", what, n, ShapeString(shape),
                    count);
    }
  };
  if (type == onnx::TensorProto::DOUBLE || type == onnx::TensorProto::FLOAT16 ||
      type == onnx::TensorProto::BFLOAT16) {
    // Read in their own type, then held as float32 (the host form of every float).
    DataType exact;
    GraphDataType(type, &exact);
    NDArray out = HostEmpty(shape, exact);
    if (proto.has_raw_data()) {
      if (static_cast<int64_t>(proto.raw_data().size()) != count * ElemBytes(type)) {
        TT_USER_ERROR("{}: raw data holds {} bytes, shape {} of {} needs {}", what,
                      proto.raw_data().size(), ShapeString(shape), ElemTypeName(type),
                      count * ElemBytes(type));
      }
      std::memcpy(out.raw(), proto.raw_data().data(), proto.raw_data().size());
    } else if (type == onnx::TensorProto::DOUBLE) {
      check(proto.double_data_size());
      for (int64_t i = 0; i < count; ++i) out.data<double>()[i] = proto.double_data(i);
    } else {  // int32_data holds the 16 bits of each half-precision value
      check(proto.int32_data_size());
      for (int64_t i = 0; i < count; ++i) {
        out.data<uint16_t>()[i] = static_cast<uint16_t>(proto.int32_data(i));
      }
    }
    return HostCast(out, DataType::Float(32));
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (static_cast<int64_t>(raw.size()) != count * ElemBytes(type)) {
      TT_USER_ERROR("{}: raw data holds {} bytes, shape {} of {} needs {}", what, raw.size(),
                    ShapeString(shape), ElemTypeName(type), count * ElemBytes(type));
    }
    NDArray out = NDArray::Empty(shape, dtype);
    for (int64_t i = 0; i < count; ++i) {
      if (type == onnx::TensorProto::FLOAT) {
        std::memcpy(out.data<float>() + i, raw.data() + 4 * i, 4);
      } else if (dtype == DataType::Bool()) {
        out.data<uint8_t>()[i] = RawInt(raw, type, i) != 0;
      } else {
        out.data<int64_t>()[i] = RawInt(raw, type, i);
      }
    }
    return out;
  }
  switch (type) {
    case onnx::TensorProto::FLOAT:
      check(proto.float_data_size());
      break;
    case onnx::TensorProto::INT64:
      check(proto.int64_data_size());
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      check(proto.uint64_data_size());
      break;
    default:
      check(proto.int32_data_size());
      break;
  }
  NDArray out = NDArray::Empty(shape, dtype);
  switch (type) {
    case onnx::TensorProto::FLOAT:
      for (int64_t i = 0; i < count; ++i) out.data<float>()[i] = proto.float_data(i);
      break;
    case onnx::TensorProto::INT64:
      for (int64_t i = 0; i < count; ++i) out.data<int64_t>()[i] = proto.int64_data(i);
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      for (int64_t i = 0; i < count; ++i) {
        out.data<int64_t>()[i] = static_cast<int64_t>(proto.uint64_data(i));
      }
      break;
    default:  // int32_data holds the narrow integer types and bool
      for (int64_t i = 0; i < count; ++i) {
        if (dtype == DataType::Bool()) {
          out.data<uint8_t>()[i] = proto.int32_data(i) != 0;
        } else {
          out.data<int64_t>()[i] = proto.int32_data(i);
        }
      }
      break;
  }
  return out;
}

}  // namespace tirtune::graph::onnx_import
