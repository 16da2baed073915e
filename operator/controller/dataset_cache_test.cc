// Data locality's pure parts: the worker pod's cache-sources annotation, which pods prove a warm
// cache, the node annotation's encoding and bounds, and the whole way from a Node object's
// annotation to a placement that prefers that node.
#include "operator/controller/dataset_cache.h"

#include <algorithm>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "operator/controller/builders.h"
#include "operator/controller/cluster_view.h"
#include "scheduler/gang.h"
#include "scheduler/placement_policy.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;
using Sources = std::vector<std::string>;

// examples/resnet-job.yaml: one oss:// dataset cached on LocalSSD.
DLJob ResNetJob() {
  DecodeResult d = ReadJobFile("examples/resnet-job.yaml");
  EXPECT_TRUE(d.ok()) << JoinFieldErrors(d.errors);
  ApplyDefaults(d.job);
  d.job.metadata.uid = "uid-1";
  return d.job;
}

TEST(CacheSourcesAnnotation, NamesEachCachedEntrysInitContainerAndSource) {
  DLJob job = ResNetJob();
  job.spec.data.push_back({"vocab", "nas://srv/export/vocab", "/vocab", {}, {}, {}});  // no cache
  job.spec.data.push_back(
      {"wiki", "pvc:corpora/wiki", "/wiki", {}, CacheSpec{"LocalSSD", "/mnt/nvme"}, {}});
  EXPECT_EQ(Json::parse(CacheSourcesAnnotation(job)),
            (Json{{"cache-imagenet", "oss://dljob-datasets/imagenet/train"},
                  {"cache-wiki", "pvc:corpora/wiki"}}));
  // The worker pods carry it, and their init containers have exactly those names.
  Result<Json> pod = NewWorkerPod(job, 1, BuildOptions{});
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ((*pod)["metadata"]["annotations"][kCacheSourcesAnnotation],
            CacheSourcesAnnotation(job));
  std::set<std::string> inits;
  for (const Json& c : (*pod)["spec"]["initContainers"]) inits.insert(c["name"]);
  EXPECT_EQ(inits, (std::set<std::string>{"cache-imagenet", "cache-wiki"}));

  for (DataVolume& d : job.spec.data) d.cache.reset();
  EXPECT_EQ(CacheSourcesAnnotation(job), "");
  pod = NewWorkerPod(job, 1, BuildOptions{});
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE((*pod)["metadata"].contains("annotations"));
}

