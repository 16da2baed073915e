#include "cli/local/job_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobs/codec.h"

namespace dljob {
namespace fs = std::filesystem;
namespace {

Status OsError(const std::string& what, const std::string& path) {
  return Status::Unavailable(what + " \"" + path + "\": " + strerror(errno));
}

Status WriteFully(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OsError("cannot write", path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return OsError("cannot create", tmp);
  Status s = WriteFully(fd, content, tmp);
  if (s.ok() && fsync(fd) != 0) s = OsError("cannot sync", tmp);
  close(fd);
  if (s.ok() && rename(tmp.c_str(), path.c_str()) != 0) s = OsError("cannot replace", path);
  if (!s.ok()) unlink(tmp.c_str());
  return s;
}

}  // namespace

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
std::string JobStore::LogPath(const std::string& name) const { return JobDir(name) + "/output.log"; }
std::string JobStore::MetricsPath(const std::string& name) const {
  return JobDir(name) + "/metrics.jsonl";
}

Status JobStore::Create(const DLJob& job) {
  std::error_code ec;
  fs::create_directories(root_ + "/jobs", ec);
  if (ec) return Status::Unavailable("cannot create \"" + root_ + "/jobs\": " + ec.message());
  std::string dir = JobDir(job.metadata.name);
  if (mkdir(dir.c_str(), 0755) != 0) {
    if (errno == EEXIST) {
      return Status::AlreadyExists("job \"" + job.metadata.name + "\" already exists");
    }
    return OsError("cannot create", dir);
  }
  return Save(job);
}

Status JobStore::Save(const DLJob& job) {
  return WriteFileAtomically(JobDir(job.metadata.name) + "/job.json", EncodeJson(job) + "\n");
}

Result<DLJob> JobStore::Load(const std::string& name) const {
  std::string path = JobDir(name) + "/job.json";
  std::ifstream in(path);
  if (!in) {
    if (!fs::exists(JobDir(name))) return Status::NotFound("job \"" + name + "\" not found");
    return Status::Unavailable("cannot read \"" + path + "\"");
  }
  std::stringstream text;
  text << in.rdbuf();
  DecodeResult decoded = DecodeJson(text.str());
  if (!decoded.ok()) {
    return Status::Internal("record \"" + path + "\" is damaged: " + decoded.errors[0].ToString());
  }
  return decoded.job;
}

Result<std::vector<std::string>> JobStore::Names() const {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(root_ + "/jobs", ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return names;
    return Status::Unavailable("cannot list \"" + root_ + "/jobs\": " + ec.message());
  }
  for (const fs::directory_entry& entry : it) {
    if (entry.is_directory() && fs::exists(entry.path() / "job.json")) {
      names.push_back(entry.path().filename().string());
    }
  }
  return names;
}

Status JobStore::Remove(const std::string& name) {
  std::error_code ec;
  if (fs::remove_all(JobDir(name), ec) == 0 && !ec) {
    return Status::NotFound("job \"" + name + "\" not found");
  }
  if (ec) return Status::Unavailable("cannot remove \"" + JobDir(name) + "\": " + ec.message());
  return Status::Ok();
}

Status JobStore::WriteSupervisor(const std::string& name, const ProcessId& id) {
  return WriteFileAtomically(JobDir(name) + "/supervisor",
                             std::to_string(id.pid) + " " + std::to_string(id.start_ticks) + "\n");
}

std::optional<ProcessId> JobStore::ReadSupervisor(const std::string& name) const {
  std::ifstream in(JobDir(name) + "/supervisor");
  ProcessId id;
  if (!(in >> id.pid >> id.start_ticks)) return std::nullopt;
  return id;
}

Result<std::unique_ptr<LineAppender>> LineAppender::Open(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return OsError("cannot open", path);
  return std::unique_ptr<LineAppender>(new LineAppender(fd));
}

LineAppender::~LineAppender() { close(fd_); }

Status LineAppender::Append(std::string_view line) {
  std::string buf(line);
  buf += '\n';
  return WriteFully(fd_, buf, "log");
}

}  // namespace dljob
