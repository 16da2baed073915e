// See selectors.h.
#include "tests/apiserver/selectors.h"

#include <utility>

namespace dljob::apiserver {
using kube::SplitTopLevel;
using kube::Trim;

Result<FieldSelector> FieldSelector::Parse(std::string_view text) {
  FieldSelector selector;
  if (Trim(text).empty()) return selector;
  for (const std::string& r : SplitTopLevel(text)) {
    Requirement req;
    size_t pos;
    size_t width = 1;
    if ((pos = r.find("!=")) != std::string::npos) {
      req.negate = true;
      width = 2;
    } else if ((pos = r.find("==")) != std::string::npos) {
      width = 2;
    } else if ((pos = r.find('=')) == std::string::npos) {
      return Status::InvalidArgument("invalid field selector requirement \"" + r +
                                     "\": expected path=value or path!=value");
    }
    req.path = Trim(std::string_view(r).substr(0, pos));
    req.value = Trim(std::string_view(r).substr(pos + width));
    if (req.path.empty()) return Status::InvalidArgument("empty field path in \"" + r + "\"");
    selector.requirements_.push_back(std::move(req));
  }
  return selector;
}

bool FieldSelector::Matches(const nlohmann::json& object) const {
  for (const Requirement& r : requirements_) {
    if ((FieldText(object, r.path) == r.value) == r.negate) return false;
  }
  return true;
}

std::string FieldText(const nlohmann::json& object, std::string_view dotted_path) {
  const nlohmann::json* node = &object;
  size_t start = 0;
  while (start <= dotted_path.size()) {
    size_t dot = dotted_path.find('.', start);
    std::string key(dotted_path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (!node->is_object() || !node->contains(key)) return "";
    node = &(*node)[key];
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (node->is_string()) return node->get<std::string>();
  if (node->is_null()) return "";
  return node->dump();
}

}  // namespace dljob::apiserver
