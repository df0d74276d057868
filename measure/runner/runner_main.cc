// `tirtune-runner [--cpus 0,1]`: a measurement worker. Reads framed requests on stdin and writes
// framed replies on stdout (runner_protocol.h) until stdin closes. Started by RunnerPool.
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "tirtune/measure/runner_worker.h"

namespace {

// "0,1,4" -> a CPU set; false for anything else.
bool ParseCpus(const std::string& text, cpu_set_t* set) {
  CPU_ZERO(set);
  std::stringstream ss(text);
  std::string item;
  int count = 0;
  while (std::getline(ss, item, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) return false;
    int cpu = std::stoi(item);
    if (cpu >= CPU_SETSIZE) return false;
    CPU_SET(cpu, set);
    ++count;
  }
  return count > 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cpus" && i + 1 < argc) {
      cpu_set_t set;
      if (!ParseCpus(argv[++i], &set)) {
        std::fprintf(stderr, "tirtune-runner: bad --cpus list '%s'\n", argv[i]);
        return 1;
      }
      if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        std::fprintf(stderr, "tirtune-runner: sched_setaffinity: %s\n", std::strerror(errno));
        return 1;
      }
    } else {
      std::fprintf(stderr, "usage: tirtune-runner [--cpus 0,1,...]\n");
      return 1;
    }
  }
  // Die with the tuner, and keep the protocol stream private: a kernel or library printing to
  // stdout must not corrupt the replies.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::signal(SIGPIPE, SIG_IGN);
  int out_fd = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  return tirtune::ServeRunRequests(STDIN_FILENO, out_fd);
}
