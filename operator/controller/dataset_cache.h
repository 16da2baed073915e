// Data locality: which nodes hold a warm node-local copy of which dataset, recorded on the Node
// objects so that placement (the dljob policy's last preference, scheduler::Node::cached_datasets)
// sends a job to a node that already holds its data.
//
// Two annotations carry it:
//   on each worker pod  dljob.io/cache-sources: {"<cache init container>": "<spec.data[].source>"}
//                       (builders.h), so a pod alone says which dataset each of its cache init
//                       containers (volumes.h) copies;
//   on each Node        dljob.io/cached-datasets: ["<source>", ...], the sources whose cache a
//                       pod there has filled, most recently warmed first. One JSON list rather
//                       than one annotation per dataset, so the order is the LRU order and one
//                       merge patch with a resourceVersion precondition replaces it whole. At
//                       most kMaxCachedDatasets entries and kMaxCachedDatasetsBytes of JSON (far
//                       below the API server's 256 KiB for all of an object's annotations): the
//                       least recently warmed fall off; a source longer than kMaxSourceBytes is
//                       never recorded.
// A pod proves its caches warm on its node (spec.nodeName) when it is Running or Succeeded (every
// init container has then completed), and, before that, each cache init container whose status
// says terminated with exit code 0. A cache on a node can still be removed behind dljob's back;
// the record only steers a preference, and a job placed on a node whose copy is gone copies again.
//
// Pure functions of their inputs; thread-safe. The API write is dataset_cache_recorder.h's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/dljob_types.h"

namespace dljob::controller {

inline constexpr char kCacheSourcesAnnotation[] = "dljob.io/cache-sources";
inline constexpr char kCachedDatasetsAnnotation[] = "dljob.io/cached-datasets";
inline constexpr size_t kMaxCachedDatasets = 32;
inline constexpr size_t kMaxCachedDatasetsBytes = 16 * 1024;
inline constexpr size_t kMaxSourceBytes = 2048;

// The worker pod's dljob.io/cache-sources value: {"<cache init container>": source} for every
// spec.data entry with a cache; "" when the job caches nothing.
std::string CacheSourcesAnnotation(const DLJob& job);

// The sources whose cache `pod` has filled on its node, in the order of its annotation's keys
// (none when it is not bound, has no readable dljob.io/cache-sources, or has filled nothing yet).
std::vector<std::string> WarmSources(const nlohmann::json& pod);
// WarmSources(pod) less WarmSources(old_pod): what this change of the pod proved.
std::vector<std::string> NewlyWarmSources(const nlohmann::json& old_pod, const nlohmann::json& pod);

// A dljob.io/cached-datasets value as a list, most recent first: strings only, no duplicates, no
// more than kMaxCachedDatasets. Anything unreadable (not JSON, not a list) reads as none, and is
// replaced by the next write.
std::vector<std::string> DecodeCachedDatasets(const std::string& value);
std::string EncodeCachedDatasets(const std::vector<std::string>& sources);
// `known` with `warm` moved to the front (in warm's order), then cut to the bounds above, so
// EncodeCachedDatasets of the result always fits.
std::vector<std::string> TouchCachedDatasets(const std::vector<std::string>& known,
                                             const std::vector<std::string>& warm);

// The datasets a Node object's annotation lists (DecodeCachedDatasets; none without it).
std::vector<std::string> CachedDatasetsOf(const nlohmann::json& node);
// The merge patch that sets a node's list to `sources`, applied only if the node is still at
// `resource_version` (the API server answers 409 Conflict otherwise).
nlohmann::json CachedDatasetsPatch(const std::vector<std::string>& sources,
                                   const std::string& resource_version);

}  // namespace dljob::controller
