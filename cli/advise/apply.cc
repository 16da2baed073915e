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

  // Appends `item` to the block sequence at `sequence` (which has `count` items).
  void Append(const std::string& sequence, size_t count, const std::string& item) {
    auto it = positions_.values.find(sequence + "[" + std::to_string(count - 1) + "]");
    if (count == 0 || it == positions_.values.end()) {
      ok_ = false;
      return;
    }
    const int line = it->second.first - 1;
    const std::string prefix = lines_[line].substr(0, it->second.second - 1);
    if (prefix.find_first_not_of(' ') == std::string::npos ||
        prefix.substr(prefix.find_first_not_of(' ')).rfind("- ", 0) != 0) {
      ok_ = false;  // not a block sequence item line
      return;
    }
    // Later lines of the same item (none for a plain scalar) would follow; plain scalars only.
    inserts_[line].push_back(prefix + item);
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

}  // namespace

Result<AppliedFile> ApplyRecommendation(const std::string& text, const Recommendation& rec,
                                        const std::string& cache_path) {
  DecodeResult decoded = DecodeAny(text);
  if (!decoded.ok()) {
    return Status::InvalidArgument("the job file does not decode: " +
                                   decoded.errors.front().ToString());
  }
  const DLJob& original = decoded.job;
  DLJob want = original;
  AppliedFile out;
  LineEditor editor(text, decoded.positions);
  const bool yaml = !decoded.positions.values.empty();

  // resources
  auto set_resource = [&](const char* key, std::optional<std::string> ResourcesSpec::*member,
                          const std::string& value) {
    (want.spec.resources.*member) = value;
    out.changes.push_back(std::string("spec.resources.") + key + ": " + value);
    if (!yaml || editor.Replace(std::string("spec.resources.") + key, Quoted(value))) return;
    if (decoded.positions.keys.count("spec.resources")) {
      editor.Insert("spec.resources", key, Quoted(value));
    } else {
      editor.Insert("spec", "resources", "", {std::string(key) + ": " + Quoted(value)});
      // A second resource joins the block just made: written together below instead.
    }
  };
  const bool had_resources = decoded.positions.keys.count("spec.resources") > 0;
  if (!had_resources && yaml && rec.memory_per_gpu) {
    // Both keys in one new block.
    want.spec.resources.cpu_per_gpu = rec.cpu_per_gpu;
    want.spec.resources.memory_per_gpu = *rec.memory_per_gpu;
    out.changes.push_back("spec.resources.cpuPerGpu: " + rec.cpu_per_gpu);
    out.changes.push_back("spec.resources.memoryPerGpu: " + *rec.memory_per_gpu);
    editor.Insert(
        "spec", "resources", "",
        {"cpuPerGpu: " + Quoted(rec.cpu_per_gpu), "memoryPerGpu: " + Quoted(*rec.memory_per_gpu)});
  } else {
    set_resource("cpuPerGpu", &ResourcesSpec::cpu_per_gpu, rec.cpu_per_gpu);
    if (rec.memory_per_gpu) {
      set_resource("memoryPerGpu", &ResourcesSpec::memory_per_gpu, *rec.memory_per_gpu);
    }
  }

  // cache
  if (rec.cache.value_or(false)) {
    for (size_t i = 0; i < want.spec.data.size(); ++i) {
      DataVolume& d = want.spec.data[i];
      if (!IsRemote(d) || d.cache) continue;
      d.cache = CacheSpec{"LocalSSD", cache_path};
      const std::string path = "spec.data[" + std::to_string(i) + "]";
      out.changes.push_back(path + ".cache: {medium: LocalSSD, path: " + cache_path + "}");
      if (yaml) editor.Insert(path, "cache", "", {"medium: LocalSSD", "path: " + cache_path});
    }
  }

  // loader threads, in dljob-train's command
  if (rec.loader_threads && IsDljobTrain(want)) {
    std::vector<std::string>& c = want.spec.command;
    const std::string flag = "--loader_threads", value = std::to_string(*rec.loader_threads);
    out.changes.push_back("spec.command: " + flag + "=" + value);
    bool done = false;
    for (size_t i = 1; i < c.size() && !done; ++i) {
      const std::string path = "spec.command[" + std::to_string(i) + "]";
      if (c[i].rfind(flag + "=", 0) == 0) {
        c[i] = flag + "=" + value;
        if (yaml) editor.Replace(path, c[i]);
        done = true;
      } else if (c[i] == flag && i + 1 < c.size()) {
        c[i + 1] = value;
        if (yaml) editor.Replace("spec.command[" + std::to_string(i + 1) + "]", Quoted(value));
        done = true;
      }
    }
    if (!done) {
      if (yaml) editor.Append("spec.command", c.size(), flag + "=" + value);
      c.push_back(flag + "=" + value);
    }
  }

  // threads per rank, only where the job says it already
  for (size_t i = 0; i < want.spec.env.size(); ++i) {
    EnvVar& e = want.spec.env[i];
    if (e.name != "OMP_NUM_THREADS") continue;
    e.value = std::to_string(rec.threads_per_rank);
    out.changes.push_back("spec.env OMP_NUM_THREADS: " + e.value);
    if (yaml) editor.Replace("spec.env[" + std::to_string(i) + "].value", Quoted(e.value));
  }

  if (yaml && editor.ok()) {
    std::string edited = editor.Text();
    DecodeResult check = DecodeAny(edited);
    if (check.ok() && EncodeTree(check.job) == EncodeTree(want)) {
      out.text = std::move(edited);
      return out;
    }
  }
  if (yaml) {
    out.text = EncodeYaml(want);
    out.warning =
        "the file's layout could not be edited in place; it was written afresh, and its comments "
        "and key order were not kept (the previous version is in the .bak file)";
  } else {
    out.text = EncodeJson(want) + "\n";
    out.warning = "the JSON file was written afresh (its formatting was not kept)";
  }
  return out;
}

}  // namespace dljob::advise
