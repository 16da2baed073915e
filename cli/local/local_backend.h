// LocalBackend: the embedded default. Runs DLJobs on this machine through mpirun.
//
// Submit plans the run (local_plan.h) before recording anything, so a job that cannot run here
// (missing program, an unmounted nas:// source, too many GPUs) is refused with the reason and
// leaves no record. It then fills the data caches the plan needs (data_fetch.h: oss:// sources,
// entries with a cache), also before recording, so a failed download leaves no record either.
// Then it records the job (job_store.h) and supervises it to the end (job_supervisor.h).
// A job with no name is named as the API server names one (generated_name.h): its generateName
// and 5 random characters, drawn again when a job of that name exists, up to 8 names; the name is
// announced (OnNotice) with the commands that follow the job before it runs.
// Readers (List/Get) notice a job whose supervising dljob process died without finishing it and
// mark it Failed with reason SupervisorLost, so the record never claims a job runs when nothing
// runs it. Delete of a running job asks its supervisor to stop it (SIGTERM) and waits.
//
// Time (stamps, the submit grace period, Delete's wait) comes from the injected Clock.
//
// One LocalBackend per process; not thread-safe. The clock must outlive the backend.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "base/clock.h"
#include "base/random.h"
#include "cli/backend/backend.h"
#include "cli/local/job_store.h"
#include "cli/local/job_supervisor.h"
#include "cli/local/local_plan.h"

namespace dljob {

class LocalBackend : public Backend {
 public:
  LocalBackend(JobStore store, LocalMachine machine, SupervisorOptions options, Clock& clock)
      : store_(std::move(store)),
        machine_(std::move(machine)),
        options_(std::move(options)),
        clock_(clock) {
    if (machine_.cache_root.empty()) machine_.cache_root = store_.root() + "/cache";
  }

  // The machine as it is: environment, GPUs (/dev/nvidiaN), cores, where dljob lives, mounts.
  static LocalMachine ProbeMachine();

  std::string Name() const override { return "local"; }
  Result<DLJob> Submit(const DLJob& job, JobObserver& observer) override;
  Result<std::vector<DLJob>> List() override;
  Result<DLJob> Get(const std::string& name) override;
  Status Logs(const std::string& name, const LogOptions& options, std::ostream& out) override;
  Status Delete(const std::string& name) override;

 private:
  // Submit for a job with a name; `announce`: tell the observer the name once it is recorded.
  // kAlreadyExists comes only before anything runs (the name checked before a fetch, the record's
  // creation), so a generated name may be drawn again after it.
  Result<DLJob> SubmitNamed(const DLJob& job, JobObserver& observer, bool announce = false);
  // Loads a record, correcting it first if its supervisor is gone.
  Result<DLJob> LoadChecked(const std::string& name);

  JobStore store_;
  LocalMachine machine_;
  SupervisorOptions options_;
  Clock& clock_;
  Rng names_{NondeterministicSeed()};  // the random part of generated names
};

}  // namespace dljob
