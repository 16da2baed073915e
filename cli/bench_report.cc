// See bench_report.h.
#include "cli/bench_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace dljob {
namespace {

Result<std::vector<int>> ParseRankList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || n < 1 || n > 4096) {
      return Status::InvalidArgument("--gpus: expected rank counts like 1,2,4, got \"" + item +
                                     "\"");
    }
    out.push_back(n);
  }
  if (out.empty())
    return Status::InvalidArgument("--gpus: give at least one rank count, e.g. 1,2,4");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// A strategy: its name, the letter in job names, and the dljob-train flags it adds.
struct Strategy {
  const char* name;
  char code;
  std::vector<std::string> flags;
};

const std::vector<Strategy>& Strategies() {
  static const auto* all = new std::vector<Strategy>{
      {"fused", 'f', {"--fusion_threshold_mb=64"}},
      {"per-tensor", 't', {"--fusion_threshold_mb=0"}},
      {"no-overlap", 'n', {"--fusion_threshold_mb=64", "--overlap_backward=false"}},
      {"fp16", 'x', {"--fusion_threshold_mb=64", "--fp16_allreduce"}},
      {"hierarchical", 'h', {"--fusion_threshold_mb=64", "--allreduce_alg=hierarchical"}},
      {"parameter-server", 'p', {"--fusion_threshold_mb=64", "--variable_update=parameter_server"}},
      {"2bit", 'c', {"--gradient_compression=2bit"}},
  };
  return *all;
}

std::string StrategyNames() {
  std::string names;
  for (const Strategy& s : Strategies()) names += (names.empty() ? "" : ", ") + std::string(s.name);
  return names;
}

const Strategy* FindStrategy(const std::string& name) {
  for (const Strategy& s : Strategies()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// Data sets dljob bench knows, and the suffix their runs' job names get (synthetic: none).
const std::vector<std::pair<std::string, std::string>>& DataSets() {
  static const auto* all = new std::vector<std::pair<std::string, std::string>>{
      {"synthetic", ""}, {"fashion-mnist", "-fmnist"}, {"imagenet", "-imagenet"}, {"kjv", "-kjv"}};
  return *all;
}

Result<std::vector<std::string>> ParseDataSets(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    bool known = false;
    for (const auto& [name, suffix] : DataSets()) known = known || item == name;
    if (!known) {
      return Status::InvalidArgument("--data: unknown data set \"" + item +
                                     "\" (expected synthetic, fashion-mnist, imagenet or kjv)");
    }
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  if (out.empty())
    return Status::InvalidArgument("--data: give synthetic, fashion-mnist, imagenet or kjv");
  return out;
}

std::string DataSuffix(const std::string& data) {
  for (const auto& [name, suffix] : DataSets()) {
    if (name == data) return suffix;
  }
  return "";
}

Result<std::vector<std::string>> ParseStrategies(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (FindStrategy(item) == nullptr) {
      return Status::InvalidArgument("--strategies: unknown strategy \"" + item + "\" (expected " +
                                     StrategyNames() + ")");
    }
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  if (out.empty()) {
    return Status::InvalidArgument("--strategies: give one or more of " + StrategyNames());
  }
  return out;
}

BenchRun MakeRun(const BenchOptions& o, const std::string& data, const Strategy& s, int n) {
  BenchRun run;
  run.data = data;
  run.strategy = s.name;
  run.ranks = n;
  DLJob& job = run.job;
  job.metadata.name =
      o.name_prefix + "-" + o.model + "-" + s.code + std::to_string(n) + DataSuffix(data);
  std::replace(job.metadata.name.begin(), job.metadata.name.end(), '_', '-');
  job.spec.image = o.image;
  job.spec.gpus = n;
  job.spec.command = {"dljob-train",
                      "--model=" + o.model,
                      "--data_name=" + data,
                      "--batch_size=" + std::to_string(o.batch_size),
                      "--num_batches=" + std::to_string(o.num_batches),
                      "--num_warmup_batches=" + std::to_string(o.num_warmup_batches),
                      "--display_every=" + std::to_string(std::max(1, o.num_batches / 3)),
                      "--eval=false"};
  job.spec.command.insert(job.spec.command.end(), s.flags.begin(), s.flags.end());
  if (data != "synthetic" && !o.data_dir.empty()) {
    job.spec.command.push_back("--data_dir=" + o.data_dir);
  }
  if (o.threads_per_rank > 0) {
    job.spec.env.push_back({"OMP_NUM_THREADS", std::to_string(o.threads_per_rank)});
  }
  return run;
}

std::string Fixed(std::optional<double> v, const char* format) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

}  // namespace

Result<std::vector<BenchRun>> PlanBench(const BenchOptions& o) {
  Result<std::vector<int>> ranks = ParseRankList(o.gpus);
  if (!ranks.ok()) return ranks.status();
  Result<std::vector<std::string>> strategies = ParseStrategies(o.strategies);
  if (!strategies.ok()) return strategies.status();
  Result<std::vector<std::string>> data_sets = ParseDataSets(o.data);
  if (!data_sets.ok()) return data_sets.status();
  if (o.batch_size < 1) return Status::InvalidArgument("--batch-size: must be at least 1");
  if (o.num_batches < 1) return Status::InvalidArgument("--num-batches: must be at least 1");
  if (o.threads_per_rank < 0) {
    return Status::InvalidArgument("--threads-per-rank: must be 0 (the runner's default) or more");
  }
  std::vector<BenchRun> runs;
  for (const std::string& data : *data_sets) {
    for (const std::string& strategy : *strategies) {
      for (int n : *ranks) runs.push_back(MakeRun(o, data, *FindStrategy(strategy), n));
    }
  }
  return runs;
}

std::vector<BenchRow> ScalingRows(const std::vector<BenchResult>& results) {
  // (data, strategy) → (ranks, per-rank ips) of the smallest successful run
  std::map<std::pair<std::string, std::string>, std::pair<int, double>> base;
  for (const BenchResult& r : results) {
    if (!r.images_per_sec || *r.images_per_sec <= 0) continue;
    auto it = base.find({r.data, r.strategy});
    if (it == base.end() || r.ranks < it->second.first) {
      base[{r.data, r.strategy}] = {r.ranks, *r.images_per_sec / r.ranks};
    }
  }
  std::vector<BenchRow> rows;
  for (const BenchResult& r : results) {
    BenchRow row{r.data,       r.strategy,   r.ranks, r.images_per_sec,
                 std::nullopt, std::nullopt, r.error, r.words};
    if (r.images_per_sec) {
      row.per_rank = *r.images_per_sec / r.ranks;
      if (auto it = base.find({r.data, r.strategy}); it != base.end() && it->second.second > 0) {
        row.efficiency = *row.per_rank / it->second.second;
      }
    }
    rows.push_back(row);
  }
  return rows;
}

bool CountsWords(const std::vector<BenchRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const BenchRow& r) { return r.words; });
}

