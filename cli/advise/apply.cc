#include "cli/advise/apply.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "cli/advise/plan.h"
#include "jobs/codec.h"
#include "jobs/volume_source.h"

namespace dljob::advise {
namespace {

// Line edits against the original text; applied bottom-up so earlier line numbers stay valid.
class LineEditor {
 public:
  LineEditor(const std::string& text, const SourcePositions& positions) : positions_(positions) {
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);) lines_.push_back(line);
    trailing_newline_ = !text.empty() && text.back() == '\n';
  }

  bool ok() const { return ok_; }

  // Replaces the scalar at `path` with `value`; false when the path was not written.
  bool Replace(const std::string& path, const std::string& value) {
    auto it = positions_.values.find(path);
    if (it == positions_.values.end()) return false;
    const int line = it->second.first - 1;
    const size_t col = static_cast<size_t>(it->second.second - 1);
    if (line < 0 || line >= static_cast<int>(lines_.size()) || col >= lines_[line].size()) {
      ok_ = false;
      return true;
    }
    const std::string& l = lines_[line];
    size_t end;
    if (l[col] == '"' || l[col] == '\'') {
      end = l.find(l[col], col + 1);
      if (end == std::string::npos) {
        ok_ = false;  // a multi-line quoted scalar
        return true;
      }
      ++end;
    } else {
      end = l.find(" #", col);
      if (end == std::string::npos) end = l.size();
      while (end > col && l[end - 1] == ' ') --end;
    }
    replacements_[line].push_back({col, end, value});
    return true;
  }

  // Adds `key: value` (or `key:` followed by `more`, indented one level deeper) to the block
  // mapping at `mapping`, after its last line, indented like its other entries.
  void Insert(const std::string& mapping, const std::string& key, const std::string& value,
              const std::vector<std::string>& more = {}) {
    std::optional<int> indent;
    int last = -1;
    for (const auto* table : {&positions_.keys, &positions_.values}) {
      for (const auto& [path, pos] : *table) {
        if (!Within(path, mapping)) continue;
        last = std::max(last, pos.first - 1);
        if (table == &positions_.keys && IsChild(path, mapping)) {
          indent = std::min(indent.value_or(pos.second - 1), pos.second - 1);
        }
      }
    }
    if (!indent || last < 0 || last >= static_cast<int>(lines_.size())) {
      ok_ = false;
      return;
    }
    std::vector<std::string> added = {std::string(*indent, ' ') + key + ":" +
                                      (value.empty() ? "" : " " + value)};
    for (const std::string& m : more) added.push_back(std::string(*indent + 2, ' ') + m);
    auto& after = inserts_[last];
    after.insert(after.end(), added.begin(), added.end());
  }

  // Appends `item` to the sequence at `sequence` (which has `count` items): a block sequence, or
  // a flow sequence whose last item and `]` share a line.
  void Append(const std::string& sequence, size_t count, const std::string& item) {
    auto it = positions_.values.find(sequence + "[" + std::to_string(count - 1) + "]");
    if (count == 0 || it == positions_.values.end()) {
      ok_ = false;
      return;
    }
    const int line = it->second.first - 1;
    const size_t col = static_cast<size_t>(it->second.second - 1);
    if (line < 0 || line >= static_cast<int>(lines_.size()) || col >= lines_[line].size()) {
      ok_ = false;
      return;
    }
    const std::string prefix = lines_[line].substr(0, col);
    const size_t first = prefix.find_first_not_of(' ');
    if (first != std::string::npos && prefix.substr(first).rfind("- ", 0) == 0) {
      // A block sequence: a new item line like the last one. Later lines of the same item (none
      // for a plain scalar) would follow; plain scalars only.
      inserts_[line].push_back(prefix + item);
      return;
    }
    // A flow sequence closed on the last item's line (`command: [a, b]`): `, item` before `]`.
    const std::string& l = lines_[line];
    size_t end = col;
    if (l[col] == '"' || l[col] == '\'') {
      end = l.find(l[col], col + 1);
      if (end == std::string::npos) {
        ok_ = false;
        return;
      }
      ++end;
    } else {
      end = l.find_first_of(",]", col);
    }
    const size_t close = end == std::string::npos ? end : l.find_first_not_of(' ', end);
    if (close == std::string::npos || l[close] != ']') {
      ok_ = false;  // neither a block item line nor a one-line flow sequence
      return;
    }
    replacements_[line].push_back({end, end, ", " + item});
  }

