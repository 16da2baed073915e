// See chart_render.h.
#include "tools/chart/chart_render.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "base/env.h"
#include "jobs/codec.h"

namespace dljob::chart {
namespace {

using nlohmann::json;

struct Token {
  bool action = false;
  std::string text;  // literal text, or the action without braces and trim markers
  int line = 1;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string Trim(const std::string& s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && IsSpace(s[b])) ++b;
  while (e > b && IsSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

Status Error(const std::string& name, int line, const std::string& what) {
  return Status::InvalidArgument(name + ":" + std::to_string(line) + ": " + what);
}

Result<std::vector<Token>> Tokenize(const std::string& name, const std::string& text) {
  std::vector<Token> tokens;
  size_t pos = 0;
  int line = 1;
  bool trim_next = false;
  while (pos < text.size()) {
    size_t open = text.find("{{", pos);
    std::string literal =
        text.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    if (trim_next) {
      size_t keep = literal.find_first_not_of(" \t\r\n");
      literal.erase(0, keep == std::string::npos ? literal.size() : keep);
    }
    bool trim_prev = open != std::string::npos && text.compare(open, 3, "{{-") == 0;
    if (trim_prev) {
      while (!literal.empty() && IsSpace(literal.back())) literal.pop_back();
    }
    tokens.push_back({false, literal, line});
    line += static_cast<int>(std::count(
        text.begin() + static_cast<long>(pos),
        open == std::string::npos ? text.end() : text.begin() + static_cast<long>(open), '\n'));
    if (open == std::string::npos) break;
    size_t close = text.find("}}", open);
    if (close == std::string::npos) return Error(name, line, "unclosed {{");
    size_t body_begin = open + (trim_prev ? 3 : 2);
    size_t body_end = close;
    trim_next = close > body_begin && text[close - 1] == '-';
    if (trim_next) --body_end;
    tokens.push_back({true, Trim(text.substr(body_begin, body_end - body_begin)), line});
    line += static_cast<int>(std::count(text.begin() + static_cast<long>(open),
                                        text.begin() + static_cast<long>(close), '\n'));
    pos = close + 2;
  }
  return tokens;
}

Result<json> Lookup(const std::string& path, const RenderContext& ctx) {
  auto field = [&](const json& root, const std::string& rest) -> Result<json> {
    const json* node = &root;
    std::istringstream parts(rest);
    for (std::string key; std::getline(parts, key, '.');) {
      if (!node->is_object() || !node->contains(key)) {
        return Status::InvalidArgument(path + " is not set in the values");
      }
      node = &(*node)[key];
    }
    return *node;
  };
  if (path == ".Release.Name") return json(ctx.release_name);
  if (path == ".Release.Namespace") return json(ctx.release_namespace);
  if (path == ".Chart.Name") return json(ctx.chart.value("name", ""));
  if (path == ".Chart.Version") return json(ctx.chart.value("version", ""));
  if (path == ".Chart.AppVersion") return json(ctx.chart.value("appVersion", ""));
  if (path.rfind(".Values.", 0) == 0) return field(ctx.values, path.substr(8));
  return Status::InvalidArgument("unsupported reference \"" + path + "\"");
}

std::string Text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

std::string Indent(const std::string& s, size_t n) {
  std::string pad(n, ' ');
  std::string out = pad;
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

std::string ToYaml(const json& v) {
  std::string out = JsonToYaml(v);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

Result<json> EvalPipeline(const std::string& expr, const RenderContext& ctx) {
  std::vector<std::string> stages;
  std::istringstream in(expr);
  for (std::string s; std::getline(in, s, '|');) stages.push_back(Trim(s));
  std::vector<std::string> first = Words(stages.front());
  if (first.empty()) return Status::InvalidArgument("empty action");
  json value;
  if (first[0] == "toYaml" && first.size() == 2) {
    Result<json> v = Lookup(first[1], ctx);
    if (!v.ok()) return v.status();
    value = ToYaml(*v);
  } else if (first.size() == 1) {
    Result<json> v = Lookup(first[0], ctx);
    if (!v.ok()) return v.status();
    value = std::move(v).value();
  } else {
    return Status::InvalidArgument("unsupported action \"" + stages.front() + "\"");
  }
  for (size_t i = 1; i < stages.size(); ++i) {
    std::vector<std::string> w = Words(stages[i]);
    if (w.size() == 1 && w[0] == "quote") {
      value = json(Text(value)).dump();
    } else if (w.size() == 2 && (w[0] == "nindent" || w[0] == "indent") &&
               std::all_of(w[1].begin(), w[1].end(), ::isdigit)) {
      std::string indented = Indent(Text(value), std::stoul(w[1]));
      value = w[0] == "nindent" ? "\n" + indented : indented;
    } else {
      return Status::InvalidArgument("unsupported function \"" + stages[i] + "\"");
    }
  }
  return value;
}

bool Truthy(const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_object() || v.is_array()) return !v.empty();
  return false;
}

// Renders tokens from `i` until an `else` or `end` at this nesting level (returned in `stop`) or
// the end of input. Output is appended only when `emit` is set, so skipped branches are still
// checked for well-formedness.
Status RenderRange(const std::string& name, const std::vector<Token>& tokens, size_t& i,
                   const RenderContext& ctx, bool emit, std::string& out, std::string& stop) {
  for (; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (!t.action) {
      if (emit) out += t.text;
      continue;
    }
    if (t.text == "else" || t.text == "end") {
      stop = t.text;
      return Status::Ok();
    }
    if (t.text.rfind("if ", 0) == 0) {
      Result<json> cond = EvalPipeline(t.text.substr(3), ctx);
      if (!cond.ok()) return Error(name, t.line, cond.status().message());
      bool take = Truthy(*cond);
      std::string inner_stop;
      ++i;
      if (Status s = RenderRange(name, tokens, i, ctx, emit && take, out, inner_stop); !s.ok()) {
        return s;
      }
      if (inner_stop == "else") {
        ++i;
        if (Status s = RenderRange(name, tokens, i, ctx, emit && !take, out, inner_stop); !s.ok()) {
          return s;
        }
      }
      if (inner_stop != "end") return Error(name, t.line, "if without end");
      continue;
    }
    Result<json> value = EvalPipeline(t.text, ctx);
    if (!value.ok()) return Error(name, t.line, value.status().message());
    if (emit) out += Text(*value);
  }
  stop.clear();
  return Status::Ok();
}

int KindOrder(const std::string& manifest) {
  static const std::vector<std::string> kOrder = {"Namespace",          "CustomResourceDefinition",
                                                  "ServiceAccount",     "ClusterRole",
                                                  "ClusterRoleBinding", "Role",
                                                  "RoleBinding",        "Service",
                                                  "Deployment"};
  std::istringstream in(manifest);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("kind: ", 0) == 0) {
      auto it = std::find(kOrder.begin(), kOrder.end(), Trim(line.substr(6)));
      return static_cast<int>(it - kOrder.begin());
    }
  }
  return static_cast<int>(kOrder.size());
}

}  // namespace

Result<std::string> RenderTemplate(const std::string& name, const std::string& text,
                                   const RenderContext& context) {
  Result<std::vector<Token>> tokens = Tokenize(name, text);
  if (!tokens.ok()) return tokens.status();
  std::string out;
  std::string stop;
  size_t i = 0;
  if (Status s = RenderRange(name, *tokens, i, context, true, out, stop); !s.ok()) return s;
  if (!stop.empty()) return Error(name, (*tokens)[i].line, stop + " without if");
  return out;
}

Status ApplySet(json& values, const std::string& assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("--set " + assignment + ": expected key.path=value");
  }
  std::string raw = assignment.substr(eq + 1);
  json value = raw;
  if (raw == "true" || raw == "false") {
    value = raw == "true";
  } else if (!raw.empty() && std::all_of(raw.begin(), raw.end(), ::isdigit)) {
    value = std::stoll(raw);
  }
  json* node = &values;
  std::istringstream parts(assignment.substr(0, eq));
  for (std::string key; std::getline(parts, key, '.');) {
    if (!node->is_object()) *node = json::object();
    node = &(*node)[key];
  }
  *node = value;
  return Status::Ok();
}

Result<std::string> RenderChart(const std::string& chart_dir, const std::vector<std::string>& sets,
                                const std::string& release_name,
                                const std::string& release_namespace, bool with_namespace) {
  namespace fs = std::filesystem;
  RenderContext ctx;
  ctx.release_name = release_name;
  ctx.release_namespace = release_namespace;
  for (const char* file : {"Chart.yaml", "values.yaml"}) {
    Result<std::string> text = DefaultEnv().ReadFile((fs::path(chart_dir) / file).string());
    if (!text.ok()) return text.status();
    Result<json> tree = YamlToJson(*text);
    if (!tree.ok()) return tree.status().WithContext(file);
    (std::string(file) == "Chart.yaml" ? ctx.chart : ctx.values) = std::move(tree).value();
  }
  for (const std::string& set : sets) {
    if (Status s = ApplySet(ctx.values, set); !s.ok()) return s;
  }
  std::vector<std::pair<std::string, std::string>> docs;  // (source, manifest)
  if (with_namespace) {
    docs.emplace_back("namespace", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " +
                                       release_namespace + "\n");
  }
  for (const char* sub : {"crds", "templates"}) {
    fs::path dir = fs::path(chart_dir) / sub;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".yaml") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      Result<std::string> text = DefaultEnv().ReadFile(file.string());
      if (!text.ok()) return text.status();
      std::string name = std::string(sub) + "/" + file.filename().string();
      Result<std::string> rendered =
          std::string(sub) == "crds" ? *text : RenderTemplate(name, *text, ctx);
      if (!rendered.ok()) return rendered.status();
      if (!Trim(*rendered).empty()) docs.emplace_back(name, *rendered);
    }
  }
  std::stable_sort(docs.begin(), docs.end(), [](const auto& a, const auto& b) {
    return KindOrder(a.second) < KindOrder(b.second);
  });
  std::string out;
  for (const auto& [source, manifest] : docs) {
    out += "---\n# Source: " + ctx.chart.value("name", "chart") + "/" + source + "\n" + manifest;
    if (!out.empty() && out.back() != '\n') out += '\n';
  }
  return out;
}

}  // namespace dljob::chart
