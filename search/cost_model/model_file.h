// The file format the cost models save to (private to search/cost_model/): a magic header, a
// format version and the model's name, then model-specific fields. Integers and floats are
// written in the host's byte order. The reader checks every length against what is left, so a
// truncated or foreign file is a UserError naming the file, never a crash or a huge allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tirtune/search/cost_model.h"

namespace tirtune::cost_model_file {

/// Builds a model file in memory; Commit writes it to `path` (through a temporary file and a
/// rename, so a crash never leaves half a file under the final name).
class Writer {
 public:
  /// Starts the file with the header of model `model_name`.
  explicit Writer(const std::string& model_name);
  void U64(uint64_t v);
  void F64(double v);
  void String(const std::string& s);
  void Bytes(const void* data, size_t size);
  /// Samples with their tasks, times and feature rows.
  void Samples(const std::vector<CostSample>& samples);
  /// UserError naming `path` when it cannot be written.
  void Commit(const std::string& path) const;

 private:
  std::string bytes_;
};

/// Reads a model file written by Writer; every failure is a UserError naming the file.
class Reader {
 public:
  /// Reads `path` and checks the header, the version and that it holds model `model_name`.
  Reader(const std::string& path, const std::string& model_name);
  uint64_t U64();
  double F64();
  std::string String();
  /// `size` raw bytes.
  std::string Bytes(size_t size);
  std::vector<CostSample> Samples();
  /// The file's format version (fields added later are absent from older files).
  uint64_t version() const { return version_; }
  /// Fails unless everything was read.
  void ExpectEnd() const;
  /// Throws a UserError naming the file.
  [[noreturn]] void Fail(const std::string& what) const;

 private:
  void Take(void* out, size_t size, const char* what);

  std::string path_;
  std::string bytes_;
  size_t pos_ = 0;
  uint64_t version_ = 0;
};

}  // namespace tirtune::cost_model_file
