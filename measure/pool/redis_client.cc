// hiredis behind RedisClient: connecting with timeouts, AUTH, commands as argv vectors, and
// broken connections turned into BrokerErrors.
#include "tirtune/measure/redis_client.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <charconv>
#include <cmath>

namespace tirtune {
namespace {

timeval ToTimeval(double seconds) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - std::floor(seconds)) * 1e6);
  return tv;
}

std::string Describe(const redisReply* r) {
  if (r == nullptr) return "no reply";
  switch (r->type) {
    case REDIS_REPLY_STRING:
      return "a string";
    case REDIS_REPLY_ARRAY:
      return "an array";
    case REDIS_REPLY_INTEGER:
      return "an integer";
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_STATUS:
      return "a status";
    case REDIS_REPLY_ERROR:
      return std::string("the error '") + std::string(r->str, r->len) + "'";
  }
  return "an unknown reply";
}

[[noreturn]] void Unexpected(const redisReply* r, const char* wanted) {
  throw BrokerError(
      fmt::format("the broker answered {} where {} was expected", Describe(r), wanted));
}

std::string_view ViewOf(const redisReply* r) {
  if (r == nullptr || (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS &&
                       r->type != REDIS_REPLY_ERROR)) {
    Unexpected(r, "a string");
  }
  return std::string_view(r->str, r->len);
}

int64_t IntegerOf(const redisReply* r) {
  if (r != nullptr && r->type == REDIS_REPLY_INTEGER) return r->integer;
  // Some commands answer numbers as strings.
  std::string_view s = ViewOf(r);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) Unexpected(r, "an integer");
  return v;
}

const redisReply* ElementOf(const redisReply* r, size_t i) {
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY) Unexpected(r, "an array");
  if (i >= r->elements) {
    throw BrokerError(
        fmt::format("the broker's reply has {} elements, not {}", r->elements, i + 1));
  }
  return r->element[i];
}

}  // namespace

std::string BrokerAddress::str() const {
  return fmt::format("redis://{}{}{}:{}", user, user.empty() ? "" : "@", host, port);
}

BrokerAddress ParseBrokerUrl(std::string_view url) {
  constexpr std::string_view kScheme = "redis://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    TT_USER_ERROR("bad broker '{}': expected redis://[USER@]HOST:PORT", url);
  }
  std::string_view rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  BrokerAddress a;
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view user = rest.substr(0, at);
    if (user.find(':') != std::string_view::npos) {
      TT_USER_ERROR(
          "bad broker URL: it holds a password, which would show in process lists and shell "
          "histories; put the password in a file (--password-file) or in TIRTUNE_BROKER_PASSWORD");
    }
    a.user = std::string(user);
    rest = rest.substr(at + 1);
  }
  size_t colon = rest.rfind(':');
  std::string_view port = colon == std::string_view::npos ? "" : rest.substr(colon + 1);
  a.host = std::string(colon == std::string_view::npos ? rest : rest.substr(0, colon));
  if (a.host.empty() || a.host.find_first_of("/?#") != std::string::npos) {
    TT_USER_ERROR("bad broker '{}': expected redis://[USER@]HOST:PORT", url);
  }
  if (!port.empty()) {
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
    if (ec != std::errc() || end != port.data() + port.size() || a.port < 1 || a.port > 65535) {
      TT_USER_ERROR("bad broker '{}': the port must be a number from 1 to 65535", url);
    }
  }
  return a;
}

RedisReply::RedisReply(redisReply* r) : reply_(r, [](redisReply* p) { freeReplyObject(p); }) {}
bool RedisReply::is_nil() const { return view_of().is_nil(); }
bool RedisReply::is_error() const { return reply_ && reply_->type == REDIS_REPLY_ERROR; }
bool RedisReply::is_array() const { return view_of().is_array(); }
std::string RedisReply::str() const { return view_of().str(); }
std::string_view RedisReply::view() const { return view_of().view(); }
int64_t RedisReply::integer() const { return view_of().integer(); }
size_t RedisReply::size() const { return view_of().size(); }
RedisReply::View RedisReply::operator[](size_t i) const { return view_of()[i]; }
RedisReply::View RedisReply::view_of() const { return View(reply_.get()); }

