#include "cli/local/log_follower.h"

#include <chrono>
#include <fstream>

#include "jobs/log_lines.h"

namespace dljob {
namespace {

void PrintLine(const std::string& line, const LogOptions& options, std::ostream& out) {
  if (!options.rank) {
    out << line << '\n';
    return;
  }
  std::optional<TaggedLine> tagged = ParseLogLine(line);
  if (tagged && tagged->rank == *options.rank) out << tagged->text << '\n';
}

}  // namespace

Status FollowLog(const std::string& path, const LogOptions& options,
                 const std::function<bool()>& finished, Clock& clock, std::ostream& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!options.follow) return Status::Ok();  // a job that printed nothing yet has no log
  }
  std::string partial;
  std::streamoff offset = 0;
  while (true) {
    // Checked before reading: whatever the job wrote before it finished is read below.
    bool done = options.follow && finished();
    if (!in.is_open() || !in) {
      in.close();
      in.clear();
      in.open(path, std::ios::binary);
      if (in) in.seekg(offset);
    }
    std::string chunk;
    if (in) {
      char buf[65536];
      while (in.read(buf, sizeof buf) || in.gcount() > 0) chunk.append(buf, in.gcount());
      in.clear();
      offset += static_cast<std::streamoff>(chunk.size());
    }
    partial += chunk;
    size_t start = 0, nl;
    while ((nl = partial.find('\n', start)) != std::string::npos) {
      PrintLine(partial.substr(start, nl - start), options, out);
      start = nl + 1;
    }
    partial.erase(0, start);
    out.flush();
    if (!options.follow) break;
    if (done && chunk.empty()) break;
    if (chunk.empty()) clock.SleepFor(std::chrono::milliseconds(200));
  }
  if (!partial.empty() && !options.follow) PrintLine(partial, options, out);
  return out ? Status::Ok() : Status::Unavailable("cannot write the log to the output");
}

}  // namespace dljob
