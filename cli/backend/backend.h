// Backend: where dljob runs jobs. The CLI talks only to this interface.
//
// Two implementations: LocalBackend (local/local_backend.h) runs a job on this machine through
// mpirun and keeps its record under the state directory; KubeBackend (kube/kube_backend.h)
// creates DLJob objects in a cluster. `dljob list|get|logs|delete|top` read either; which one a
// command uses is decided in backend_choice.h. `dljob top nodes` and `dljob queue` read a cluster
// only, through Cluster().
//
// A Backend is used from one thread. Objects passed in are not retained beyond the call.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cli/backend/cluster_reader.h"
#include "jobs/dljob_types.h"

namespace dljob {

// Receives what a running job produces, for the terminal. Called on the submitting thread.
class JobObserver {
 public:
  virtual ~JobObserver() = default;
  // One line of the job's output (without newline). rank is -1 for the launcher's own lines.
  virtual void OnOutput(int rank, bool is_stderr, std::string_view line) = 0;
  // The job's record as it is now: after every change (phase, throughput, …) and about once a
  // second while it runs. Called at most a few times per second.
  virtual void OnUpdate(const DLJob& job) = 0;
  // A note for the user about how the job runs ("no GPU on this machine: 2 ranks on CPU").
  virtual void OnNotice(std::string_view message) = 0;
};

struct LogOptions {
  bool follow = false;      // keep printing new lines until the job finishes
  std::optional<int> rank;  // only this rank's lines, without the rank tag
  // Where a note goes when less than the whole log can be printed (the user's stderr); none when
  // null. Must outlive the call.
  std::ostream* notes = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string Name() const = 0;  // "local", "kubernetes"
  // The namespace jobs are read from, and created in when they name none; "" for a backend
  // without namespaces (local).
  virtual std::string Namespace() const { return ""; }

  // Runs `job` (already defaulted and validated). The local backend runs it to completion and
  // returns the final record; a cluster backend returns once the job is created. A job with no
  // name has a metadata.generateName: the backend (or its API server) names it that prefix and
  // random characters (generated_name.h), and the record returned carries the name. Fails with
  // kAlreadyExists when a job of that name exists, or when every name drawn was taken.
  virtual Result<DLJob> Submit(const DLJob& job, JobObserver& observer) = 0;

  // All jobs, newest first.
  virtual Result<std::vector<DLJob>> List() = 0;
  virtual Result<DLJob> Get(const std::string& name) = 0;
  virtual Status Logs(const std::string& name, const LogOptions& options, std::ostream& out) = 0;
  // Stops the job if it runs, then removes it and its record.
  virtual Status Delete(const std::string& name) = 0;

  // The cluster's nodes, queues and jobs everywhere (cluster_reader.h), owned by the backend;
  // null for a backend without a cluster (local).
  virtual ClusterReader* Cluster() { return nullptr; }
};

using BackendPtr = std::unique_ptr<Backend>;

}  // namespace dljob
