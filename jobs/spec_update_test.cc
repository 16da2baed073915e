// jobs/spec_update.h: every kind of field against every phase a stored job can be in, as one
// table; the reasons' wording; and that defaults and suspension are taken into account.
#include "jobs/spec_update.h"

#include <functional>
#include <map>

#include <gtest/gtest.h>

#include "jobs/codec.h"

namespace dljob {
namespace {

DLJob Job(JobPhase phase) {
  DecodeResult d = ReadJobFile("examples/resnet-job.yaml");
  EXPECT_TRUE(d.ok()) << JoinFieldErrors(d.errors);
  d.job.status.phase = phase;
  return d.job;
}

struct Change {
  const char* path;
  std::function<void(DLJobSpec&)> apply;
};

const std::vector<Change>& Changes() {
  static const std::vector<Change> kChanges = {
      {"spec.image", [](DLJobSpec& s) { s.image += "-v2"; }},
      {"spec.command", [](DLJobSpec& s) { s.command.push_back("--num_epochs=2"); }},
      {"spec.gpus", [](DLJobSpec& s) { s.gpus = 8; }},
      {"spec.gpusPerWorker", [](DLJobSpec& s) { s.gpus_per_worker = 4; }},
      {"spec.elastic",
       [](DLJobSpec& s) {
         s.elastic = ElasticSpec{8, 16};
       }},
      {"spec.data", [](DLJobSpec& s) { s.data.clear(); }},
      {"spec.resources.cpuPerGpu", [](DLJobSpec& s) { s.resources.cpu_per_gpu = "3"; }},
      {"spec.mpi.sshPort", [](DLJobSpec& s) { s.mpi.ssh_port = 2200; }},
      {"spec.scheduling.topology", [](DLJobSpec& s) { s.scheduling.topology = "Spread"; }},
      {"spec.scheduling.queue", [](DLJobSpec& s) { s.scheduling.queue = "team-b"; }},
      {"spec.scheduling.priority", [](DLJobSpec& s) { s.scheduling.priority = 7; }},
      {"spec.runPolicy.backoffLimit", [](DLJobSpec& s) { s.run_policy.backoff_limit = 9; }},
      {"spec.runPolicy.activeDeadlineSeconds",
       [](DLJobSpec& s) { s.run_policy.active_deadline_seconds = 60; }},
      {"spec.runPolicy.ttlSecondsAfterFinished",
       [](DLJobSpec& s) { s.run_policy.ttl_seconds_after_finished = 5; }},
  };
  return kChanges;
}

// phase → the paths refused there. Unset (no status yet) refuses nothing.
const std::map<JobPhase, std::vector<std::string>>& Refused() {
  static const std::vector<std::string> kGang = {"spec.gpus", "spec.gpusPerWorker", "spec.elastic",
                                                 "spec.mpi.sshPort"};
  static const std::vector<std::string> kBound = [] {
    std::vector<std::string> v = kGang;
    v.push_back("spec.scheduling.queue");
    return v;
  }();
  static const std::vector<std::string> kFinished = [] {
    std::vector<std::string> v = kBound;
    for (const char* p : {"spec.image", "spec.command", "spec.data", "spec.resources.cpuPerGpu",
                          "spec.scheduling.topology", "spec.scheduling.priority",
                          "spec.runPolicy.backoffLimit", "spec.runPolicy.activeDeadlineSeconds"}) {
      v.push_back(p);
    }
    return v;
  }();
  static const std::map<JobPhase, std::vector<std::string>> kRefused = {
      {JobPhase::kUnset, {}},
      {JobPhase::kSuspended, kGang},
      {JobPhase::kQueued, kGang},
      {JobPhase::kScheduled, kBound},
      {JobPhase::kRunning, kBound},
      {JobPhase::kRestarting, kBound},
      {JobPhase::kSucceeded, kFinished},
      {JobPhase::kFailed, kFinished},
      {JobPhase::kInterrupted, kFinished},
  };
  return kRefused;
}

TEST(SpecUpdate, EveryKindOfFieldInEveryPhase) {
  ASSERT_EQ(Refused().size(), AllPhaseNames().size() + 1);  // every phase, and none yet
  for (const auto& [phase, refused] : Refused()) {
    for (const Change& change : Changes()) {
      DLJob old_job = Job(phase);
      DLJob new_job = old_job;
      change.apply(new_job.spec);
      ASSERT_EQ(ChangedSpecFields(old_job, new_job), std::vector<std::string>{change.path});
      FieldErrors errors = CheckSpecUpdate(old_job, new_job);
      bool want_refused = std::find(refused.begin(), refused.end(), change.path) != refused.end();
      SCOPED_TRACE(std::string(PhaseName(phase)) + " " + change.path);
      if (!want_refused) {
        EXPECT_TRUE(errors.empty()) << JoinFieldErrors(errors);
        continue;
      }
      ASSERT_EQ(errors.size(), 1u);
      EXPECT_EQ(errors[0].path, change.path);
    }
  }
}

TEST(SpecUpdate, ReasonsSayWhyAndWhatToDo) {
  DLJob old_job = Job(JobPhase::kRunning);
  DLJob new_job = old_job;
  new_job.spec.image = "other:1";  // applied by a restart: not refused
  new_job.spec.gpus_per_worker = 4;
  new_job.spec.scheduling.queue = "team-b";
  new_job.spec.run_policy.backoff_limit = 1;
  EXPECT_EQ(JoinFieldErrors(CheckSpecUpdate(old_job, new_job)),
            "spec.gpusPerWorker: cannot change once the job has started (it is Running): its "
            "workers, ranks and hostfile were made from it; delete the job and create it again "
            "with the new value\n"
            "spec.scheduling.queue: cannot change while the job is Running (its GPUs are counted "
            "in its queue); set spec.runPolicy.suspend to true first (in this update or before), "
            "then change it: the job starts again with the new spec, from the start (no "
            "spec.checkpoint)");
  new_job.spec.checkpoint.emplace().source = "pvc:ckpt";
  new_job.spec.gpus_per_worker.reset();
  EXPECT_EQ(JoinFieldErrors(CheckSpecUpdate(old_job, new_job)),
            "spec.scheduling.queue: cannot change while the job is Running (its GPUs are counted "
            "in its queue); set spec.runPolicy.suspend to true first (in this update or before), "
            "then change it: the job starts again with the new spec, from its checkpoint");
  DLJob done = Job(JobPhase::kSucceeded);
  DLJob edited = done;
  edited.spec.image = "other:1";
  EXPECT_EQ(JoinFieldErrors(CheckSpecUpdate(done, edited)),
            "spec.image: cannot change once the job has Succeeded; it will not run again: create "
            "a new job instead");
}

// Suspending in the same update lets everything change but the gang's shape.
TEST(SpecUpdate, AnUpdateThatSuspendsMayChangeAllButTheGang) {
  for (JobPhase phase : {JobPhase::kQueued, JobPhase::kRunning, JobPhase::kRestarting}) {
    DLJob old_job = Job(phase);
    DLJob new_job = old_job;
    new_job.spec.run_policy.suspend = true;
    for (const Change& change : Changes()) change.apply(new_job.spec);
    std::vector<std::string> refused;
    for (const FieldError& e : CheckSpecUpdate(old_job, new_job)) refused.push_back(e.path);
    EXPECT_EQ(refused, (std::vector<std::string>{"spec.elastic", "spec.gpus", "spec.gpusPerWorker",
                                                 "spec.mpi.sshPort"}))
        << PhaseName(phase);
  }
}

// Writing out a default, or metadata and status changes, is no spec change.
TEST(SpecUpdate, DefaultsAndOtherPartsAreNoChange) {
  DLJob old_job = Job(JobPhase::kRunning);
  old_job.spec.mpi.ssh_port.reset();
  DLJob new_job = old_job;
  new_job.spec.mpi.ssh_port = 2222;  // the default
  new_job.metadata.labels["team"] = "a";
  new_job.status.restarts = 3;
  EXPECT_TRUE(ChangedSpecFields(old_job, new_job).empty());
  EXPECT_TRUE(CheckSpecUpdate(old_job, new_job).empty());
}

}  // namespace
}  // namespace dljob
