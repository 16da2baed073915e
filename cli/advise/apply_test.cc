// --apply (apply.h): the recommendation written into job files, only the lines it must change,
// comments kept; the result decodes to exactly the intended job and validates. Runs over copies of
// every example in examples/ that is a DLJob.
#include "cli/advise/apply.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/validation.h"

namespace dljob::advise {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Recommendation Rec(bool cache, std::optional<int> loader = std::nullopt) {
  Recommendation r;
  r.threads_per_rank = 2;
  r.cpu_per_gpu = "3";
  r.memory_per_gpu = "640Mi";
  r.cache = cache;
  r.loader_threads = loader;
  return r;
}

void ExpectValid(const std::string& text) {
  DecodeResult d = DecodeAny(text);
  ASSERT_TRUE(d.ok()) << d.errors.front().ToString() << "\n" << text;
  DLJob job = d.job;
  ApplyDefaults(job);
  FieldErrors errors = Validate(job);
  EXPECT_TRUE(errors.empty()) << errors.front().ToString();
}

// Lines of `after` not in `before`, in order.
std::vector<std::string> Added(const std::string& before, const std::string& after) {
  std::vector<std::string> a, b, out;
  std::stringstream sa(after), sb(before);
  for (std::string l; std::getline(sb, l);) b.push_back(l);
  for (std::string l; std::getline(sa, l);) a.push_back(l);
  size_t j = 0;
  for (const std::string& l : a) {
    if (j < b.size() && l == b[j]) {
      ++j;
    } else {
      out.push_back(l);
    }
  }
  EXPECT_EQ(j, b.size()) << "a line of the original was changed or dropped:\n" << after;
  return out;
}

TEST(Apply, MnistExampleKeepsEveryLineAndComment) {
  const std::string before = Read("examples/mnist-job.yaml");
  ASSERT_FALSE(before.empty()) << "run from the source directory";
  Result<AppliedFile> a = ApplyRecommendation(before, Rec(false), "/var/cache/dljob");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->warning, "");
  EXPECT_EQ(Added(before, a->text),
            (std::vector<std::string>{"  resources:", "    cpuPerGpu: \"3\"",
                                      "    memoryPerGpu: \"640Mi\""}));
  ExpectValid(a->text);
  DecodeResult d = DecodeAny(a->text);
  EXPECT_EQ(d.job.spec.resources.cpu_per_gpu, "3");
  EXPECT_EQ(d.job.spec.resources.memory_per_gpu, "640Mi");
}

TEST(Apply, OssExampleGetsACacheAndLoaderThreads) {
  const std::string before = Read("examples/mnist-oss-shards-job.yaml");
  Result<AppliedFile> a = ApplyRecommendation(before, Rec(true, 4), "/mnt/ssd/dljob");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->warning, "");
  ExpectValid(a->text);
  DecodeResult d = DecodeAny(a->text);
  ASSERT_EQ(d.job.spec.data.size(), 1u);
  EXPECT_EQ(d.job.spec.data[0].cache, (CacheSpec{"LocalSSD", "/mnt/ssd/dljob"}));
  EXPECT_EQ(d.job.spec.command.back(), "--loader_threads=4");
  EXPECT_EQ(a->text.substr(0, 60), before.substr(0, 60));  // the header comment is still there
}

