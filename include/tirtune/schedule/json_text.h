// Reading JSON from outside (trace files, database rows, JSON-lines, artifact manifests): nesting
// is limited before anything is built from it, since nlohmann::json copies and prints documents
// recursively and a trace nested 70,000 levels deep would overflow the stack; errors name the
// document and the byte, never echo more than a few dozen characters of it. It lives with the
// schedule library, the lowest one that speaks JSON (traces).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace tirtune {

/// Deeper nesting is refused. Nothing tirtune writes comes near it: a trace nests 5 levels.
inline constexpr int kMaxJsonDepth = 64;

/// `text` as JSON, or nullopt with the reason in `why` ("not valid JSON" or "nested deeper than
/// 64 levels", to follow "X is") and, when given, what the parser saw in `detail` ("syntax error
/// while parsing value - invalid literal; last read: 'tru...'" or empty).
std::optional<nlohmann::json> TryParseJsonText(std::string_view text, std::string* why,
                                               std::string* detail = nullptr);

/// What a nlohmann::json exception says, for people: without its "[json.exception.type_error.302]"
/// prefix, and with what the parser last read cut to 40 characters.
std::string JsonErrorText(const nlohmann::json::exception& e);

/// `text` as JSON; UserError "WHAT: REASON[: DETAIL]" otherwise.
nlohmann::json ParseJsonText(std::string_view text, std::string_view what);

/// `j` as an integer in [lo, hi]; UserError "WHAT is not an integer" (a string, a fraction, a
/// float such as 1e300 that nlohmann would convert with undefined behaviour) or "WHAT = V is out
/// of range" otherwise.
int64_t JsonInteger(const nlohmann::json& j, std::string_view what, int64_t lo = INT64_MIN,
                    int64_t hi = INT64_MAX);

}  // namespace tirtune
