// The two kinds of exceptional failure: a user's mistake (UserError: bad input, with a message
// that names what was wrong and where) and an internal bug (InternalError: a broken invariant).
// Expected failures inside search and measurement are values (see support/status.h), not throws.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace tirtune {

/// Bad input from the user: malformed IR text, JSON, options, files.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& what) : std::runtime_error(what) {}
};

/// The user asked to stop (Ctrl-C, SIGTERM) while a long step ran; a UserError so that a caller
/// that does not expect it still ends with its message rather than as a bug.
class Interrupted : public UserError {
 public:
  explicit Interrupted(const std::string& what) : UserError(what) {}
};

/// A broken internal invariant: a bug in tirtune.
class InternalError : public std::runtime_error {
 public:
  explicit InternalError(const std::string& what) : std::runtime_error(what) {}
};

[[noreturn]] void ThrowInternalError(const char* file, int line, const char* condition,
                                     const std::string& message);

}  // namespace tirtune

/// Checks an internal invariant. The message arguments (fmt syntax) are evaluated only on failure.
#define TT_ICHECK(cond, ...)                                                       \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      ::tirtune::ThrowInternalError(__FILE__, __LINE__, #cond,                     \
                                    ::tirtune::detail::CheckMessage(__VA_ARGS__)); \
    }                                                                              \
  } while (false)

#define TT_UNREACHABLE(...)                                        \
  ::tirtune::ThrowInternalError(__FILE__, __LINE__, "unreachable", \
                                ::tirtune::detail::CheckMessage(__VA_ARGS__))

/// Throws a UserError with a fmt-formatted message.
#define TT_USER_ERROR(...) throw ::tirtune::UserError(fmt::format(__VA_ARGS__))

namespace tirtune::detail {
inline std::string CheckMessage() { return {}; }
template <typename... Args>
std::string CheckMessage(fmt::format_string<Args...> f, Args&&... args) {
  return fmt::format(f, std::forward<Args>(args)...);
}
}  // namespace tirtune::detail
