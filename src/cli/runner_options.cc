// --runner and its companions, turned into a Runner.
#include "runner_options.h"

#include <fmt/core.h>

#include <fstream>

#include "tirtune/measure/remote_runner.h"

namespace tirtune::cli {

void RunnerCli::AddOptions(CLI::App* cmd) {
  cmd->add_option("--runner", runner,
                  "where candidates are measured: local (default) or a device pool's broker, "
                  "redis://[USER@]HOST:PORT")
      ->capture_default_str();
  cmd->add_option("--device-class", device_class,
                  "with a device pool: the class to measure on (see tirtune pool status); "
                  "default: the only live class of the target");
  cmd->add_option("--password-file", password_file,
                  "with a device pool: a file whose first line is the broker password "
                  "(default: TIRTUNE_BROKER_PASSWORD)");
  cmd->add_option("--key", key_file,
                  "with a device pool: sign jobs with this secret key (tirtune pool keygen)");
}

std::string BrokerPassword(const std::string& password_file, const GlobalOptions& global) {
  if (password_file.empty()) return global.broker_password;
  std::ifstream in(password_file);
  if (!in) TT_USER_ERROR("cannot read the password file '{}'", password_file);
  std::string password;
  std::getline(in, password);
  return password;
}

std::unique_ptr<Runner> RunnerCli::Make(const std::string& target, const RunnerConfig& local,
                                        const GlobalOptions& global) const {
  if (!remote()) {
    if (!device_class.empty() || !key_file.empty()) {
      TT_USER_ERROR("--device-class and --key go with a device pool (--runner redis://...)");
    }
    return std::make_unique<RunnerPool>(local);
  }
  RemoteRunnerConfig config;
  config.broker = ParseBrokerUrl(runner);
  config.broker.password = BrokerPassword(password_file, global);
  config.target = target;
  config.device_class = device_class;
  config.timeout_s = local.timeout_s;
  config.timer = local.timer;
  if (!key_file.empty()) config.key = pool::ReadSigningKey(key_file);
  if (config.key && config.key->secret_key.empty()) {
    TT_USER_ERROR("--key '{}' is a public key; jobs are signed with the secret one", key_file);
  }
  return std::make_unique<RemoteRunner>(std::move(config));
}

}  // namespace tirtune::cli
