#include "jobs/checkpoint_env.h"

#include <algorithm>
#include <optional>

namespace dljob {
namespace {

// "--flag" and "--flag=value" set a flag; "--flag_more" does not.
bool SetsFlag(const std::vector<std::string>& command, std::string_view flag) {
  return std::any_of(command.begin() + 1, command.end(), [flag](std::string_view arg) {
    return arg == flag ||
           (arg.starts_with(flag) && arg.size() > flag.size() && arg[flag.size()] == '=');
  });
}

}  // namespace

std::vector<EnvVar> CheckpointEnv(const CheckpointSpec& checkpoint, const std::string& dir) {
  std::vector<EnvVar> env = {{kCheckpointDirEnv, dir}};
  auto add = [&env](const char* name, const std::optional<int64_t>& value) {
    if (value) env.push_back({name, std::to_string(*value)});
  };
  add(kCheckpointEveryStepsEnv, checkpoint.every_steps);
  add(kCheckpointEverySecondsEnv, checkpoint.every_seconds);
  add(kCheckpointKeepEnv, checkpoint.keep);
  return env;
}

bool IsDljobTrain(std::string_view program) {
  size_t slash = program.rfind('/');
  return program.substr(slash == std::string_view::npos ? 0 : slash + 1) == "dljob-train";
}

std::vector<std::string> WithCheckpointFlags(const std::vector<std::string>& command,
                                             const CheckpointSpec& checkpoint,
                                             const std::string& dir) {
  if (command.empty() || !IsDljobTrain(command[0])) return command;
  std::vector<std::string> out = command;
  auto add = [&](std::string_view flag, const std::string& value) {
    if (!SetsFlag(command, flag)) out.push_back(std::string(flag) + "=" + value);
  };
  add("--checkpoint_dir", dir);
  if (checkpoint.every_steps) {
    add("--checkpoint_every", std::to_string(*checkpoint.every_steps));
  } else if (checkpoint.every_seconds) {
    add("--checkpoint_every", "0");
  }
  if (checkpoint.every_seconds) {
    add("--checkpoint_every_seconds", std::to_string(*checkpoint.every_seconds));
  }
  if (checkpoint.keep) add("--checkpoint_keep", std::to_string(*checkpoint.keep));
  return out;
}

}  // namespace dljob
