// StopOnSignals: one process-wide flag and message, since a signal handler can reach nothing else.
#include "stop_signals.h"

#include <unistd.h>

#include <csignal>
#include <cstring>

namespace tirtune::cli {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);
const char* g_message = "";

constexpr int kSignals[2] = {SIGINT, SIGTERM};
struct sigaction g_previous[2];

void OnSignal(int) {
  g_stop.store(true);
  ssize_t ignored = write(STDERR_FILENO, "\n", 1);
  ignored = write(STDERR_FILENO, g_message, std::strlen(g_message));
  (void)ignored;
}

}  // namespace

StopOnSignals::StopOnSignals(const char* message) {
  g_stop.store(false);
  g_message = message;
  for (int i = 0; i < 2; ++i) {
    struct sigaction action = {};
    action.sa_handler = OnSignal;
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    sigaction(kSignals[i], nullptr, &g_previous[i]);
    if (g_previous[i].sa_handler == SIG_IGN) continue;
    sigaction(kSignals[i], &action, nullptr);
  }
}

StopOnSignals::~StopOnSignals() {
  for (int i = 0; i < 2; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

const std::atomic<bool>* StopOnSignals::flag() const { return &g_stop; }

}  // namespace tirtune::cli
