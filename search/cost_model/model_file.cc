// The cost-model file format of model_file.h.
#include "model_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tirtune/support/error.h"

namespace tirtune::cost_model_file {
namespace {

constexpr char kMagic[8] = {'T', 'I', 'R', 'T', 'C', 'O', 'S', 'T'};
// Version 2 added the XGBoost model's prior; version 1 files still load (without one).
constexpr uint64_t kVersion = 2;
constexpr uint64_t kOldestVersion = 1;
// Caps that keep a corrupt length from asking for an absurd allocation.
constexpr uint64_t kMaxStringBytes = 1 << 20;

}  // namespace

Writer::Writer(const std::string& model_name) {
  Bytes(kMagic, sizeof kMagic);
  U64(kVersion);
  String(model_name);
  U64(FeatureMatrix::kNumFeatures);
}

void Writer::U64(uint64_t v) { Bytes(&v, sizeof v); }
void Writer::F64(double v) { Bytes(&v, sizeof v); }

void Writer::String(const std::string& s) {
  U64(s.size());
  Bytes(s.data(), s.size());
}

void Writer::Bytes(const void* data, size_t size) {
  bytes_.append(static_cast<const char*>(data), size);
}

void Writer::Samples(const std::vector<CostSample>& samples) {
  U64(samples.size());
  for (const CostSample& s : samples) {
    String(s.task);
    F64(s.seconds);
    U64(s.features.rows);
    Bytes(s.features.data.data(), s.features.data.size() * sizeof(float));
  }
}

void Writer::Commit(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      TT_USER_ERROR("cannot write cost model file '{}': {}", tmp, std::strerror(errno));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    TT_USER_ERROR("cannot write cost model file '{}': {}", path, reason);
  }
}

Reader::Reader(const std::string& path, const std::string& model_name) : path_(path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) TT_USER_ERROR("cannot open cost model file '{}': {}", path, std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  bytes_ = std::move(content).str();

  char magic[sizeof kMagic];
  Take(magic, sizeof magic, "header");
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) Fail("not a tirtune cost model file");
  version_ = U64();
  if (version_ < kOldestVersion || version_ > kVersion) {
    Fail(fmt::format("format version {}, this build reads versions {} to {}", version_,
                     kOldestVersion, kVersion));
  }
  std::string name = String();
  if (name != model_name) {
    Fail(fmt::format("holds a '{}' model, not a '{}' model", name, model_name));
  }
  uint64_t num_features = U64();
  if (num_features != FeatureMatrix::kNumFeatures) {
    Fail(fmt::format("features have {} columns, this build uses {}", num_features,
                     FeatureMatrix::kNumFeatures));
  }
}

uint64_t Reader::U64() {
  uint64_t v;
  Take(&v, sizeof v, "integer");
  return v;
}

double Reader::F64() {
  double v;
  Take(&v, sizeof v, "number");
  return v;
}

std::string Reader::String() {
  uint64_t size = U64();
  if (size > kMaxStringBytes) Fail(fmt::format("string of {} bytes", size));
  return Bytes(size);
}

std::string Reader::Bytes(size_t size) {
  std::string out(size <= bytes_.size() - pos_ ? size : 0, '\0');
  Take(out.data(), size, "bytes");
  return out;
}

std::vector<CostSample> Reader::Samples() {
  uint64_t count = U64();
  std::vector<CostSample> samples;
  for (uint64_t i = 0; i < count; ++i) {
    CostSample s;
    s.task = String();
    s.seconds = F64();
    uint64_t rows = U64();
    const uint64_t row_bytes = FeatureMatrix::kNumFeatures * sizeof(float);
    if (rows > (bytes_.size() - pos_) / row_bytes) {
      Fail(fmt::format("truncated in the features of sample {} ({} rows)", i, rows));
    }
    s.features.rows = rows;
    s.features.data.resize(rows * FeatureMatrix::kNumFeatures);
    Take(s.features.data.data(), rows * row_bytes, "features");
    samples.push_back(std::move(s));
  }
  return samples;
}

void Reader::ExpectEnd() const {
  if (pos_ != bytes_.size()) {
    Fail(fmt::format("{} unexpected bytes after the end", bytes_.size() - pos_));
  }
}

void Reader::Fail(const std::string& what) const {
  TT_USER_ERROR("bad cost model file '{}': {}", path_, what);
}

void Reader::Take(void* out, size_t size, const char* what) {
  if (size > bytes_.size() - pos_) {
    Fail(fmt::format("truncated: {} of {} bytes at offset {}, {} left", what, size, pos_,
                     bytes_.size() - pos_));
  }
  std::memcpy(out, bytes_.data() + pos_, size);
  pos_ += size;
}

}  // namespace tirtune::cost_model_file
