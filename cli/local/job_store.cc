#include "cli/local/job_store.h"

#include <sstream>

#include "jobs/codec.h"

namespace dljob {

std::string JobStore::DefaultRoot(const std::map<std::string, std::string>& env) {
  auto xdg = env.find("XDG_STATE_HOME");
  if (xdg != env.end() && !xdg->second.empty() && xdg->second.front() == '/') {
    return xdg->second + "/dljob";
  }
  auto home = env.find("HOME");
  std::string base = home != env.end() && !home->second.empty() ? home->second : "/tmp";
  return base + "/.local/state/dljob";
}

std::string JobStore::JobDir(const std::string& name) const { return root_ + "/jobs/" + name; }
std::string JobStore::LogPath(const std::string& name) const {
  return JobDir(name) + "/output.log";
}
std::string JobStore::MetricsPath(const std::string& name) const {
  return JobDir(name) + "/metrics.jsonl";
}

Status JobStore::Create(const DLJob& job) {
  if (Status s = env_->CreateDirs(root_ + "/jobs"); !s.ok()) return s;
  Status made = env_->CreateDir(JobDir(job.metadata.name));
  if (made.code() == StatusCode::kAlreadyExists) {
    return Status::AlreadyExists("job \"" + job.metadata.name + "\" already exists");
  }
  if (!made.ok()) return made;
  return Save(job);
}

bool JobStore::Exists(const std::string& name) const { return env_->FileExists(JobDir(name)); }

Status JobStore::Save(const DLJob& job) {
  return env_->WriteFileAtomically(JobDir(job.metadata.name) + "/job.json", EncodeJson(job) + "\n");
}

Result<DLJob> JobStore::Load(const std::string& name) const {
  std::string path = JobDir(name) + "/job.json";
  Result<std::string> text = env_->ReadFile(path);
  if (!text.ok()) {
    if (!env_->FileExists(JobDir(name))) return Status::NotFound("job \"" + name + "\" not found");
    return text.status();
  }
  DecodeResult decoded = DecodeJson(*text);
  if (!decoded.ok()) {
    return Status::Internal("record \"" + path + "\" is damaged: " + decoded.errors[0].ToString());
  }
  return decoded.job;
}

Result<std::vector<std::string>> JobStore::Names() const {
  Result<std::vector<std::string>> entries = env_->ListDir(root_ + "/jobs");
  if (!entries.ok()) {
    if (entries.status().code() == StatusCode::kNotFound) return std::vector<std::string>{};
    return entries.status();
  }
  std::vector<std::string> names;
  for (const std::string& entry : *entries) {
    if (env_->FileExists(JobDir(entry) + "/job.json")) names.push_back(entry);
  }
  return names;
}

Status JobStore::Remove(const std::string& name) {
  Status s = env_->RemoveAll(JobDir(name));
  if (s.code() == StatusCode::kNotFound) return Status::NotFound("job \"" + name + "\" not found");
  return s;
}

Status JobStore::WriteSupervisor(const std::string& name, const ProcessId& id) {
  return env_->WriteFileAtomically(
      JobDir(name) + "/supervisor",
      std::to_string(id.pid) + " " + std::to_string(id.start_ticks) + "\n");
}

std::optional<ProcessId> JobStore::ReadSupervisor(const std::string& name) const {
  Result<std::string> text = env_->ReadFile(JobDir(name) + "/supervisor");
  if (!text.ok()) return std::nullopt;
  std::istringstream in(*text);
  ProcessId id;
  if (!(in >> id.pid >> id.start_ticks)) return std::nullopt;
  return id;
}

Result<std::unique_ptr<LineAppender>> JobStore::OpenLog(const std::string& name) {
  return LineAppender::Open(LogPath(name), *env_);
}

Result<std::unique_ptr<LineAppender>> JobStore::OpenMetrics(const std::string& name) {
  return LineAppender::Open(MetricsPath(name), *env_);
}

Result<std::unique_ptr<LineAppender>> LineAppender::Open(const std::string& path, Env& env) {
  Result<std::unique_ptr<AppendableFile>> file = env.NewAppendableFile(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<LineAppender>(new LineAppender(std::move(*file)));
}

Status LineAppender::Append(std::string_view line) {
  std::string buf(line);
  buf += '\n';
  return file_->Append(buf);  // one write: the line lands whole
}

}  // namespace dljob