// A worker pod caching "a" (init container cache-a) and "b" (cache-b).
Json Pod(const std::string& node, const std::string& phase, Json init_statuses = Json::array()) {
  Json pod = {{"metadata",
               {{"name", "j-worker-0"},
                {"annotations",
                 {{kCacheSourcesAnnotation, R"({"cache-a": "nas://s/a", "cache-b": "pvc:b")"
                                            R"(})"}}}}},
              {"spec", Json::object()},
              {"status", {{"phase", phase}, {"initContainerStatuses", init_statuses}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

Json Init(const std::string& name, Json state) { return {{"name", name}, {"state", state}}; }
Json Exited(int code) { return {{"terminated", {{"exitCode", code}, {"reason", "Completed"}}}}; }
const Json kRunningState = {{"running", {{"startedAt", "2024-05-01T10:00:00Z"}}}};

TEST(WarmSources, WhatAPodProvesOnItsNode) {
  const struct {
    const char* name;
    Json pod;
    Sources want;
  } cases[] = {
      {"not bound", Pod("", "Running"), {}},
      {"bound, nothing run yet", Pod("n1", "Pending"), {}},
      {"Running: every init container has completed", Pod("n1", "Running"), {"nas://s/a", "pvc:b"}},
      {"Succeeded: likewise", Pod("n1", "Succeeded"), {"nas://s/a", "pvc:b"}},
      {"one cache copied, the other copying",
       Pod("n1", "Pending", {Init("cache-a", Exited(0)), Init("cache-b", kRunningState)}),
       {"nas://s/a"}},
      {"a copy that failed proves nothing",
       Pod("n1", "Failed", {Init("cache-a", Exited(1)), Init("cache-b", Exited(0))}),
       {"pvc:b"}},
      {"an init container that is not a cache's",
       Pod("n1", "Pending", {Init("setup", Exited(0))}),
       {}},
      {"a status without an exit code",
       Pod("n1", "Pending", {Init("cache-a", {{"terminated", {{"reason", "Error"}}}})}),
       {}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(WarmSources(c.pod), c.want) << c.name;
  }
}

TEST(WarmSources, APodWithoutAReadableAnnotationProvesNothing) {
  for (Json annotation : {Json(nullptr), Json("not json"), Json("[\"nas://s/a\"]"), Json(7),
                          Json(R"({"cache-a": 7})")}) {
    Json pod = Pod("n1", "Running");
    if (annotation.is_null()) {
      pod["metadata"].erase("annotations");
    } else {
      pod["metadata"]["annotations"][kCacheSourcesAnnotation] = annotation;
    }
    EXPECT_EQ(WarmSources(pod), Sources{}) << annotation.dump();
  }
  // Two entries caching one source count it once.
  Json pod = Pod("n1", "Running");
  pod["metadata"]["annotations"][kCacheSourcesAnnotation] = R"({"cache-a": "x", "cache-b": "x"})";
  EXPECT_EQ(WarmSources(pod), Sources{"x"});
}

TEST(NewlyWarmSources, OnlyWhatTheChangeProved) {
  Json pending = Pod("n1", "Pending");
  Json a_done = Pod("n1", "Pending", {Init("cache-a", Exited(0)), Init("cache-b", kRunningState)});
  Json running = Pod("n1", "Running");
  EXPECT_EQ(NewlyWarmSources(pending, a_done), Sources{"nas://s/a"});
  EXPECT_EQ(NewlyWarmSources(a_done, running), Sources{"pvc:b"});
  EXPECT_EQ(NewlyWarmSources(running, running), Sources{});
  EXPECT_EQ(NewlyWarmSources(pending, running), (Sources{"nas://s/a", "pvc:b"}));
}

TEST(CachedDatasets, DecodeReadsAListOfStringsAndNothingElse) {
  EXPECT_EQ(DecodeCachedDatasets(""), Sources{});
  EXPECT_EQ(DecodeCachedDatasets("nas://s/a"), Sources{});  // not JSON
  EXPECT_EQ(DecodeCachedDatasets(R"({"a": 1})"), Sources{});
  EXPECT_EQ(DecodeCachedDatasets(R"(["a", 1, null, "b", "a", ""])"), (Sources{"a", "b"}));
  Sources many;
  for (int i = 0; i < 40; ++i) many.push_back("d" + std::to_string(i));
  Sources first32(many.begin(), many.begin() + kMaxCachedDatasets);
  EXPECT_EQ(DecodeCachedDatasets(Json(many).dump()), first32);
  EXPECT_EQ(DecodeCachedDatasets(EncodeCachedDatasets(first32)), first32);
  EXPECT_EQ(EncodeCachedDatasets({"nas://s/a", "pvc:b"}), R"(["nas://s/a","pvc:b"])");
  EXPECT_EQ(EncodeCachedDatasets({}), "[]");
}

TEST(CachedDatasets, TouchMovesToTheFrontAndForgetsTheLeastRecent) {
  EXPECT_EQ(TouchCachedDatasets({}, {"a"}), Sources{"a"});
  EXPECT_EQ(TouchCachedDatasets({"a", "b", "c"}, {"c", "d"}), (Sources{"c", "d", "a", "b"}));
  EXPECT_EQ(TouchCachedDatasets({"a", "b"}, {"a"}), (Sources{"a", "b"}));  // unchanged
  Sources full;
  for (size_t i = 0; i < kMaxCachedDatasets; ++i) full.push_back("d" + std::to_string(i));
  Sources touched = TouchCachedDatasets(full, {"new"});
  ASSERT_EQ(touched.size(), kMaxCachedDatasets);
  EXPECT_EQ(touched.front(), "new");
  EXPECT_EQ(touched.back(), "d" + std::to_string(kMaxCachedDatasets - 2));  // the oldest left
  // A source too long to record is not recorded, and pushes nothing out.
  EXPECT_EQ(TouchCachedDatasets({"a"}, {std::string(kMaxSourceBytes + 1, 'x')}), Sources{"a"});
}

// Random lists of random lengths (fixed seed): whatever comes in, what is written fits the
// bounds, keeps the newly warm first, has no duplicates, and reads back as written.
TEST(CachedDatasets, TouchAlwaysFitsTheBounds) {
  std::mt19937 rng(20240501);
  auto source = [&] {
    const size_t lengths[] = {1, 20, 200, 1500, kMaxSourceBytes, kMaxSourceBytes + 1};
    std::string s(lengths[rng() % 6], 'a');
    s.back() = static_cast<char>('a' + rng() % 26);        // repeats happen
    s.front() = static_cast<char>(rng() % 2 ? '"' : 'b');  // JSON escaping counts
    return s;
  };
  for (int round = 0; round < 500; ++round) {
    Sources known, warm;
    for (size_t i = rng() % 60; i > 0; --i) known.push_back(source());
    for (size_t i = rng() % 4; i > 0; --i) warm.push_back(source());
    Sources out = TouchCachedDatasets(DecodeCachedDatasets(Json(known).dump()), warm);
    const std::string encoded = EncodeCachedDatasets(out);
    ASSERT_LE(out.size(), kMaxCachedDatasets);
    ASSERT_LE(encoded.size(), kMaxCachedDatasetsBytes);
    ASSERT_EQ(std::set<std::string>(out.begin(), out.end()).size(), out.size());
    ASSERT_EQ(DecodeCachedDatasets(encoded), out);
    // At most 3 warm sources of at most kMaxSourceBytes always fit: all of them lead.
    Sources lead;
    for (const std::string& w : warm) {
      if (w.size() <= kMaxSourceBytes && std::find(lead.begin(), lead.end(), w) == lead.end()) {
        lead.push_back(w);
      }
    }
    ASSERT_GE(out.size(), lead.size());
    ASSERT_EQ(Sources(out.begin(), out.begin() + lead.size()), lead);
    for (const std::string& s : out) ASSERT_LE(s.size(), kMaxSourceBytes);
  }
}

TEST(CachedDatasets, ReadFromTheNodeAndWrittenByAConditionalMergePatch) {
  Json node = {{"metadata", {{"name", "n1"}, {"resourceVersion", "7"}}}};
  EXPECT_EQ(CachedDatasetsOf(node), Sources{});
  node["metadata"]["annotations"][kCachedDatasetsAnnotation] = R"(["nas://s/a"])";
  EXPECT_EQ(CachedDatasetsOf(node), Sources{"nas://s/a"});
  EXPECT_EQ(CachedDatasetsPatch({"pvc:b", "nas://s/a"}, "7"),
            Json::parse(R"({"metadata": {"resourceVersion": "7", "annotations":
                {"dljob.io/cached-datasets": "[\"pvc:b\",\"nas://s/a\"]"}}})"));
}

// The annotation steers placement: SchedulerNodeOf reads it into Node::cached_datasets, and the
// dljob policy, of nodes that fit alike, takes the one that holds the job's dataset.
TEST(CachedDatasets, TheDljobPolicyPrefersTheNodeWhoseAnnotationListsTheJobsData) {
  auto node = [](const std::string& name, Sources cached) {
    Json n = {{"metadata", {{"name", name}}},
              {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}}}};
    if (!cached.empty()) {
      n["metadata"]["annotations"][kCachedDatasetsAnnotation] = EncodeCachedDatasets(cached);
    }
    return SchedulerNodeOf(n);
  };
  std::vector<scheduler::Node> nodes = {
      node("n1", {}), node("n2", {"nas://other"}),
      node("n3", {"nas://other", "oss://dljob-datasets/imagenet/train"}), node("n4", {})};
  EXPECT_EQ(nodes[2].cached_datasets,
            (std::set<std::string>{"nas://other", "oss://dljob-datasets/imagenet/train"}));
  DLJob job = ResNetJob();
  job.spec.gpus = 8;
  job.spec.scheduling.node_selector.clear();
  job.spec.scheduling.tolerations.clear();
  Result<scheduler::Gang> gang = scheduler::GangOf(job);
  ASSERT_TRUE(gang.ok()) << gang.status().message();
  Result<scheduler::PlacementPolicyPtr> policy = scheduler::MakePlacementPolicy("dljob");
  ASSERT_TRUE(policy.ok());
  Result<scheduler::Placement> placed = (*policy)->Place(*gang, nodes);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_EQ(placed->worker_nodes, Sources{"n3"});
  nodes.erase(nodes.begin() + 2);  // without it: the first by name
  EXPECT_EQ((*policy)->Place(*gang, nodes)->worker_nodes, Sources{"n1"});
}

}  // namespace
}  // namespace dljob::controller
