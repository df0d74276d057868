// ScheduleError: the failure of a schedule primitive whose preconditions do not hold. Inside the
// search it is caught per candidate and only the cheap one-line message is rendered; for users
// the detailed message prints the function with the offending loops or blocks marked.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "tirtune/ir/function.h"

namespace tirtune {

/// A node an error points at, kept alive with the error: the schedule that held it may be gone by
/// the time the message is read (an error thrown out of a function that owned the Schedule).
template <typename T>
class HeldNode {
 public:
  HeldNode(const T* node) : node_(node) {}  // NOLINT: implicit, as the raw pointer it replaces
  operator const T*() const { return node_.get(); }  // NOLINT
  const T* operator->() const { return node_.get(); }
  const T* get() const { return node_.get(); }

 private:
  ObjectPtr<const T> node_;
};

class ScheduleError : public std::exception {
 public:
  /// The error class name, e.g. "NotOnlyChildError".
  virtual const char* Kind() const = 0;
  /// One line, cheap to build: used inside search and as what().
  virtual std::string ShortMessage() const = 0;
  /// A fuller explanation (what rule broke, what to do instead); defaults to the short message.
  virtual std::string Explanation() const { return ShortMessage(); }
  /// Loops (ForNode) or blocks (BlockRealizeNode) to mark in the detailed message.
  virtual std::vector<const Object*> Locations() const { return {}; }

  /// "Kind: explanation" followed by `func` printed with Locations() marked.
  std::string DetailedMessage(const PrimFunc& func) const;
  const char* what() const noexcept override;

 private:
  mutable std::string what_;
};

/// A ScheduleError with a fixed kind and message, for the simple preconditions shared by many
/// primitives. `locations` are the nodes to mark; `advice` (what to do instead), when given,
/// follows the message in the explanation.
class SimpleScheduleError : public ScheduleError {
 public:
  SimpleScheduleError(const char* kind, std::string message,
                      std::vector<const Object*> locations = {}, std::string advice = {})
      : kind_(kind),
        message_(std::move(message)),
        locations_(locations.begin(), locations.end()),
        advice_(std::move(advice)) {}
  const char* Kind() const override { return kind_; }
  std::string ShortMessage() const override { return message_; }
  std::string Explanation() const override {
    return advice_.empty() ? message_ : message_ + ". " + advice_;
  }
  std::vector<const Object*> Locations() const override {
    return {locations_.begin(), locations_.end()};
  }

 private:
  const char* kind_;
  std::string message_;
  std::vector<HeldNode<Object>> locations_;
  std::string advice_;
};

}  // namespace tirtune
