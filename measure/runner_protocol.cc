// Binary encoding of runner requests and replies. Both ends run on the same machine, so numbers
// are written in host byte order; only the frame length is fixed to little-endian.
#include "tirtune/measure/runner_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "byte_codec.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// Version 2 added return_outputs and outputs, version 3 `library`, version 4 the args' stated
// values, version 5 their packed layouts, version 6 which are constants and the timer's
// cold_constants; reply version 3 `restart`.
constexpr uint32_t kRequestMagic = 0x54525136;  // "TRQ6"
constexpr uint32_t kReplyMagic = 0x54525033;    // "TRP3"

using Writer = ByteWriter;

// The runner protocol's reader: the shared codec plus its data types and magic numbers.
class Reader : public ByteReader {
 public:
  explicit Reader(const std::string& in) : ByteReader(in, "runner protocol") {}
  DataType Type() {
    std::optional<DataType> t = DataType::Parse(String());
    if (!t) throw UserError("runner protocol: unknown data type");
    return *t;
  }
  void Magic(uint32_t expected) {
    if (Pod<uint32_t>() != expected) {
      throw UserError(
          "runner protocol: bad magic number (a message of another tirtune version, or damaged)");
    }
  }
};

void WriteArrays(Writer& w, const std::vector<NDArray>& arrays) {
  w.Pod<uint32_t>(static_cast<uint32_t>(arrays.size()));
  for (const NDArray& e : arrays) {
    w.Pod<uint8_t>(e.defined() ? 1 : 0);
    if (!e.defined()) continue;
    w.Shape(e.shape());
    w.String(e.dtype().str());
    w.Bytes(e.raw(), static_cast<size_t>(e.nbytes()));
  }
}

std::vector<NDArray> ReadArrays(Reader& r) {
  std::vector<NDArray> arrays;
  uint32_t n = r.Pod<uint32_t>();
  for (uint32_t i = 0; i < n; ++i) {
    if (r.Pod<uint8_t>() == 0) {
      arrays.emplace_back();
      continue;
    }
    std::vector<int64_t> shape = r.Shape();
    DataType dtype = r.Type();
    NDArray e = NDArray::Empty(shape, dtype);
    std::memcpy(e.raw(), r.Take(static_cast<size_t>(e.nbytes())), static_cast<size_t>(e.nbytes()));
    arrays.push_back(std::move(e));
  }
  return arrays;
}

}  // namespace

void FillStatedValues(const std::vector<ArgSpec>& specs, std::vector<NDArray>& args) {
  for (size_t i = 0; i < specs.size() && i < args.size(); ++i) {
    const std::vector<double>& values = specs[i].values;
    if (values.empty()) continue;
    if (static_cast<int64_t>(values.size()) != args[i].size()) {
      TT_USER_ERROR("parameter '{}' states {} values for {} elements", specs[i].name, values.size(),
                    args[i].size());
    }
    for (size_t e = 0; e < values.size(); ++e)
      args[i].SetDouble(static_cast<int64_t>(e), values[e]);
  }
}

std::string SerializeRequest(const RunRequest& request) {
  Writer w;
  w.Pod(kRequestMagic);
  w.String(request.object);
  w.String(request.func_name);
  w.String(request.target);
  w.Pod<uint32_t>(static_cast<uint32_t>(request.args.size()));
  for (const ArgSpec& a : request.args) {
    w.String(a.name);
    w.Shape(a.shape);
    w.String(a.dtype.str());
    w.Pod<uint32_t>(static_cast<uint32_t>(a.values.size()));
    for (double v : a.values) w.Pod<double>(v);
    w.String(a.layout);
    w.Pod<uint8_t>(a.constant ? 1 : 0);
  }
  w.Pod<uint64_t>(request.seed);
  w.Pod<int32_t>(request.timer.warmup);
  w.Pod<int32_t>(request.timer.repeat);
  w.Pod<double>(request.timer.min_repeat_ms);
  w.Pod<uint8_t>(request.timer.flush_cache ? 1 : 0);
  w.Pod<uint8_t>(request.timer.cold_constants ? 1 : 0);
  w.Pod<double>(request.slow_cutoff_seconds);
  w.Pod<double>(request.reduction_length);
  WriteArrays(w, request.expected);
  w.Pod<uint8_t>(request.return_outputs ? 1 : 0);
  w.String(request.library);
  return w.Take();
}