TEST(Apply, ReplacesValuesInPlaceKeepingTrailingComments) {
  const std::string before =
      "apiVersion: dljob.io/v1alpha1\n"
      "kind: DLJob\n"
      "metadata:\n"
      "  name: j  # the name\n"
      "spec:\n"
      "  image: img\n"
      "  command: [dljob-train, --loader_threads=8]\n"  // flow style: handled by the fallback
      "  gpus: 1\n"
      "  env:\n"
      "    - name: OMP_NUM_THREADS\n"
      "      value: \"16\"   # too many\n"
      "  resources:\n"
      "    cpuPerGpu: '12'  # a guess\n";
  Result<AppliedFile> flow = ApplyRecommendation(before, Rec(false, 2), "/c");
  ASSERT_TRUE(flow.ok());
  EXPECT_NE(flow->warning, "");  // the flow-style command cannot be edited in place
  ExpectValid(flow->text);
  EXPECT_EQ(DecodeAny(flow->text).job.spec.command[1], "--loader_threads=2");

  std::string block = before;
  block.replace(block.find("  command: [dljob-train, --loader_threads=8]\n"),
                std::string("  command: [dljob-train, --loader_threads=8]\n").size(),
                "  command:\n    - dljob-train\n    - --loader_threads=8\n");
  Result<AppliedFile> a = ApplyRecommendation(block, Rec(false, 2), "/c");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->warning, "");
  EXPECT_NE(a->text.find("    cpuPerGpu: \"3\"  # a guess\n"), std::string::npos) << a->text;
  EXPECT_NE(a->text.find("      value: \"2\"   # too many\n"), std::string::npos) << a->text;
  EXPECT_NE(a->text.find("    - --loader_threads=2\n"), std::string::npos) << a->text;
  EXPECT_NE(a->text.find("    memoryPerGpu: \"640Mi\"\n"), std::string::npos) << a->text;
  EXPECT_NE(a->text.find("  name: j  # the name\n"), std::string::npos);
  ExpectValid(a->text);
}

TEST(Apply, JsonIsRewritten) {
  const std::string json =
      R"({"apiVersion":"dljob.io/v1alpha1","kind":"DLJob","metadata":{"name":"j"},)"
      R"("spec":{"image":"i","command":["x"],"gpus":1}})";
  Result<AppliedFile> a = ApplyRecommendation(json, Rec(false), "/c");
  ASSERT_TRUE(a.ok());
  EXPECT_NE(a->warning, "");
  ExpectValid(a->text);
  EXPECT_EQ(DecodeAny(a->text).job.spec.resources.cpu_per_gpu, "3");
}

TEST(Apply, AppendsToAOneLineFlowSequenceInPlace) {
  const std::string before =
      "apiVersion: dljob.io/v1alpha1\n"
      "kind: DLJob\n"
      "metadata: {name: j}\n"
      "spec:\n"
      "  image: img\n"
      "  command: [dljob-train, \"--data_name=imagenet\" ]  # flow style\n"
      "  gpus: 1\n";
  Result<AppliedFile> a = ApplyRecommendation(before, Rec(false, 4), "/c");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->warning, "") << a->text;
  EXPECT_NE(a->text.find(
                "  command: [dljob-train, \"--data_name=imagenet\", --loader_threads=4 ]  # flow"),
            std::string::npos)
      << a->text;
  ExpectValid(a->text);

  // Over several lines: the item goes where the last one and `]` are.
  const std::string multiline =
      "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata: {name: j}\nspec:\n  image: img\n"
      "  command: [dljob-train,\n    --data_name=imagenet]\n  gpus: 1\n";
  Result<AppliedFile> b = ApplyRecommendation(multiline, Rec(false, 4), "/c");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->warning, "") << b->text;
  EXPECT_NE(b->text.find("    --data_name=imagenet, --loader_threads=4]\n"), std::string::npos)
      << b->text;
  ExpectValid(b->text);
}

TEST(Apply, EveryExampleJob) {
  for (const auto& e : std::filesystem::directory_iterator("examples")) {
    const std::string text = Read(e.path().string());
    if (DocumentKind(text) != "DLJob") continue;
    SCOPED_TRACE(e.path().string());
    Result<AppliedFile> a = ApplyRecommendation(text, Rec(true, 2), "/mnt/ssd");
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(a->warning, "") << "every example is block style: edited in place";
    ExpectValid(a->text);
    std::stringstream lines(text);
    for (std::string l; std::getline(lines, l);) {
      if (l.rfind("#", 0) == 0) {
        EXPECT_NE(a->text.find(l + "\n"), std::string::npos) << l;
      }
    }
  }
}

TEST(Apply, RefusesWhatDoesNotDecode) {
  EXPECT_FALSE(ApplyRecommendation("kind: [", Rec(false), "/c").ok());
}

}  // namespace
}  // namespace dljob::advise