std::string FormatBenchTable(const std::string& model, const std::vector<BenchRow>& rows) {
  std::string out;
  char buf[256];
  int width = 11;      // the STRATEGY column: as wide as its longest entry
  int data_width = 9;  // the DATA column, likewise
  for (const BenchRow& r : rows) {
    width = std::max(width, static_cast<int>(r.strategy.size()));
    data_width = std::max(data_width, static_cast<int>(r.data.size()));
  }
  std::snprintf(buf, sizeof buf, "%-12s %-*s %-*s %6s %12s %14s %8s\n", "MODEL", data_width, "DATA",
                width, "STRATEGY", "RANKS", CountsWords(rows) ? "WORDS/SEC" : "IMAGES/SEC",
                "PER-RANK", "SCALING");
  out += buf;
  for (const BenchRow& r : rows) {
    std::string scaling = r.efficiency ? Fixed(*r.efficiency * 100, "%.1f%%") : "-";
    std::snprintf(buf, sizeof buf, "%-12s %-*s %-*s %6d %12s %14s %8s", model.c_str(), data_width,
                  r.data.c_str(), width, r.strategy.c_str(), r.ranks,
                  Fixed(r.images_per_sec, "%.1f").c_str(), Fixed(r.per_rank, "%.1f").c_str(),
                  scaling.c_str());
    out += buf;
    if (!r.error.empty()) out += "  (" + r.error + ")";
    out += "\n";
  }
  return out;
}

nlohmann::json BenchJson(const std::string& model, int batch_size,
                         const std::vector<BenchRow>& rows) {
  nlohmann::json runs = nlohmann::json::array();
  for (const BenchRow& r : rows) {
    nlohmann::json j = {{"data", r.data}, {"strategy", r.strategy}, {"ranks", r.ranks}};
    const nlohmann::json rate = r.images_per_sec ? nlohmann::json(*r.images_per_sec) : nullptr;
    const nlohmann::json per_rank = r.per_rank ? nlohmann::json(*r.per_rank) : nullptr;
    j[r.words ? "wordsPerSec" : "imagesPerSec"] = rate;
    j[r.words ? "perRankWordsPerSec" : "perRankImagesPerSec"] = per_rank;
    j["scalingEfficiency"] = r.efficiency ? nlohmann::json(*r.efficiency) : nullptr;
    if (!r.error.empty()) j["error"] = r.error;
    runs.push_back(j);
  }
  return {{"model", model}, {"batchSizePerRank", batch_size}, {"runs", runs}};
}