RunRequest DeserializeRequest(const std::string& payload) {
  Reader r(payload);
  r.Magic(kRequestMagic);
  RunRequest request;
  request.object = r.String();
  request.func_name = r.String();
  request.target = r.String();
  uint32_t nargs = r.Pod<uint32_t>();
  for (uint32_t i = 0; i < nargs; ++i) {
    ArgSpec a;
    a.name = r.String();
    a.shape = r.Shape();
    a.dtype = r.Type();
    uint32_t nvalues = r.Pod<uint32_t>();
    for (uint32_t v = 0; v < nvalues; ++v) a.values.push_back(r.Pod<double>());
    a.layout = r.String();
    a.constant = r.Pod<uint8_t>() != 0;
    request.args.push_back(std::move(a));
  }
  request.seed = r.Pod<uint64_t>();
  request.timer.warmup = r.Pod<int32_t>();
  request.timer.repeat = r.Pod<int32_t>();
  request.timer.min_repeat_ms = r.Pod<double>();
  request.timer.flush_cache = r.Pod<uint8_t>() != 0;
  request.timer.cold_constants = r.Pod<uint8_t>() != 0;
  request.slow_cutoff_seconds = r.Pod<double>();
  request.reduction_length = r.Pod<double>();
  request.expected = ReadArrays(r);
  request.return_outputs = r.Pod<uint8_t>() != 0;
  request.library = r.String();
  return request;
}

std::string SerializeReply(const RunReply& reply) {
  Writer w;
  w.Pod(kReplyMagic);
  w.Pod<uint8_t>(static_cast<uint8_t>(reply.kind));
  w.String(reply.message);
  w.Pod<double>(reply.max_abs_error);
  w.Pod<double>(reply.max_rel_error);
  w.Pod<uint32_t>(static_cast<uint32_t>(reply.timing.seconds.size()));
  for (double s : reply.timing.seconds) w.Pod<double>(s);
  w.Pod<double>(reply.timing.median);
  w.Pod<int32_t>(reply.timing.number);
  w.Pod<double>(reply.timing.cv);
  WriteArrays(w, reply.outputs);
  w.Pod<uint8_t>(reply.restart ? 1 : 0);
  return w.Take();
}

RunReply DeserializeReply(const std::string& payload) {
  Reader r(payload);
  r.Magic(kReplyMagic);
  RunReply reply;
  uint8_t kind = r.Pod<uint8_t>();
  if (kind > static_cast<uint8_t>(ReplyKind::kWrongResult)) {
    throw UserError("runner protocol: unknown reply kind");
  }
  reply.kind = static_cast<ReplyKind>(kind);
  reply.message = r.String();
  reply.max_abs_error = r.Pod<double>();
  reply.max_rel_error = r.Pod<double>();
  uint32_t n = r.Pod<uint32_t>();
  for (uint32_t i = 0; i < n; ++i) reply.timing.seconds.push_back(r.Pod<double>());
  reply.timing.median = r.Pod<double>();
  reply.timing.number = r.Pod<int32_t>();
  reply.timing.cv = r.Pod<double>();
  reply.outputs = ReadArrays(r);
  reply.restart = r.Pod<uint8_t>() != 0;
  return reply;
}

namespace {

bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t k = send(fd, data, n, MSG_NOSIGNAL);
    if (k < 0 && errno == ENOTSOCK) k = write(fd, data, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    data += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool ReadAll(int fd, char* data, size_t n) {
  while (n > 0) {
    ssize_t k = read(fd, data, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    data += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

}  // namespace

bool WriteFrame(int fd, const std::string& payload) {
  unsigned char header[8];
  uint64_t n = payload.size();
  for (int i = 0; i < 8; ++i) header[i] = static_cast<unsigned char>(n >> (8 * i));
  return WriteAll(fd, reinterpret_cast<const char*>(header), 8) &&
         WriteAll(fd, payload.data(), payload.size());
}

std::optional<std::string> ReadFrame(int fd) {
  unsigned char header[8];
  if (!ReadAll(fd, reinterpret_cast<char*>(header), 8)) return std::nullopt;
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(header[i]) << (8 * i);
  if (n > (uint64_t{1} << 36)) return std::nullopt;
  std::string payload(n, '\0');
  if (!ReadAll(fd, payload.data(), n)) return std::nullopt;
  return payload;
}

}  // namespace tirtune
