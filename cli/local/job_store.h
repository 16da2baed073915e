// JobStore: the local backend's durable record of every job.
//
// Layout under the root (${XDG_STATE_HOME:-~/.local/state}/dljob):
//   jobs/<name>/job.json       the DLJob, spec and status; replaced atomically (temp file, fsync,
//                              rename), so a reader or a crash sees the old or the new record,
//                              never a torn one
//   jobs/<name>/output.log     every line the job printed, tagged "[rank N] " (log_lines.h)
//   jobs/<name>/metrics.jsonl  every metric line, as {"time":…, "metric":{…}}
//   jobs/<name>/supervisor     "<pid> <start ticks>" of the dljob process running the job
// Creating a job is an atomic mkdir, so two submits of one name cannot both win.
//
// Files are read and written through an Env (base/env.h): the real filesystem by default, an
// in-memory one in tests. Methods are safe to call from several processes at once (the
// filesystem arbitrates); a JobStore object itself is not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "cli/local/process.h"
#include "jobs/dljob_types.h"

namespace dljob {

class LineAppender;

class JobStore {
 public:
  // `env` must outlive the store.
  explicit JobStore(std::string root, Env& env = DefaultEnv())
      : root_(std::move(root)), env_(&env) {}

  // ${XDG_STATE_HOME}/dljob, else ${HOME}/.local/state/dljob, from the given environment.
  static std::string DefaultRoot(const std::map<std::string, std::string>& env);

  const std::string& root() const { return root_; }
  std::string JobDir(const std::string& name) const;
  std::string LogPath(const std::string& name) const;
  std::string MetricsPath(const std::string& name) const;

  // Makes the job's directory and first record. kAlreadyExists if the name is taken.
  Status Create(const DLJob& job);
  bool Exists(const std::string& name) const;  // a job of that name has a record (or is starting)
  Status Save(const DLJob& job);               // REQUIRES: Create succeeded for job.metadata.name
  Result<DLJob> Load(const std::string& name) const;
  Result<std::vector<std::string>> Names() const;
  Status Remove(const std::string& name);

  Status WriteSupervisor(const std::string& name, const ProcessId& id);
  std::optional<ProcessId> ReadSupervisor(const std::string& name) const;

  // The job's output.log and metrics.jsonl, opened for appending (created when missing).
  // REQUIRES: Create succeeded for `name`.
  Result<std::unique_ptr<LineAppender>> OpenLog(const std::string& name);
  Result<std::unique_ptr<LineAppender>> OpenMetrics(const std::string& name);

 private:
  std::string root_;
  Env* env_;
};

// An append-only file written one whole line per Append (Env's AppendableFile: one write(2) on
// disk), so concurrent readers (dljob logs -f) never see half a line and a crash loses at most the
// line being written.
class LineAppender {
 public:
  // `env` must outlive the appender.
  static Result<std::unique_ptr<LineAppender>> Open(const std::string& path,
                                                    Env& env = DefaultEnv());
  Status Append(std::string_view line);  // adds the newline

 private:
  explicit LineAppender(std::unique_ptr<AppendableFile> file) : file_(std::move(file)) {}
  std::unique_ptr<AppendableFile> file_;
};

}  // namespace dljob