std::string BenchSvg(const std::string& model, const std::vector<BenchRow>& rows) {
  constexpr double kW = 640, kH = 400, kLeft = 70, kRight = 150, kTop = 40, kBottom = 50;
  int max_ranks = 1;
  double max_ips = 1;
  std::set<std::string> data_sets;
  for (const BenchRow& r : rows) data_sets.insert(r.data);
  // One series per strategy, or per "strategy, data" when several data sets ran.
  std::map<std::string, std::vector<const BenchRow*>> by_strategy;
  for (const BenchRow& r : rows) {
    max_ranks = std::max(max_ranks, r.ranks);
    if (!r.images_per_sec) continue;
    by_strategy[data_sets.size() > 1 ? r.strategy + ", " + r.data : r.strategy].push_back(&r);
    max_ips = std::max(max_ips, *r.images_per_sec);
  }
  // The ideal lines may go above the measured points.
  for (auto& [strategy, points] : by_strategy) {
    const BenchRow* base = points.front();
    max_ips = std::max(max_ips, *base->per_rank * max_ranks);
  }
  auto x = [&](double ranks) { return kLeft + (kW - kLeft - kRight) * ranks / max_ranks; };
  auto y = [&](double ips) {
    return kH - kBottom - (kH - kTop - kBottom) * ips / (max_ips * 1.05);
  };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kLeft << "\" y=\"24\" font-size=\"15\">dljob bench: " << model
    << (CountsWords(rows) ? " words/sec" : " images/sec") << " vs ranks</text>\n"
    << "<line x1=\"" << kLeft << "\" y1=\"" << y(0) << "\" x2=\"" << x(max_ranks) << "\" y2=\""
    << y(0) << "\" stroke=\"black\"/>\n"
    << "<line x1=\"" << kLeft << "\" y1=\"" << y(0) << "\" x2=\"" << kLeft << "\" y2=\"" << kTop
    << "\" stroke=\"black\"/>\n";
  std::set<int> ticks;
  for (const BenchRow& r : rows) ticks.insert(r.ranks);
  for (int t : ticks) {
    s << "<text x=\"" << x(t) << "\" y=\"" << y(0) + 18 << "\" text-anchor=\"middle\">" << t
      << "</text>\n";
  }
  s << "<text x=\"" << (kLeft + x(max_ranks)) / 2 << "\" y=\"" << kH - 12
    << "\" text-anchor=\"middle\">ranks</text>\n";
  for (int i = 0; i <= 4; ++i) {
    const double v = max_ips * 1.05 * i / 4;
    s << "<text x=\"" << kLeft - 6 << "\" y=\"" << y(v) + 4 << "\" text-anchor=\"end\">"
      << Fixed(v, "%.0f") << "</text>\n";
  }
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  int index = 0;
  for (const auto& [strategy, points] : by_strategy) {
    const char* color = colors[index % 4];
    const BenchRow* base = points.front();
    s << "<line x1=\"" << x(base->ranks) << "\" y1=\"" << y(*base->images_per_sec) << "\" x2=\""
      << x(max_ranks) << "\" y2=\"" << y(*base->per_rank * max_ranks) << "\" stroke=\"" << color
      << "\" stroke-dasharray=\"4 4\" opacity=\"0.6\"/>\n";
    s << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (const BenchRow* p : points) s << x(p->ranks) << "," << y(*p->images_per_sec) << " ";
    s << "\"/>\n";
    for (const BenchRow* p : points) {
      s << "<circle cx=\"" << x(p->ranks) << "\" cy=\"" << y(*p->images_per_sec)
        << "\" r=\"4\" fill=\"" << color << "\"/>\n";
    }
    const double ly = kTop + 20 + 36 * index;
    s << "<line x1=\"" << kW - kRight + 15 << "\" y1=\"" << ly << "\" x2=\"" << kW - kRight + 40
      << "\" y2=\"" << ly << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>\n"
      << "<text x=\"" << kW - kRight + 46 << "\" y=\"" << ly + 4 << "\">" << strategy << "</text>\n"
      << "<text x=\"" << kW - kRight + 46 << "\" y=\"" << ly + 18
      << "\" fill=\"#666\">dashed: ideal</text>\n";
    ++index;
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace dljob