  std::string Text() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < lines_.size(); ++i) {
      std::string l = lines_[i];
      auto r = replacements_.find(static_cast<int>(i));
      if (r != replacements_.end()) {
        auto edits = r->second;
        std::sort(edits.begin(), edits.end(),
                  [](const auto& a, const auto& b) { return a.begin > b.begin; });
        for (const Edit& e : edits) l = l.substr(0, e.begin) + e.text + l.substr(e.end);
      }
      out.push_back(l);
      auto ins = inserts_.find(static_cast<int>(i));
      if (ins != inserts_.end()) out.insert(out.end(), ins->second.begin(), ins->second.end());
    }
    std::string text;
    for (size_t i = 0; i < out.size(); ++i) {
      text += out[i];
      if (i + 1 < out.size() || trailing_newline_) text += "\n";
    }
    return text;
  }

 private:
  struct Edit {
    size_t begin, end;
    std::string text;
  };
  static bool Within(const std::string& path, const std::string& mapping) {
    return path == mapping || path.rfind(mapping + ".", 0) == 0 ||
           path.rfind(mapping + "[", 0) == 0;
  }
  static bool IsChild(const std::string& path, const std::string& mapping) {
    if (path.rfind(mapping + ".", 0) != 0) return false;
    return path.find_first_of(".[", mapping.size() + 1) == std::string::npos;
  }

  const SourcePositions& positions_;
  std::vector<std::string> lines_;
  bool trailing_newline_ = false;
  bool ok_ = true;
  std::map<int, std::vector<Edit>> replacements_;
  std::map<int, std::vector<std::string>> inserts_;
};

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

bool IsRemote(const DataVolume& d) {
  Result<VolumeSource> s = ParseVolumeSource(d.source);
  return s.ok() && (s->kind == VolumeSource::Kind::kOss || s->kind == VolumeSource::Kind::kNas);
}

// One application: the intended job and the line edits that should produce it, side by side.
class Applier {
 public:
  Applier(const std::string& text, const DecodeResult& decoded)
      : want_(decoded.job),
        positions_(decoded.positions),
        editor_(text, decoded.positions),
        yaml_(!decoded.positions.values.empty()) {}

  void Resources(const Recommendation& rec) {
    if (yaml_ && !positions_.keys.count("spec.resources")) {
      // A new block under spec with every key at once.
      std::vector<std::string> lines = {"cpuPerGpu: " + Quoted(rec.cpu_per_gpu)};
      if (rec.memory_per_gpu) lines.push_back("memoryPerGpu: " + Quoted(*rec.memory_per_gpu));
      editor_.Insert("spec", "resources", "", lines);
      yaml_edits_done_ = true;
    }
    Resource("cpuPerGpu", &ResourcesSpec::cpu_per_gpu, rec.cpu_per_gpu);
    if (rec.memory_per_gpu) {
      Resource("memoryPerGpu", &ResourcesSpec::memory_per_gpu, *rec.memory_per_gpu);
    }
    yaml_edits_done_ = false;
  }

  // A LocalSSD cache at `cache_path` on each remote volume without one.
  void Cache(const Recommendation& rec, const std::string& cache_path) {
    if (!rec.cache.value_or(false)) return;
    for (size_t i = 0; i < want_.spec.data.size(); ++i) {
      DataVolume& d = want_.spec.data[i];
      if (!IsRemote(d) || d.cache) continue;
      d.cache = CacheSpec{"LocalSSD", cache_path};
      const std::string path = "spec.data[" + std::to_string(i) + "]";
      changes_.push_back(path + ".cache: {medium: LocalSSD, path: " + cache_path + "}");
      if (yaml_) editor_.Insert(path, "cache", "", {"medium: LocalSSD", "path: " + cache_path});
    }
  }

