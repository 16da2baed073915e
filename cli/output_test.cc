#include "cli/output.h"

#include <gtest/gtest.h>

#include "base/time_format.h"
#include "jobs/codec.h"

namespace dljob {
namespace {

DLJob Finished(const std::string& name) {
  DLJob job;
  job.metadata.name = name;
  job.metadata.creation_timestamp = "2026-11-22T05:00:00Z";
  job.spec.image = "dljob/trainer:cpu";
  job.spec.command = {"dljob-train"};
  job.spec.gpus = 2;
  job.status.phase = JobPhase::kSucceeded;
  job.status.start_time = "2026-11-22T05:00:05Z";
  job.status.completion_time = "2026-11-22T05:01:37Z";
  job.status.restarts = 1;
  Throughput t;
  t.images_per_sec = 1510.24;
  t.step = 937;
  t.total_steps = 937;
  t.loss = 0.3512;
  t.accuracy = 0.8712;
  job.status.throughput = t;
  return job;
}

auto Now() { return *ParseRfc3339("2026-11-22T05:05:00Z"); }

DLJob Queued(const std::string& name) {
  DLJob queued;
  queued.metadata.name = name;
  queued.metadata.creation_timestamp = "2026-11-22T05:04:30Z";
  queued.spec.gpus = 16;
  queued.status.phase = JobPhase::kQueued;
  queued.status.start_estimate =
      StartEstimateStatus{"2026-11-22T05:17:20Z", "Progress",
                          "when train-a ends in about 12 min, from its steps and images/sec"};
  return queued;
}

TEST(FormatJobs, TableHasTheKubectlColumns) {
  DLJob unknown = Queued("no-estimate");
  unknown.status.start_estimate.reset();
  EXPECT_EQ(
      FormatJobs({Finished("mnist"), Queued("waiting-job"), unknown}, OutputFormat::kTable, Now()),
      "NAME          STATUS      GPUS   IMG/SEC   DURATION   ESTIMATED START   AGE\n"
      "mnist         Succeeded   2      1510.2    1m32s      -                 5m\n"
      "waiting-job   Queued      16     -         -          ~12m              30s\n"
      "no-estimate   Queued      16     -         -          unknown           30s\n");
}

TEST(FormatJob, GetShowsAWaitingJobsEstimateAndItsAssumption) {
  EXPECT_EQ(FormatJob(Queued("big"), OutputFormat::kTable, Now()),
            "NAME   STATUS   GPUS   IMG/SEC   DURATION   ESTIMATED START   AGE\n"
            "big    Queued   16     -         -          ~12m              30s\n"
            "Estimated start: ~12m (2026-11-22T05:17:20Z): when train-a ends in about 12 min, "
            "from its steps and images/sec. An estimate, not a promise.\n");
  // No line for a job that does not wait.
  EXPECT_EQ(FormatJob(Finished("mnist"), OutputFormat::kTable, Now()),
            FormatJobs({Finished("mnist")}, OutputFormat::kTable, Now()));
  // json and yaml carry status.startEstimate as the API has it.
  auto tree = nlohmann::json::parse(FormatJob(Queued("big"), OutputFormat::kJson, Now()));
  EXPECT_EQ(tree["status"]["startEstimate"],
            (nlohmann::json{{"time", "2026-11-22T05:17:20Z"},
                            {"basis", "Progress"},
                            {"assumption",
                             "when train-a ends in about 12 min, from its steps and images/sec"}}));
  const std::string yaml = FormatJob(Queued("big"), OutputFormat::kYaml, Now());
  EXPECT_NE(yaml.find("  startEstimate:\n    time: 2026-11-22T05:17:20Z\n    basis: Progress\n"),
            std::string::npos)
      << yaml;
  auto list = nlohmann::json::parse(FormatJobs({Queued("big")}, OutputFormat::kJson, Now()));
  EXPECT_EQ(list["items"][0]["status"]["startEstimate"]["basis"], "Progress");
}

TEST(FormatJobs, AnElasticJobShowsItsRunsGpusAndItsRange) {
  DLJob el = Finished("el");
  el.spec.gpus = 8;
  el.spec.gpus_per_worker = 2;
  el.spec.elastic = ElasticSpec{2, 8};
  el.status.workers = WorkerCounts{2, 2, 0};  // the queue sized its run to 2 workers
  const std::string table = FormatJobs({el}, OutputFormat::kTable, Now());
  EXPECT_NE(table.find("el     Succeeded   4 (2-8)"), std::string::npos) << table;
}

TEST(FormatJobs, WideAddsProgressColumns) {
  std::string out = FormatJobs({Finished("mnist")}, OutputFormat::kWide, Now());
  EXPECT_EQ(out,
            "NAME    STATUS      GPUS   IMG/SEC   STEP      LOSS     ACCURACY   RESTARTS   "
            "DURATION   ESTIMATED START   AGE   IMAGE\n"
            "mnist   Succeeded   2      1510.2    937/937   0.3512   87.12%     1          "
            "1m32s      -                 5m    dljob/trainer:cpu\n");
}

TEST(FormatJob, JsonIsTheWholeObjectAndDecodesBack) {
  DLJob job = Finished("mnist");
  std::string json = FormatJob(job, OutputFormat::kJson, Now());
  DecodeResult back = DecodeJson(json);
  ASSERT_TRUE(back.ok()) << JoinFieldErrors(back.errors);
  EXPECT_EQ(back.job, job);
  auto tree = nlohmann::json::parse(json);
  EXPECT_EQ(tree["status"]["phase"], "Succeeded");
  EXPECT_EQ(tree["status"]["throughput"]["step"], 937);
}

TEST(FormatJobs, JsonListIsADLJobList) {
  auto tree =
      nlohmann::json::parse(FormatJobs({Finished("a"), Finished("b")}, OutputFormat::kJson, Now()));
  EXPECT_EQ(tree["kind"], "DLJobList");
  ASSERT_EQ(tree["items"].size(), 2u);
  EXPECT_EQ(tree["items"][1]["metadata"]["name"], "b");
}

TEST(FormatJobs, AllNamespacesPutsTheNamespaceFirst) {
  DLJob a = Finished("mnist");
  a.metadata.namespace_ = "team-a";
  EXPECT_EQ(FormatJobs({a}, OutputFormat::kTable, Now(), true),
            "NAMESPACE   NAME    STATUS      GPUS   IMG/SEC   DURATION   ESTIMATED START   AGE\n"
            "team-a      mnist   Succeeded   2      1510.2    1m32s      -                 5m\n");
}

DLJob Training(const std::string& name, int64_t gpus, std::optional<double> rate) {
  DLJob job;
  job.metadata.name = name;
  job.metadata.namespace_ = "team-a";
  job.metadata.creation_timestamp = "2026-11-22T05:00:00Z";
  job.spec.image = "trainer:cuda";
  job.spec.gpus = gpus;
  job.status.phase = JobPhase::kRunning;
  job.status.workers = WorkerCounts{gpus / 8, gpus / 8, 0};
  job.status.placement = {{"gpu-node-0", 8}, {"gpu-node-1", 8}};
  Throughput t;
  t.images_per_sec = rate;
  t.step = 3100;
  t.epoch = 2;
  t.loss = 2.331;
  t.updated_at = "2026-11-22T05:04:56Z";
  job.status.throughput = t;
  return job;
}

TEST(FormatTop, ShowsGpusAndImagesPerSecondWithATotal) {
  DLJob resnet = Training("resnet", 16, 9843.1);
  resnet.status.throughput->per_gpu_images_per_sec = 615.19;
  DLJob vgg = Training("vgg", 8, 2400.0);  // no per-GPU figure: divided here
  DLJob queued;
  queued.metadata.name = "waiting";
  queued.spec.gpus = 64;
  queued.status.phase = JobPhase::kQueued;
  EXPECT_EQ(FormatTop({resnet, vgg, queued}, OutputFormat::kTable, Now()),
            "NAME      STATUS    GPUS   WORKERS   IMG/SEC   IMG/SEC/GPU   STEP   LOSS    UPDATED\n"
            "resnet    Running   16     2/2       9843.1    615.2         3100   2.331   4s\n"
            "vgg       Running   8      1/1       2400.0    300.0         3100   2.331   4s\n"
            "waiting   Queued    64     -         -         -             -      -       -\n"
            "3 jobs, 88 GPUs, 12243.1 images/sec\n");
}

TEST(FormatTop, WideAddsEpochAccuracyRestartsAndNodes) {
  std::string out = FormatTop({Training("resnet", 16, 9843.1)}, OutputFormat::kWide, Now(), true);
  EXPECT_EQ(
      out,
      "NAMESPACE   NAME     STATUS    GPUS   WORKERS   IMG/SEC   IMG/SEC/GPU   STEP   LOSS    "
      "UPDATED   EPOCH   ACCURACY   RESTARTS   NODES\n"
      "team-a      resnet   Running   16     2/2       9843.1    615.2         3100   2.331   "
      "4s        2       -          0          gpu-node-0,gpu-node-1\n"
      "1 job, 16 GPUs, 9843.1 images/sec\n");
}

// A language model reports words/sec and validation perplexity: the rate columns say words/s,
// the accuracy column shows the perplexity, and the total line adds the words.
TEST(FormatTop, LanguageModelsShowWordsPerSecondAndPerplexity) {
  DLJob lstm = Training("lstm", 8, std::nullopt);
  lstm.status.throughput->words_per_sec = 8000.0;
  lstm.status.throughput->perplexity = 143.21;
  std::string out =
      FormatTop({Training("resnet", 16, 9843.1), lstm}, OutputFormat::kWide, Now(), false);
  EXPECT_NE(out.find("lstm     Running   8      1/1       8000.0 words/s   1000.0 words/s"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("ppl 143.2"), std::string::npos) << out;
  EXPECT_NE(out.find("2 jobs, 24 GPUs, 9843.1 images/sec, 8000.0 words/sec\n"), std::string::npos)
      << out;
  DLJob done = Finished("lm");
  done.status.throughput->images_per_sec.reset();
  done.status.throughput->accuracy.reset();
  done.status.throughput->words_per_sec = 4321.0;
  done.status.throughput->perplexity = 99.5;
  std::string list = FormatJobs({done}, OutputFormat::kWide, Now());
  EXPECT_NE(list.find("4321.0 words/s"), std::string::npos) << list;
  EXPECT_NE(list.find("ppl 99.5"), std::string::npos) << list;
  auto tree = nlohmann::json::parse(FormatJobs({done}, OutputFormat::kJson, Now()));
  EXPECT_EQ(tree["items"][0]["status"]["throughput"]["wordsPerSec"], 4321.0);
  EXPECT_EQ(tree["items"][0]["status"]["throughput"]["perplexity"], 99.5);
}

TEST(FormatTop, JsonIsTheJobList) {
  auto tree = nlohmann::json::parse(
      FormatTop({Training("resnet", 16, 9843.1)}, OutputFormat::kJson, Now()));
  EXPECT_EQ(tree["kind"], "DLJobList");
  EXPECT_EQ(tree["items"][0]["status"]["throughput"]["imagesPerSec"], 9843.1);
}

TEST(ParseOutputFormat, NamesTheChoices) {
  EXPECT_EQ(*ParseOutputFormat("wide"), OutputFormat::kWide);
  EXPECT_EQ(*ParseOutputFormat(""), OutputFormat::kTable);
  auto bad = ParseOutputFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "unknown output format \"xml\" (expected json, yaml or wide)");
}

}  // namespace
}  // namespace dljob
