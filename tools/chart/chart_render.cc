// See chart_render.h.
#include "tools/chart/chart_render.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

#include "base/env.h"
#include "jobs/codec.h"
#include "tools/chart/values_schema.h"

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

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
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

// What a template sees: `$` is the root ({Values, Release, Chart}), `.` the current value (the
// root, or what an enclosing `with` chose), and `.Files` the chart's files.
// In the body of a `with` that is not taken `.` has no value: references from it are not checked.
struct Scope {
  const json& root;
  const json& dot;
  const RenderContext& ctx;
  bool dot_known = true;
};

json RootOf(const RenderContext& ctx) {
  return {{"Values", ctx.values},
          {"Release", {{"Name", ctx.release_name}, {"Namespace", ctx.release_namespace}}},
          {"Chart",
           {{"Name", ctx.chart.value("name", "")},
            {"Version", ctx.chart.value("version", "")},
            {"AppVersion", ctx.chart.value("appVersion", "")}}}};
}

// `.`, `.a.b` (from the current value), `$`, `$.a.b` (from the root).
Result<json> Lookup(const std::string& path, const Scope& scope) {
  const bool from_root = path[0] == '$';
  const json* node = from_root ? &scope.root : &scope.dot;
  std::string rest = path.substr(1);
  if (!from_root && !scope.dot_known) return json();
  if (from_root && !rest.empty()) {
    if (rest[0] != '.') return Status::InvalidArgument("unsupported reference \"" + path + "\"");
    rest = rest.substr(1);
  }
  if (rest.empty()) return *node;
  std::istringstream parts(rest);
  for (std::string key; std::getline(parts, key, '.');) {
    if (!node->is_object() || !node->contains(key)) {
      if (node == &scope.root) {
        return Status::InvalidArgument("unsupported reference \"" + path + "\"");
      }
      return Status::InvalidArgument(path + " is not set in the values");
    }
    node = &(*node)[key];
  }
  return *node;
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

bool Truthy(const json& v);

// One argument: a reference, a "string" (no spaces) or a number.
Result<json> Term(const std::string& word, const Scope& scope) {
  if (word[0] == '.' || word[0] == '$') return Lookup(word, scope);
  if (word.size() >= 2 && word.front() == '"' && word.back() == '"') {
    return json(word.substr(1, word.size() - 2));
  }
  if (std::all_of(word.begin(), word.end(), ::isdigit)) return json(std::stoll(word));
  return Status::InvalidArgument("unsupported argument \"" + word + "\"");
}

// Go templates' comparison of two numbers (or two strings, for eq and ne).
Result<json> Compare(const std::string& op, const json& a, const json& b) {
  if (op == "eq") return json(a == b);
  if (op == "ne") return json(a != b);
  if (!a.is_number() || !b.is_number()) {
    return Status::InvalidArgument(op + " compares numbers, got " + a.dump() + " and " + b.dump());
  }
  double x = a.get<double>();
  double y = b.get<double>();
  if (op == "gt") return json(x > y);
  if (op == "ge") return json(x >= y);
  if (op == "lt") return json(x < y);
  return json(x <= y);
}

// The head of a pipeline: a term, or one of the functions the chart uses.
Result<json> EvalHead(const std::vector<std::string>& w, const Scope& scope) {
  static const std::set<std::string> kCompare = {"eq", "ne", "gt", "ge", "lt", "le"};
  std::vector<json> args;
  for (size_t i = 1; i < w.size(); ++i) {
    Result<json> v = Term(w[i], scope);
    if (!v.ok()) return v.status();
    args.push_back(std::move(v).value());
  }
  if (w.size() == 1) return Term(w[0], scope);
  if (w[0] == "toYaml" && args.size() == 1) return json(ToYaml(args[0]));
  if (w[0] == "not" && args.size() == 1) return json(!Truthy(args[0]));
  if ((w[0] == "and" || w[0] == "or") && args.size() >= 2) {
    for (const json& a : args) {  // Go returns the first deciding argument
      if (Truthy(a) == (w[0] == "or")) return a;
    }
    return args.back();
  }
  if (kCompare.count(w[0]) && args.size() == 2) return Compare(w[0], args[0], args[1]);
  if (w[0] == ".Files.Get" && args.size() == 1 && args[0].is_string()) {
    auto it = scope.ctx.files.find(args[0].get<std::string>());
    if (it == scope.ctx.files.end()) {
      return Status::InvalidArgument("no file " + args[0].dump() + " in the chart");
    }
    return json(it->second);
  }
  return Status::InvalidArgument("unsupported action \"" + Join(w) + "\"");
}

Result<json> EvalPipeline(const std::string& expr, const Scope& scope) {
  std::vector<std::string> stages;
  std::istringstream in(expr);
  for (std::string s; std::getline(in, s, '|');) stages.push_back(Trim(s));
  std::vector<std::string> first = Words(stages.front());
  if (first.empty()) return Status::InvalidArgument("empty action");
  Result<json> head = EvalHead(first, scope);
  if (!head.ok()) return head.status();
  json value = std::move(head).value();
  for (size_t i = 1; i < stages.size(); ++i) {
    std::vector<std::string> w = Words(stages[i]);
    if (w.size() == 1 && w[0] == "quote") {
      value = json(Text(value)).dump();
    } else if (w.size() == 1 && w[0] == "toYaml") {
      value = ToYaml(value);
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
// checked for well-formedness and for values that are not set.
Status RenderRange(const std::string& name, const std::vector<Token>& tokens, size_t& i,
                   const Scope& scope, bool emit, std::string& out, std::string& stop) {
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
    const bool is_if = t.text.rfind("if ", 0) == 0;
    const bool is_with = t.text.rfind("with ", 0) == 0;
    if (is_if || is_with) {
      Result<json> cond = EvalPipeline(t.text.substr(is_if ? 3 : 5), scope);
      if (!cond.ok()) return Error(name, t.line, cond.status().message());
      bool take = Truthy(*cond);
      Scope inner{scope.root, is_with && take ? *cond : scope.dot, scope.ctx,
                  scope.dot_known && (!is_with || take)};
      std::string inner_stop;
      ++i;
      if (Status s = RenderRange(name, tokens, i, inner, emit && take, out, inner_stop); !s.ok()) {
        return s;
      }
      if (inner_stop == "else") {
        ++i;
        if (Status s = RenderRange(name, tokens, i, scope, emit && !take, out, inner_stop);
            !s.ok()) {
          return s;
        }
      }
      if (inner_stop != "end")
        return Error(name, t.line, (is_if ? "if" : "with") + std::string(" without end"));
      continue;
    }
    Result<json> value = EvalPipeline(t.text, scope);
    if (!value.ok()) return Error(name, t.line, value.status().message());
    if (emit) out += Text(*value);
  }
  stop.clear();
  return Status::Ok();
}

// The YAML documents of one template's output (split at "---" lines), blank ones left out.
std::vector<std::string> SplitDocuments(const std::string& text) {
  std::vector<std::string> docs(1);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line == "---") {
      docs.emplace_back();
    } else {
      docs.back() += line + "\n";
    }
  }
  std::erase_if(docs, [](const std::string& d) { return Trim(d).empty(); });
  return docs;
}

int KindOrder(const std::string& manifest) {
  // Helm's install order for the kinds the chart has; others (ServiceMonitor, PodMonitor) last.
  static const std::vector<std::string> kOrder = {"Namespace",           "CustomResourceDefinition",
                                                  "PodDisruptionBudget", "ServiceAccount",
                                                  "ConfigMap",           "ClusterRole",
                                                  "ClusterRoleBinding",  "Role",
                                                  "RoleBinding",         "Service",
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
  const json root = RootOf(context);
  Scope scope{root, root, context};
  if (Status s = RenderRange(name, *tokens, i, scope, true, out, stop); !s.ok()) return s;
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
  if (raw.size() >= 2 && raw.front() == '{' && raw.back() == '}') {  // Helm's list: {a,b}
    value = json::array();
    std::istringstream items(raw.substr(1, raw.size() - 2));
    for (std::string item; std::getline(items, item, ',');) value.push_back(item);
  } else if (raw == "true" || raw == "false") {
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
  auto read = [&](const std::string& file) -> Result<json> {
    Result<std::string> text = DefaultEnv().ReadFile((fs::path(chart_dir) / file).string());
    if (!text.ok()) return text.status();
    Result<json> tree = YamlToJson(*text);
    if (!tree.ok()) return tree.status().WithContext(file);
    return tree;
  };
  Result<json> chart = read("Chart.yaml");
  if (!chart.ok()) return chart.status();
  ctx.chart = std::move(chart).value();
  Result<json> values = read("values.yaml");
  if (!values.ok()) return values.status();
  ctx.values = std::move(values).value();
  for (const std::string& set : sets) {
    if (Status s = ApplySet(ctx.values, set); !s.ok()) return s;
  }
  if (fs::exists(fs::path(chart_dir) / "values.schema.json")) {
    Result<std::string> text =
        DefaultEnv().ReadFile((fs::path(chart_dir) / "values.schema.json").string());
    if (!text.ok()) return text.status();
    json schema = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (schema.is_discarded()) return Status::InvalidArgument("values.schema.json: not JSON");
    if (Status s = ValidateValues(schema, ctx.values, ctx.chart.value("name", "chart")); !s.ok()) {
      return s;
    }
  }
  // .Files: what the templates may read (Helm's .Files minus templates/, which it hides too).
  for (const auto& entry : fs::recursive_directory_iterator(chart_dir)) {
    std::string rel = fs::relative(entry.path(), chart_dir).generic_string();
    if (!entry.is_regular_file() || rel.rfind("templates/", 0) == 0) continue;
    Result<std::string> text = DefaultEnv().ReadFile(entry.path().string());
    if (!text.ok()) return text.status();
    ctx.files[rel] = std::move(text).value();
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
      for (std::string& doc : SplitDocuments(*rendered)) docs.emplace_back(name, std::move(doc));
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