  // dljob-train's --loader_threads, replaced where the command has it, else appended.
  void LoaderThreads(const Recommendation& rec) {
    if (!rec.loader_threads || !IsDljobTrain(want_)) return;
    std::vector<std::string>& c = want_.spec.command;
    const std::string flag = "--loader_threads", value = std::to_string(*rec.loader_threads);
    changes_.push_back("spec.command: " + flag + "=" + value);
    auto item = [](size_t i) { return "spec.command[" + std::to_string(i) + "]"; };
    for (size_t i = 1; i < c.size(); ++i) {
      if (c[i].rfind(flag + "=", 0) == 0) {
        c[i] = flag + "=" + value;
        if (yaml_) editor_.Replace(item(i), c[i]);
        return;
      }
      if (c[i] == flag && i + 1 < c.size()) {
        c[i + 1] = value;
        if (yaml_) editor_.Replace(item(i + 1), Quoted(value));
        return;
      }
    }
    if (yaml_) editor_.Append("spec.command", c.size(), flag + "=" + value);
    c.push_back(flag + "=" + value);
  }

  // OMP_NUM_THREADS, only where the job sets it already (else cpuPerGpu says it).
  void ThreadsEnv(const Recommendation& rec) {
    for (size_t i = 0; i < want_.spec.env.size(); ++i) {
      EnvVar& e = want_.spec.env[i];
      if (e.name != "OMP_NUM_THREADS") continue;
      e.value = std::to_string(rec.threads_per_rank);
      changes_.push_back("spec.env OMP_NUM_THREADS: " + e.value);
      if (yaml_) editor_.Replace("spec.env[" + std::to_string(i) + "].value", Quoted(e.value));
    }
  }

  // The edited text when it decodes to exactly the intended job; else the job emitted afresh.
  AppliedFile Finish() {
    AppliedFile out;
    out.changes = changes_;
    if (yaml_ && editor_.ok()) {
      std::string edited = editor_.Text();
      DecodeResult check = DecodeAny(edited);
      if (check.ok() && EncodeTree(check.job) == EncodeTree(want_)) {
        out.text = std::move(edited);
        return out;
      }
    }
    if (yaml_) {
      out.text = EncodeYaml(want_);
      out.warning =
          "the file's layout could not be edited in place; it was written afresh, and its "
          "comments and key order were not kept (the previous version is in the .bak file)";
    } else {
      out.text = EncodeJson(want_) + "\n";
      out.warning = "the JSON file was written afresh (its formatting was not kept)";
    }
    return out;
  }

 private:
  void Resource(const char* key, std::optional<std::string> ResourcesSpec::*member,
                const std::string& value) {
    want_.spec.resources.*member = value;
    const std::string path = std::string("spec.resources.") + key;
    changes_.push_back(path + ": " + value);
    if (!yaml_ || yaml_edits_done_ || editor_.Replace(path, Quoted(value))) return;
    editor_.Insert("spec.resources", key, Quoted(value));
  }

  DLJob want_;
  const SourcePositions& positions_;
  LineEditor editor_;
  const bool yaml_;
  bool yaml_edits_done_ = false;  // Resources wrote a whole new block
  std::vector<std::string> changes_;
};

}  // namespace

Result<AppliedFile> ApplyRecommendation(const std::string& text, const Recommendation& rec,
                                        const std::string& cache_path) {
  DecodeResult decoded = DecodeAny(text);
  if (!decoded.ok()) {
    return Status::InvalidArgument("the job file does not decode: " +
                                   decoded.errors.front().ToString());
  }
  Applier applier(text, decoded);
  applier.Resources(rec);
  applier.Cache(rec, cache_path);
  applier.LoaderThreads(rec);
  applier.ThreadsEnv(rec);
  return applier.Finish();
}

}  // namespace dljob::advise
