// Lines of a local job's output: as mpirun tags them, and as the job log stores them.
//
// mpirun --tag-output prefixes each rank's line with "[<jobid>,<rank>]<stdout>:" (or <stderr>);
// lines without a tag are mpirun's own. The job log (output.log in the job's state directory)
// stores each line as "[rank N] text" or "[mpirun] text", so `dljob logs --rank N` can filter it
// and the tag survives the job. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobs/metric_line.h"

namespace dljob {

struct TaggedLine {
  int rank = -1;  // -1: the launcher (mpirun) itself
  bool is_stderr = false;
  std::string_view text;
};

// Splits an mpirun output line into rank and text. Untagged lines come back with rank -1.
// mpirun tags each chunk a rank writes, not each line, so a line a rank wrote in pieces arrives
// as "[1,0]<stderr>:error: [1,0]<stderr>:no such file"; the repeated tags are removed, which is
// why the text is returned as a string.
struct MpirunLine {
  int rank = -1;
  bool is_stderr = false;
  std::string text;
};
MpirunLine ParseMpirunLine(std::string_view line);

// Other ranks' pieces inside a tagged line. While one rank writes a line in pieces, another
// rank's chunk can land between them: "[1,0]<stdout>:400\t[1,1]<stdout>:DLJOB_METRIC {...}", then
// "[1,0]<stdout>:images/sec ...". ParseMpirunLine keeps such a piece in the text (the line stays
// one line of the log, which counts lines as the pod's log does); this returns them, each with its
// rank, stream and text, in order, adjacent pieces of one rank joined. The last one ended the
// line, so it is a whole line if its rank wrote it in one piece (a metric line is). Empty for an
// untagged line and for one with no other rank's tag.
std::vector<MpirunLine> OtherRanksPieces(std::string_view line);

// The metric sample a line (or a piece) carries: ParseMetricLine of its text, with the rank of
// its tag when the sample names none. nullopt when it is not a metric line.
std::optional<MetricSample> MetricOf(const MpirunLine& line);

// "[rank 3] text" or "[mpirun] text".
std::string FormatLogLine(int rank, std::string_view text);

// Inverse of FormatLogLine; nullopt for a line that does not start with a tag.
std::optional<TaggedLine> ParseLogLine(std::string_view line);

}  // namespace dljob
