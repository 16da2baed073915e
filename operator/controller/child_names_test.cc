// The DLJob name rule (jobs/validation.h CheckJobName) against what a real API server accepts:
// every child the production builders make for a job is held against the server's own rules
// (testing/server_name_rules.h). A name passes validation exactly when every child's names pass
// the server's — swept over name lengths around each limit, over worker counts where the largest
// worker index gains a digit, and over every byte at the first, middle and last position.
#include "jobs/child_names.h"

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"
#include "jobs/defaults.h"
#include "jobs/validation.h"
#include "kube/testing/fake_api.h"
#include "operator/controller/builders.h"
#include "operator/controller/events.h"
#include "operator/controller/testing/server_name_rules.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;
using testing::ServerNameViolations;

DLJob JobNamed(const std::string& name, int64_t workers) {
  DLJob job;
  job.metadata.name = name;
  job.metadata.namespace_ = std::string(63, 'n');  // the longest a namespace can be
  job.metadata.uid = "uid-1";
  job.spec.image = "img";
  job.spec.command = {"train"};
  job.spec.gpus = workers;
  job.spec.gpus_per_worker = 1;
  ApplyDefaults(job);
  return job;
}

// Every object the operator makes for the job, as the production builders make it (the first
// and the last worker; the others differ only in a shorter index).
std::vector<Json> Children(const DLJob& job) {
  BuildOptions options;
  std::vector<Json> out = {NewWorkerService(job), NewConfigMap(job, options),
                           NewSshSecret(job, "private", "public")};
  int64_t workers = WorkerCount(job);
  for (int64_t i : {int64_t{0}, workers - 1}) {
    Result<Json> pod = NewWorkerPod(job, i, options);
    EXPECT_TRUE(pod.ok()) << pod.status().message();
    if (pod.ok()) out.push_back(*pod);
  }
  std::vector<std::string> ips(static_cast<size_t>(workers), "10.244.0.7");
  out.push_back(NewLauncherPod(job, options, ips));
  kube::testing::FakeApi api;
  dljob::testing::FakeClock clock;
  EventRecorder(api, clock).Record(job, "Normal", "Created", "made");
  out.push_back(api.Calls().at(0).body);
  return out;
}

std::vector<std::string> Violations(const DLJob& job) {
  std::vector<std::string> all;
  for (const Json& child : Children(job)) {
    for (std::string& v : ServerNameViolations(child)) all.push_back(std::move(v));
  }
  return all;
}

std::string NameError(const DLJob& job) {
  for (const FieldError& e : Validate(job)) {
    if (e.path == "metadata.name") return e.reason;
  }
  return "";
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Valid exactly when the server takes every child.
void ExpectRuleMatchesServer(const std::string& name, int64_t workers) {
  DLJob job = JobNamed(name, workers);
  std::vector<std::string> violations = Violations(job);
  std::string error = NameError(job);
  EXPECT_EQ(error.empty(), violations.empty())
      << "name \"" << name << "\" (" << name.size() << " characters), " << workers
      << " workers: validation says \"" << error << "\"; the server would refuse:\n"
      << Join(violations);
}

TEST(JobNameRule, AtTheBoundaryAndJustPastIt) {
  struct Row {
    std::string name;
    int64_t workers;
    const char* error;  // "" when valid, else a part of the reason
  };
  const Row rows[] = {
      {"a", 1, ""},
      {"mnist", 2, ""},
      {"1abc", 2, "DNS-1035 label"},
      {"abc-", 2, "DNS-1035 label"},
      {"a.b", 2, "DNS-1035 label"},
      {"Abc", 2, "DNS-1035 label"},
      {std::string(54, 'a'), 1, ""},
      {std::string(55, 'a'), 1, "must be at most 54 characters for a job of 1 worker, got 55"},
      {std::string(54, 'a'), 10, ""},
      {std::string(55, 'a'), 10, "at most 54"},
      {std::string(53, 'a'), 11, ""},
      {std::string(54, 'a'), 11, "at most 53 characters for a job of 11 workers"},
      {std::string(52, 'a'), 101, ""},
      {std::string(53, 'a'), 101, "-worker-100\" would be 64 characters"},
      {std::string(50, 'a'), kMaxGpus, ""},
      {std::string(51, 'a'), kMaxGpus, "Kubernetes allows 63"},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name + ", " + std::to_string(r.workers) + " workers");
    DLJob job = JobNamed(r.name, r.workers);
    std::string error = NameError(job);
    if (*r.error == '\0') {
      EXPECT_EQ(error, "");
    } else {
      EXPECT_NE(error.find(r.error), std::string::npos) << error;
    }
    ExpectRuleMatchesServer(r.name, r.workers);
  }
}

TEST(JobNameRule, EveryLengthAroundEveryLimitMatchesTheServer) {
  for (int64_t workers : {1, 2, 10, 11, 100, 101}) {
    for (size_t length = 1; length <= 70; ++length) {
      ExpectRuleMatchesServer("j" + std::string(length - 1, '0'), workers);
    }
  }
}

TEST(JobNameRule, EveryByteAtTheEndsAndInTheMiddleMatchesTheServer) {
  for (int c = 1; c < 256; ++c) {
    for (size_t at : {0, 2, 4}) {
      std::string name = "abcde";
      name[at] = static_cast<char>(c);
      ExpectRuleMatchesServer(name, 2);
    }
  }
}

TEST(ServerNameRules, CatchWhatTheServerRefuses) {  // the oracle can fail
  EXPECT_FALSE(ServerNameViolations(NewWorkerService(JobNamed("1abc", 2))).empty());
  Result<Json> pod = NewWorkerPod(JobNamed(std::string(55, 'a'), 2), 1, BuildOptions{});
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(Join(ServerNameViolations(*pod)),
            "Pod " + std::string(55, 'a') + "-worker-1: spec.hostname: a DNS-1123 label, got \"" +
                std::string(55, 'a') + "-worker-1\"\n");
}

}  // namespace
}  // namespace dljob::controller