bool RedisReply::View::is_nil() const { return r_ == nullptr || r_->type == REDIS_REPLY_NIL; }
bool RedisReply::View::is_array() const { return r_ != nullptr && r_->type == REDIS_REPLY_ARRAY; }
std::string RedisReply::View::str() const { return std::string(ViewOf(r_)); }
std::string_view RedisReply::View::view() const { return ViewOf(r_); }
int64_t RedisReply::View::integer() const { return IntegerOf(r_); }
size_t RedisReply::View::size() const {
  if (is_nil()) return 0;
  if (!is_array()) Unexpected(r_, "an array");
  return r_->elements;
}
RedisReply::View RedisReply::View::operator[](size_t i) const { return View(ElementOf(r_, i)); }

RedisClient::RedisClient(BrokerAddress address, double timeout_s, double io_timeout_s)
    : address_(std::move(address)) {
  context_ = redisConnectWithTimeout(address_.host.c_str(), address_.port, ToTimeval(timeout_s));
  if (context_ == nullptr) throw BrokerError("cannot reach the broker: out of memory");
  if (context_->err != 0) {
    std::string why = context_->errstr;
    redisFree(context_);
    context_ = nullptr;
    throw BrokerError(fmt::format("cannot reach the broker {}: {}", address_.str(), why));
  }
  redisSetTimeout(context_, ToTimeval(io_timeout_s));
  redisEnableKeepAlive(context_);
  if (!address_.password.empty() || !address_.user.empty()) {
    std::vector<std::string_view> auth = {"AUTH"};
    if (!address_.user.empty()) auth.push_back(address_.user);
    auth.push_back(address_.password);
    RedisReply r = Command(auth, /*allow_error=*/true);
    if (r.is_error()) {
      std::string why = r.str();
      redisFree(context_);
      context_ = nullptr;
      throw BrokerError(fmt::format("the broker {} refused the credentials of user '{}': {}",
                                    address_.str(),
                                    address_.user.empty() ? "default" : address_.user, why));
    }
  }
}

RedisClient::~RedisClient() {
  if (context_ != nullptr) redisFree(context_);
}

void RedisClient::Fail(const std::string& what) {
  std::string why = context_ != nullptr && context_->err != 0 ? context_->errstr : "no reply";
  throw BrokerError(fmt::format("lost the broker {} during {}: {}", address_.str(), what, why));
}

RedisReply RedisClient::Read(const std::vector<std::string_view>& args, bool allow_error) {
  void* raw = nullptr;
  if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
    Fail(args.empty() ? std::string("a command") : std::string(args[0]));
  }
  RedisReply reply(static_cast<redisReply*>(raw));
  if (reply.is_error() && !allow_error) {
    throw BrokerError(fmt::format("the broker {} refused {}: {}", address_.str(),
                                  args.empty() ? std::string("a command") : std::string(args[0]),
                                  reply.str()));
  }
  return reply;
}

RedisReply RedisClient::Command(const std::vector<std::string_view>& args, bool allow_error) {
  return Pipeline({args}, allow_error).front();
}

std::vector<RedisReply> RedisClient::Pipeline(
    const std::vector<std::vector<std::string_view>>& commands, bool allow_error) {
  if (context_ == nullptr || context_->err != 0) Fail("a command on a broken connection");
  for (const std::vector<std::string_view>& args : commands) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (std::string_view a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    if (redisAppendCommandArgv(context_, static_cast<int>(argv.size()), argv.data(),
                               lengths.data()) != REDIS_OK) {
      Fail(std::string(args.empty() ? "a command" : args[0]));
    }
  }
  std::vector<RedisReply> replies;
  std::string first_error;
  for (const std::vector<std::string_view>& args : commands) {
    // Read every reply even after an error, so the connection stays in step.
    try {
      replies.push_back(Read(args, allow_error));
    } catch (const BrokerError& e) {
      if (context_->err != 0) throw;
      if (first_error.empty()) first_error = e.what();
      replies.emplace_back();
    }
  }
  if (!first_error.empty()) throw BrokerError(first_error);
  return replies;
}

std::string RedisClient::RunId() {
  std::string info = Command({"INFO", "server"}).str();
  size_t at = info.find("run_id:");
  if (at == std::string::npos) return "";
  size_t end = info.find_first_of("\r\n", at);
  return info.substr(at + 7, end - at - 7);
}

}  // namespace tirtune
