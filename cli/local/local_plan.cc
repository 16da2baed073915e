#include "cli/local/local_plan.h"

#include <algorithm>
#include <cctype>

#include "cli/local/local_volumes.h"
#include "jobs/checkpoint_env.h"

namespace dljob {
namespace {

Result<std::string> FindProgram(const std::string& program, const LocalMachine& m) {
  if (program.find('/') != std::string::npos) {
    if (m.is_executable(program)) return program;
    return Status::NotFound("spec.command[0]: \"" + program + "\" is not an executable file");
  }
  std::vector<std::string> dirs;
  if (!m.self_dir.empty()) dirs.push_back(m.self_dir);
  dirs.insert(dirs.end(), m.path_dirs.begin(), m.path_dirs.end());
  for (const std::string& dir : dirs) {
    std::string candidate = JoinPath(dir.empty() ? "." : dir, program);
    if (m.is_executable(candidate)) return candidate;
  }
  return Status::NotFound("spec.command[0]: program \"" + program + "\" not found next to dljob (" +
                          m.self_dir + ") or on PATH");
}

}  // namespace

std::string RewriteMountedPath(const std::string& value, const std::string& mount_path,
                               const std::string& local_path) {
  std::string mount = mount_path;
  while (mount.size() > 1 && mount.back() == '/') mount.pop_back();
  auto rewrite_at = [&](size_t start) -> std::string {
    std::string_view rest(value);
    rest.remove_prefix(start);
    if (rest.substr(0, mount.size()) != mount) return value;
    if (rest.size() > mount.size() && rest[mount.size()] != '/') return value;
    return value.substr(0, start) + local_path + std::string(rest.substr(mount.size()));
  };
  std::string rewritten = rewrite_at(0);
  if (rewritten != value) return rewritten;
  size_t eq = value.find('=');
  return eq == std::string::npos ? value : rewrite_at(eq + 1);
}

std::string DataEnvName(const std::string& volume_name) {
  std::string out = "DLJOB_DATA_";
  for (char c : volume_name) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  }
  return out;
}

Result<LocalPlan> PlanLocalRun(const DLJob& job, const LocalMachine& m) {
  const DLJobSpec& spec = job.spec;
  LocalPlan plan;
  plan.ranks = static_cast<int>(spec.gpus.value_or(1));
  if (m.gpus == 0) {
    plan.device = "cpu";
    plan.notices.push_back("no GPU on this machine: the " + std::to_string(plan.ranks) +
                           " ranks run on CPU");
  } else if (m.gpus < plan.ranks) {
    return Status::FailedPrecondition(
        "spec.gpus: " + std::to_string(plan.ranks) + " GPUs requested but this machine has " +
        std::to_string(m.gpus) + "; lower spec.gpus or use a cluster");
  } else {
    plan.device = "cuda";
  }

  for (size_t i = 0; i < spec.data.size(); ++i) {
    Result<ResolvedVolume> v = ResolveLocalVolume(spec.data[i], i, m);
    if (!v.ok()) return v.status();
    plan.volumes.push_back(v->volume);
    if (v->fetch) plan.fetches.push_back(*v->fetch);
  }
  if (spec.checkpoint) {
    Result<LocalVolume> checkpoint = ResolveCheckpointVolume(*spec.checkpoint, m);
    if (!checkpoint.ok()) return checkpoint.status();
    plan.checkpoint = *checkpoint;
  }
  auto rewrite = [&](std::string s) {
    for (const LocalVolume& v : plan.volumes) s = RewriteMountedPath(s, v.mount_path, v.local_path);
    if (const std::optional<LocalVolume>& c = plan.checkpoint) {
      s = RewriteMountedPath(s, c->mount_path, c->local_path);
    }
    return s;
  };

  if (spec.command.empty()) return Status::InvalidArgument("spec.command: must not be empty");
  Result<std::string> program = FindProgram(spec.command[0], m);
  if (!program.ok()) return program.status();
  const std::vector<std::string> command =
      spec.checkpoint
          ? WithCheckpointFlags(spec.command, *spec.checkpoint, plan.checkpoint->local_path)
          : spec.command;

  plan.argv = {m.mpirun};
  if (m.is_root) plan.argv.push_back("--allow-run-as-root");
  if (plan.ranks > m.cpus) plan.argv.push_back("--oversubscribe");
  // Shared memory between ranks and loopback for the launcher: a local job never touches the
  // network. --tag-output lets the supervisor attribute every line to its rank.
  for (const char* a : {"--tag-output", "--bind-to", "none", "--mca", "btl", "self,vader", "--mca",
                        "oob_tcp_if_include", "lo"}) {
    plan.argv.push_back(a);
  }
  plan.argv.push_back("-np");
  plan.argv.push_back(std::to_string(plan.ranks));
  plan.argv.push_back(*program);
  for (size_t i = 1; i < command.size(); ++i) plan.argv.push_back(rewrite(command[i]));

  plan.env = m.inherited_env;
  if (!plan.env.count("OMP_NUM_THREADS")) {
    plan.env["OMP_NUM_THREADS"] = std::to_string(std::max(1, m.cpus / std::max(1, plan.ranks)));
  }
  plan.env["DLJOB_JOB_NAME"] = job.metadata.name;
  plan.env["DLJOB_DEVICE"] = plan.device;
  for (const LocalVolume& v : plan.volumes) plan.env[DataEnvName(v.name)] = v.local_path;
  for (const EnvVar& e : spec.env) plan.env[e.name] = rewrite(e.value);
  if (spec.checkpoint) {
    for (const EnvVar& e : CheckpointEnv(*spec.checkpoint, plan.checkpoint->local_path)) {
      plan.env[e.name] = e.value;
    }
  }
  plan.working_dir = rewrite(spec.working_dir);
  return plan;
}

}  // namespace dljob
