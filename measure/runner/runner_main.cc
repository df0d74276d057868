// `tirtune-runner [--cpus 0,1] [--sandbox] [--cuda-device N]`: a measurement worker. Reads framed requests on stdin
// and writes framed replies on stdout (runner_protocol.h) until stdin closes. Started by
// RunnerPool. With --sandbox (a device pool's agent runs kernels it did not compile) it first
// gives up the network (a network namespace of its own), new privileges and core dumps.
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

#include "tirtune/measure/runner_worker.h"
#include "tirtune/offload/library.h"

namespace {

// "0,1,4" -> a CPU set; false for anything else.
bool ParseCpus(const std::string& text, cpu_set_t* set) {
  CPU_ZERO(set);
  std::stringstream ss(text);
  std::string item;
  int count = 0;
  while (std::getline(ss, item, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) return false;
    if (item.size() > 6) return false;
    int cpu = std::atoi(item.c_str());
    if (cpu >= CPU_SETSIZE) return false;
    CPU_SET(cpu, set);
    ++count;
  }
  return count > 0;
}

// No network, no new privileges, no core files. Fails closed: a worker that cannot drop the
// network does not run kernels.
bool EnterSandbox() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    std::fprintf(stderr, "tirtune-runner: PR_SET_NO_NEW_PRIVS: %s\n", std::strerror(errno));
    return false;
  }
  // An empty network namespace: only a loopback device, down. Root can make one directly; others
  // through a user namespace of their own, where they hold that right.
  if (unshare(CLONE_NEWNET) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    std::fprintf(stderr,
                 "tirtune-runner: cannot leave the network (unshare: %s); run the agent as root "
                 "or enable unprivileged user namespaces, or start it with --no-sandbox\n",
                 std::strerror(errno));
    return false;
  }
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  tirtune::offload::BoundOpenMpSpinning(argv);
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
    } else if (arg == "--sandbox") {
      if (!EnterSandbox()) return 1;
    } else if (arg == "--cuda-device" && i + 1 < argc) {
      std::string ordinal = argv[++i];
      if (ordinal.empty() || ordinal.size() > 4 ||
          ordinal.find_first_not_of("0123456789") != std::string::npos) {
        std::fprintf(stderr, "tirtune-runner: bad --cuda-device '%s'\n", ordinal.c_str());
        return 1;
      }
      tirtune::SetWorkerCudaDevice(std::atoi(ordinal.c_str()));
    } else {
      std::fprintf(stderr,
                   "usage: tirtune-runner [--cpus 0,1,...] [--sandbox] [--cuda-device N]\n");
      return 1;
    }
  }
  // Die with the tuner, even in the middle of a long kernel: a watchdog waits for the tuner's end
  // of the socket to close. (PR_SET_PDEATHSIG would fire when the tuner *thread* that spawned
  // this worker exits, not the tuner.)
  std::thread([] {
    for (;;) {
      pollfd p{STDIN_FILENO, POLLRDHUP, 0};
      int ready = poll(&p, 1, -1);
      if (ready > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) _exit(0);
      if (ready < 0 && errno != EINTR) sleep(1);  // e.g. ENOMEM: try again, do not die
    }
  }).detach();
  // A Ctrl-C at the terminal is for the tuner, which stops after its batch.
  std::signal(SIGINT, SIG_IGN);
  // Keep the protocol stream private: a kernel or library printing to stdout must not corrupt
  // the replies.
  std::signal(SIGPIPE, SIG_IGN);
  int out_fd = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  return tirtune::ServeRunRequests(STDIN_FILENO, out_fd);
}
