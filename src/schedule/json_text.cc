// Depth-limited JSON parsing with short, located errors.
#include "tirtune/schedule/json_text.h"

#include <fmt/format.h>

#include "tirtune/support/error.h"

namespace tirtune {
namespace {

struct TooDeep {};

}  // namespace

// nlohmann's message without its "[json.exception.parse_error.101] " prefix, and with what it
// last read cut short (it may be a whole 2 MB line).
std::string JsonErrorText(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (size_t bracket = what.find("] ");
      what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) {
    what = what.substr(bracket + 2);
  }
  constexpr size_t kKeep = 40;
  if (size_t last = what.find("; last read: '"); last != std::string::npos) {
    size_t start = last + 14;
    if (what.size() > start + kKeep + 1) what = what.substr(0, start + kKeep) + "...'";
  }
  return what;
}

std::optional<nlohmann::json> TryParseJsonText(std::string_view text, std::string* why,
                                               std::string* detail) {
  auto limit_depth = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth >= kMaxJsonDepth) throw TooDeep{};  // depth counts from 0
    return true;
  };
  try {
    return nlohmann::json::parse(text, limit_depth);
  } catch (const TooDeep&) {
    *why = fmt::format("nested deeper than {} levels", kMaxJsonDepth);
    if (detail != nullptr) detail->clear();
  } catch (const nlohmann::json::exception& e) {  // a syntax error, a number out of range
    *why = "not valid JSON";
    if (detail != nullptr) *detail = JsonErrorText(e);
  }
  return std::nullopt;
}

nlohmann::json ParseJsonText(std::string_view text, std::string_view what) {
  std::string why, detail;
  std::optional<nlohmann::json> j = TryParseJsonText(text, &why, &detail);
  if (!j) TT_USER_ERROR("{}: {}{}{}", what, why, detail.empty() ? "" : ": ", detail);
  return std::move(*j);
}

int64_t JsonInteger(const nlohmann::json& j, std::string_view what, int64_t lo, int64_t hi) {
  if (!j.is_number_integer()) TT_USER_ERROR("{} is not an integer", what);
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    TT_USER_ERROR("{} = {} is out of range", what, j.get<uint64_t>());
  }
  int64_t v = j.get<int64_t>();
  if (v < lo || v > hi) TT_USER_ERROR("{} = {} is out of range", what, v);
  return v;
}

}  // namespace tirtune
