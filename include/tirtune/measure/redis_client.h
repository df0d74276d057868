// A small synchronous client of a Redis server (the device pool's broker) over hiredis: broker
// addresses, one connection, commands with binary-safe arguments, and replies that own their
// memory. Lost connections are BrokerErrors, so callers can reconnect and carry on.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tirtune/support/error.h"

struct redisContext;
struct redisReply;

namespace tirtune {

/// The broker could not be reached, refused us, or the connection broke. Its message names the
/// broker and what went wrong (never a password).
class BrokerError : public UserError {
 public:
  explicit BrokerError(const std::string& what) : UserError(what) {}
};

/// Where the broker is: `redis://[USER@]HOST:PORT`. The password never travels in the URL (it
/// would show in `ps` and in shell histories): it comes from a file or the environment.
struct BrokerAddress {
  std::string host;
  int port = 6379;
  /// Empty: the default user.
  std::string user;
  /// Set by the caller from a file or the environment; empty for none.
  std::string password;
  /// "redis://USER@HOST:PORT", for messages.
  std::string str() const;
};

/// Parses a broker URL. UserError naming what is wrong; one with a password in it is refused.
BrokerAddress ParseBrokerUrl(std::string_view url);

/// A reply; owns its hiredis object. Accessors throw BrokerError on a reply of another shape.
class RedisReply {
 public:
  RedisReply() = default;
  explicit RedisReply(redisReply* r);
  bool is_nil() const;
  bool is_error() const;
  bool is_array() const;
  /// A string or status reply's bytes (an error's text).
  std::string str() const;
  std::string_view view() const;
  int64_t integer() const;
  size_t size() const;
  /// Element `i` of an array reply (not owned: valid while this reply lives).
  class View;
  View operator[](size_t i) const;
  View view_of() const;

 private:
  std::shared_ptr<redisReply> reply_;
};

/// A non-owning look into a reply tree.
class RedisReply::View {
 public:
  explicit View(const redisReply* r) : r_(r) {}
  bool is_nil() const;
  bool is_array() const;
  std::string str() const;
  std::string_view view() const;
  int64_t integer() const;
  size_t size() const;
  View operator[](size_t i) const;

 private:
  const redisReply* r_;
};

class RedisClient {
 public:
  /// Connects and authenticates; BrokerError when the broker cannot be reached in `timeout_s` or
  /// refuses the credentials. `io_timeout_s` bounds every later read and write.
  RedisClient(BrokerAddress address, double timeout_s = 5, double io_timeout_s = 30);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  /// Runs one command; BrokerError when the connection breaks (the client is then unusable:
  /// make a new one) or the server answers with an error, unless `allow_error`.
  RedisReply Command(const std::vector<std::string_view>& args, bool allow_error = false);
  /// Sends every command, then reads every reply (one round trip); same errors as Command.
  std::vector<RedisReply> Pipeline(const std::vector<std::vector<std::string_view>>& commands,
                                   bool allow_error = false);

  /// The server's run id (changes when it restarts).
  std::string RunId();
  const BrokerAddress& address() const { return address_; }

 private:
  RedisReply Read(const std::vector<std::string_view>& args, bool allow_error);
  [[noreturn]] void Fail(const std::string& what);

  BrokerAddress address_;
  redisContext* context_ = nullptr;
};

}  // namespace tirtune
