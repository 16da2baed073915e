#include "cli/local/local_backend.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/random.h"
#include "base/time_format.h"
#include "cli/local/data_fetch.h"
#include "cli/local/local_volumes.h"
#include "cli/local/log_follower.h"
#include "jobs/conditions.h"
#include "jobs/generated_name.h"

extern char** environ;

namespace dljob {
namespace fs = std::filesystem;
namespace {

std::string NewUid() {
  Rng gen(NondeterministicSeed());
  char buf[40];
  uint64_t a = gen(), b = gen();
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>(a >> 16) & 0xffff, static_cast<unsigned>(a) & 0xfff,
                (static_cast<unsigned>(b >> 48) & 0x3fff) | 0x8000,
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

int CountGpus() {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    std::string f = entry.path().filename().string();
    if (f.size() > 6 && f.rfind("nvidia", 0) == 0 &&
        std::all_of(f.begin() + 6, f.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      ++n;
    }
  }
  return n;
}

}  // namespace

LocalMachine LocalBackend::ProbeMachine() {
  LocalMachine m;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) m.inherited_env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  m.gpus = CountGpus();
  m.cpus = std::max(1u, std::thread::hardware_concurrency());
  m.is_root = geteuid() == 0;
  std::error_code ec;
  m.self_dir = fs::read_symlink("/proc/self/exe", ec).parent_path().string();
  std::string path = m.inherited_env.count("PATH") ? m.inherited_env["PATH"] : "/usr/bin:/bin";
  for (size_t start = 0; start <= path.size();) {
    size_t colon = path.find(':', start);
    if (colon == std::string::npos) colon = path.size();
    m.path_dirs.push_back(path.substr(start, colon - start));
    start = colon + 1;
  }
  std::ifstream proc_mounts("/proc/mounts");
  std::stringstream mounts;
  mounts << proc_mounts.rdbuf();
  m.mounts = ParseProcMounts(mounts.str());
  auto pvc = m.inherited_env.find("DLJOB_PVC_ROOT");
  if (pvc != m.inherited_env.end() && !pvc->second.empty()) {
    m.pvc_root = pvc->second;
  } else {
    auto data = m.inherited_env.find("XDG_DATA_HOME");
    std::string home = m.inherited_env.count("HOME") ? m.inherited_env["HOME"] : "/tmp";
    m.pvc_root = (data != m.inherited_env.end() && !data->second.empty() ? data->second
                                                                         : home + "/.local/share") +
                 "/dljob/pvc";
  }
  m.is_executable = [](const std::string& p) {
    std::error_code e;
    return fs::is_regular_file(p, e) && access(p.c_str(), X_OK) == 0;
  };
  return m;
}

Result<DLJob> LocalBackend::Submit(const DLJob& job, JobObserver& observer) {
  if (!job.metadata.name.empty()) return SubmitNamed(job, observer);
  // A generateName: drawn as the API server draws, skipping the names of existing jobs. A name
  // another submit takes between the draw and the record (Create is the arbiter) is drawn again.
  const std::string& prefix = job.metadata.generate_name;
  if (prefix.empty()) {
    return Status::InvalidArgument("the job has neither metadata.name nor metadata.generateName");
  }
  auto taken = [this](const std::string& name) { return store_.Exists(name); };
  DLJob named = job;
  for (int race = 0; race < kGenerateNameAttempts; ++race) {
    std::optional<std::string> name = DrawFreeName(prefix, names_, taken);
    if (!name) break;
    named.metadata.name = *name;
    Result<DLJob> done = SubmitNamed(named, observer, /*announce=*/true);
    if (done.ok() || done.status().code() != StatusCode::kAlreadyExists) return done;
  }
  return Status::AlreadyExists("no free job name starting \"" + prefix +
                               "\": every name drawn was taken by another job");
}

Result<DLJob> LocalBackend::SubmitNamed(const DLJob& spec_job, JobObserver& observer,
                                        bool announce) {
  Result<LocalPlan> plan = PlanLocalRun(spec_job, machine_);
  if (!plan.ok()) return plan.status();
  std::error_code exists_ec;
  if (!plan->fetches.empty() && fs::exists(store_.JobDir(spec_job.metadata.name), exists_ec)) {
    // Refused before a possibly long download rather than after it (Create checks again).
    return Status::AlreadyExists("job \"" + spec_job.metadata.name + "\" already exists");
  }
  FetchOptions fetch;
  if (options_.interrupt_requested) {
    fetch.interrupted = [this] { return options_.interrupt_requested() != 0; };
  }
  const std::map<std::string, std::string>& env = machine_.inherited_env;
  storage::EnvLookup lookup = [&env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  if (Status s = FetchData(plan->fetches, lookup, observer, clock_, fetch); !s.ok()) return s;
  for (const LocalVolume& v : plan->volumes) {
    std::error_code ec;
    if (!fs::exists(v.local_path, ec)) {
      return Status::FailedPrecondition("data volume \"" + v.name + "\": " + v.local_path +
                                        " does not exist on this machine");
    }
  }
  if (plan->checkpoint) {  // the first run of a job makes it; later runs resume from it
    std::error_code ec;
    fs::create_directories(plan->checkpoint->local_path, ec);
    if (ec || !fs::is_directory(plan->checkpoint->local_path, ec)) {
      return Status::FailedPrecondition("spec.checkpoint: cannot create " +
                                        plan->checkpoint->local_path + ": " +
                                        (ec ? ec.message() : "not a directory"));
    }
  }
  DLJob job = spec_job;
  std::string now = FormatRfc3339(clock_.Now());
  job.metadata.creation_timestamp = now;
  job.metadata.uid = NewUid();
  job.status = DLJobStatus{};
  TransitionTo(job.status, JobPhase::kQueued, "Submitted", "accepted by the local runner", now);
  if (Status s = store_.Create(job); !s.ok()) return s;
  if (announce) {  // the user did not name it: say its name while it runs, not only at the end
    const std::string& name = job.metadata.name;
    observer.OnNotice("the job is named " + name + "   status: dljob get " + name +
                      "   logs: dljob logs -f " + name);
  }
  JobSupervisor supervisor(store_, observer, clock_, options_);
  return supervisor.Run(std::move(job), *plan);
}

Result<DLJob> LocalBackend::LoadChecked(const std::string& name) {
  Result<DLJob> job = store_.Load(name);
  if (!job.ok() || IsFinished(job->status.phase)) return job;
  std::optional<ProcessId> supervisor = store_.ReadSupervisor(name);
  if (supervisor && IsAlive(*supervisor)) return job;
  // Queued with no supervisor file yet is a submit in its first moments; give it a grace period.
  if (!supervisor) {
    auto created = ParseRfc3339(job->metadata.creation_timestamp);
    if (created && clock_.Now() - *created < std::chrono::seconds(30)) {
      return job;
    }
  }
  TransitionTo(job->status, JobPhase::kFailed, "SupervisorLost",
               "the dljob process running this job exited before the job finished" +
                   (supervisor ? " (pid " + std::to_string(supervisor->pid) + ")" : std::string()) +
                   "; its logs are kept: dljob logs " + name,
               FormatRfc3339(clock_.Now()));
  store_.Save(*job);  // best effort: the corrected view is returned either way
  return job;
}

Result<std::vector<DLJob>> LocalBackend::List() {
  Result<std::vector<std::string>> names = store_.Names();
  if (!names.ok()) return names.status();
  std::vector<DLJob> jobs;
  for (const std::string& name : *names) {
    Result<DLJob> job = LoadChecked(name);
    if (job.ok()) jobs.push_back(std::move(*job));  // a job deleted meanwhile is simply gone
  }
  std::sort(jobs.begin(), jobs.end(), [](const DLJob& a, const DLJob& b) {
    if (a.metadata.creation_timestamp != b.metadata.creation_timestamp) {
      return a.metadata.creation_timestamp > b.metadata.creation_timestamp;
    }
    return a.metadata.name < b.metadata.name;
  });
  return jobs;
}

Result<DLJob> LocalBackend::Get(const std::string& name) { return LoadChecked(name); }

Status LocalBackend::Logs(const std::string& name, const LogOptions& options, std::ostream& out) {
  Result<DLJob> job = LoadChecked(name);
  if (!job.ok()) return job.status();
  auto finished = [this, &name] {
    Result<DLJob> j = LoadChecked(name);
    return !j.ok() || IsFinished(j->status.phase);
  };
  return FollowLog(store_.LogPath(name), options, finished, clock_, out);
}

Status LocalBackend::Delete(const std::string& name) {
  Result<DLJob> job = LoadChecked(name);
  if (!job.ok()) return job.status();
  std::optional<ProcessId> supervisor = store_.ReadSupervisor(name);
  if (!IsFinished(job->status.phase) && supervisor && IsAlive(*supervisor) &&
      supervisor->pid != getpid()) {
    kill(supervisor->pid, SIGTERM);
    const Clock::MonotonicTime deadline =
        clock_.MonotonicNow() + options_.kill_grace + std::chrono::seconds(5);
    while (IsAlive(*supervisor) && clock_.MonotonicNow() < deadline) {
      clock_.SleepFor(std::chrono::milliseconds(100));
    }
    if (IsAlive(*supervisor)) {
      return Status::Unavailable("job \"" + name + "\" is still stopping (dljob pid " +
                                 std::to_string(supervisor->pid) + "); try again shortly");
    }
  }
  return store_.Remove(name);
}

}  // namespace dljob
