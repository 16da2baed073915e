// `dljob advise --apply`: writes the recommendation into the job file, changing only the lines
// it must.
//
// Fields written: spec.resources.cpuPerGpu and memoryPerGpu (when recommended); a cache entry
// (LocalSSD at `cache_path`) on each oss:// and nas:// volume without one, when caching is
// recommended (an existing cache is left as it is); dljob-train's --loader_threads in
// spec.command (when the loader axis ran); OMP_NUM_THREADS in spec.env, only when the job sets it
// there already (otherwise cpuPerGpu says it).
//
// How: the YAML decoder knows where each field was written (jobs/codec.h's SourcePositions), so a
// present scalar is replaced in place and a missing entry is inserted as new lines, indented like
// its siblings, after its mapping's last line. Comments, order and layout elsewhere are kept. The
// result is decoded again and must equal the intended job exactly; when it does not (flow style,
// block scalars, anchors, anything unusual), or for a JSON file, the whole document is emitted
// afresh instead and `warning` says that comments and layout were not kept. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cli/advise/recommendation.h"

namespace dljob::advise {

struct AppliedFile {
  std::string text;
  std::vector<std::string> changes;  // "spec.resources.cpuPerGpu: \"2\"", …
  std::string warning;               // non-empty when the file was re-emitted
};

// `text`: the job file as read. Errors when it does not decode as a DLJob.
Result<AppliedFile> ApplyRecommendation(const std::string& text, const Recommendation& rec,
                                        const std::string& cache_path);

}  // namespace dljob::advise
