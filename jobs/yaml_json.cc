#include <exception>
#include <sstream>
#include <utility>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "jobs/codec.h"
#include "jobs/field_path.h"
#include "jobs/yaml_tree.h"

namespace dljob {
namespace {

constexpr char kStrTag[] = "tag:yaml.org,2002:str";

// Thrown from event callbacks to abandon the parse; caught in ParseYaml.
struct TreeError {
  std::string what;
  YAML::Mark mark;
};

TextPosition ToPosition(const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

// JSON (and so the rest of dljob) holds only valid UTF-8; yaml-cpp passes bad bytes through.
bool IsValidUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xe  ? 3
                 : (c >> 3) == 0x1e ? 4
                                    : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

// Builds the first document's JSON tree from parser events.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(YamlParse& out, bool record_positions)
      : out_(out), record_positions_(record_positions) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp 0.7 can stall on a stray token, starting empty documents at the same spot
    // forever; a document that starts where the last one did is that token.
    if (out_.documents > 0 && mark.pos == last_document_pos_) {
      throw TreeError{"unexpected character; this is not valid YAML", mark};
    }
    last_document_pos_ = mark.pos;
    ++out_.documents;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (Skipping()) return;
    if (ExpectingKey()) throw TreeError{"mapping key must not be null", mark};
    Complete(nullptr, mark, anchor, 1);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (Skipping()) return;
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw TreeError{"alias refers to a node that is not complete", mark};
    if (ExpectingKey()) {
      if (!it->second.first.is_string()) throw TreeError{"mapping key must be a scalar", mark};
      SetKey(it->second.first.get<std::string>(), mark);
      return;
    }
    Complete(it->second.first, mark, 0, it->second.second);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (Skipping()) return;
    if (!IsValidUtf8(value)) throw TreeError{"invalid UTF-8 in scalar", mark};
    if (ExpectingKey()) {
      SetKey(value, mark);
      if (anchor != 0) anchors_[anchor] = {value, 1};
      return;
    }
    if (tag == "!" || tag == kStrTag) {
      Complete(value, mark, anchor, 1);
      return;
    }
    std::optional<nlohmann::json> typed = ResolvePlainScalar(value);
    if (!typed) {
      throw TreeError{"number " + Quote(value) + " cannot be represented (not finite)", mark};
    }
    Complete(std::move(*typed), mark, anchor, 1);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(nlohmann::json::array(), mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(nlohmann::json::object(), mark, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    nlohmann::json value;
    std::string path;
    YAML::Mark mark;
    YAML::anchor_t anchor = 0;
    size_t first_node = 0;  // nodes_ when the frame opened, to size an anchored subtree
    std::optional<std::string> key;
  };

  // Events after the first document only need to be well-formed; they are not kept.
  bool Skipping() const { return out_.documents > 1 || done_; }

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().value.is_object() && !stack_.back().key;
  }

  std::string ChildPath() const {
    if (stack_.empty()) return "";
    const Frame& top = stack_.back();
    if (top.value.is_array()) return JoinIndex(top.path, top.value.size());
    return JoinKey(top.path, *top.key);
  }

  void SetKey(const std::string& key, const YAML::Mark& mark) {
    Frame& top = stack_.back();
    if (top.value.contains(key)) throw TreeError{"duplicate key " + Quote(key), mark};
    top.key = key;
    if (record_positions_) out_.keys[ChildPath()] = ToPosition(mark);
  }

  void Count(size_t n, const YAML::Mark& mark) {
    nodes_ += n;
    if (nodes_ > kMaxYamlNodes) {
      throw TreeError{"document too large: more than " + std::to_string(kMaxYamlNodes) +
                          " nodes once aliases are expanded",
                      mark};
    }
  }

  void Open(nlohmann::json empty, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (Skipping()) return;
    if (ExpectingKey()) throw TreeError{"mapping key must be a scalar", mark};
    Count(1, mark);
    stack_.push_back(Frame{std::move(empty), ChildPath(), mark, anchor, nodes_ - 1, {}});
  }

  void Close() {
    if (Skipping()) return;
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    size_t size = nodes_ - frame.first_node;
    nodes_ -= size;  // Complete() counts the subtree again
    Complete(std::move(frame.value), frame.mark, frame.anchor, size);
  }

  // Attaches a finished node to its parent (or makes it the document).
  void Complete(nlohmann::json value, const YAML::Mark& mark, YAML::anchor_t anchor, size_t size) {
    Count(size, mark);
    if (anchor != 0) anchors_[anchor] = {value, size};
    std::string path = ChildPath();
    if (record_positions_ && !out_.values.count(path)) out_.values[path] = ToPosition(mark);
    if (stack_.empty()) {
      out_.tree = std::move(value);
      done_ = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
    } else {
      top.value[*top.key] = std::move(value);
      top.key.reset();
    }
  }

  YamlParse& out_;
  bool record_positions_;
  bool done_ = false;
  int last_document_pos_ = -1;
  size_t nodes_ = 0;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::pair<nlohmann::json, size_t>> anchors_;
};

}  // namespace

YamlParse ParseYaml(std::string_view text, bool record_positions) {
  YamlParse out;
  try {
    std::istringstream stream{std::string(text)};
    YAML::Parser parser(stream);
    TreeBuilder builder(out, record_positions);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const TreeError& e) {
    out.error = e.what;
    out.error_at = ToPosition(e.mark);
  } catch (const YAML::Exception& e) {
    out.error = e.msg.empty() ? "invalid YAML" : e.msg;
    out.error_at = ToPosition(e.mark);
  } catch (const std::exception& e) {
    out.error = std::string("invalid YAML: ") + e.what();
  }
  if (out.error) out.tree = nullptr;
  return out;
}

Result<nlohmann::json> YamlToJson(std::string_view text) {
  YamlParse parsed = ParseYaml(text, /*record_positions=*/false);
  if (parsed.error) {
    std::string where;
    if (parsed.error_at.line > 0) {
      where = "line " + std::to_string(parsed.error_at.line) + ", column " +
              std::to_string(parsed.error_at.column) + ": ";
    }
    return Status::InvalidArgument(where + *parsed.error);
  }
  if (parsed.documents > 1) {
    return Status::InvalidArgument("expected one YAML document, found " +
                                   std::to_string(parsed.documents));
  }
  return std::move(parsed.tree);
}

}  // namespace dljob
