#include "cli/node_report.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "base/json_fields.h"
#include "jobs/codec.h"
#include "scheduler/kube_objects.h"

namespace dljob {
namespace {

using Json = nlohmann::json;

NodeRow RowOf(const Json& node) {
  scheduler::Node n = scheduler::SchedulerNodeOf(node);
  NodeRow row;
  row.name = n.name;
  row.allocatable = n.allocatable;
  auto label = [&n](const char* key) {
    auto it = n.labels.find(key);
    return it == n.labels.end() ? std::string() : it->second;
  };
  row.gpu_product = label(scheduler::kGpuProductLabel);
  row.clique = label(scheduler::kGpuCliqueLabel);
  row.zone = label(scheduler::kZoneLabel);
  row.rack = label(scheduler::kDefaultRackLabel);
  row.cordoned = scheduler::NodeCordoned(node);
  row.ready = scheduler::NodeReady(node);
  row.taints = std::move(n.taints);
  return row;
}

void Count(ProductSummary& s, const NodeRow& n) {
  s.nodes += 1;
  s.gpus += n.allocatable.gpus;
  s.allocated += n.requested.gpus;
  if (!n.TakesNewPods()) return;
  s.free += n.FreeGpus();
  if (n.FreeGpus() > s.largest_free) {  // nodes come by name: the first of equals wins
    s.largest_free = n.FreeGpus();
    s.largest_free_node = n.name;
  }
}

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

std::string TaintText(const scheduler::Taint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

std::string Taints(const NodeRow& n) {
  std::string out;
  for (const scheduler::Taint& t : n.taints) out += (out.empty() ? "" : ",") + TaintText(t);
  return OrDash(out);
}

std::string Largest(const ProductSummary& s) {
  if (s.largest_free_node.empty()) return "0";
  return std::to_string(s.largest_free) + " (" + s.largest_free_node + ")";
}

std::vector<std::string> SummaryRow(const ProductSummary& s, const std::string& name) {
  return {name,
          std::to_string(s.nodes),
          std::to_string(s.gpus),
          std::to_string(s.allocated),
          std::to_string(s.free),
          Largest(s)};
}

Json SummaryJson(const ProductSummary& s) {
  Json out = {{"nodes", s.nodes},
              {"gpus", s.gpus},
              {"allocated", s.allocated},
              {"free", s.free},
              {"largestFree", s.largest_free}};
  if (!s.largest_free_node.empty()) out["largestFreeNode"] = s.largest_free_node;
  return out;
}

Json ReportJson(const NodeReport& report) {
  Json nodes = Json::array();
  for (const NodeRow& n : report.nodes) {
    Json taints = Json::array();
    for (const scheduler::Taint& t : n.taints) {
      Json taint = {{"key", t.key}, {"effect", t.effect}};
      if (!t.value.empty()) taint["value"] = t.value;
      taints.push_back(std::move(taint));
    }
    nodes.push_back({
        {"name", n.name},
        {"gpuProduct", n.gpu_product},
        {"gpuClique", n.clique},
        {"zone", n.zone},
        {"rack", n.rack},
        {"schedulable", n.Schedulable()},
        {"cordoned", n.cordoned},
        {"ready", n.ready},
        {"taints", std::move(taints)},
        {"gpus",
         {{"allocatable", n.allocatable.gpus},
          {"allocated", n.requested.gpus},
          {"free", n.FreeGpus()}}},
        {"cpuMilli",
         {{"allocatable", n.allocatable.cpu_milli}, {"requested", n.requested.cpu_milli}}},
        {"memoryMiB",
         {{"allocatable", n.allocatable.memory_mib}, {"requested", n.requested.memory_mib}}},
        {"pods", {{"allocatable", n.allocatable.pods}, {"requested", n.requested.pods}}},
    });
  }
  Json products = Json::array();
  for (const ProductSummary& p : report.products) {
    Json s = SummaryJson(p);
    s["gpuProduct"] = p.gpu_product;
    products.push_back(std::move(s));
  }
  Json summary = SummaryJson(report.total);
  summary["products"] = std::move(products);
  summary["unavailableFree"] = report.unavailable_free;
  return {{"nodes", std::move(nodes)}, {"summary", std::move(summary)}};
}

std::string NodeTable(const NodeReport& report, bool wide) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NAME", "GPUS", "ALLOCATED", "FREE", "PRODUCT", "CLIQUE", "SCHEDULABLE"});
  if (wide) {
    for (const char* c : {"CPU", "MEMORY", "PODS", "ZONE", "RACK", "TAINTS"}) rows[0].push_back(c);
  }
  for (const NodeRow& n : report.nodes) {
    std::vector<std::string> row = {n.name,
                                    std::to_string(n.allocatable.gpus),
                                    std::to_string(n.requested.gpus),
                                    std::to_string(n.FreeGpus()),
                                    OrDash(n.gpu_product),
                                    OrDash(n.clique),
                                    n.Schedulable()};
    if (wide) {
      row.push_back(FormatCores(n.requested.cpu_milli) + "/" +
                    FormatCores(n.allocatable.cpu_milli));
      row.push_back(FormatMib(n.requested.memory_mib) + "/" + FormatMib(n.allocatable.memory_mib));
      row.push_back(std::to_string(n.requested.pods) + "/" + std::to_string(n.allocatable.pods));
      row.push_back(OrDash(n.zone));
      row.push_back(OrDash(n.rack));
      row.push_back(Taints(n));
    }
    rows.push_back(std::move(row));
  }
  return RenderTable(rows);
}

std::string SummaryTable(const NodeReport& report) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"PRODUCT", "NODES", "GPUS", "ALLOCATED", "FREE", "LARGEST FREE"});
  for (const ProductSummary& p : report.products) {
    rows.push_back(SummaryRow(p, p.gpu_product.empty() ? "(unlabelled)" : p.gpu_product));
  }
  rows.push_back(SummaryRow(report.total, "total"));
  std::string out = RenderTable(rows);
  if (report.unavailable_free > 0) {
    out += "FREE leaves out " + std::to_string(report.unavailable_free) +
           " unallocated GPUs on cordoned or NotReady nodes.\n";
  }
  return out;
}

}  // namespace

int64_t NodeRow::FreeGpus() const {
  return std::max<int64_t>(0, allocatable.gpus - requested.gpus);
}

std::string NodeRow::Schedulable() const {
  if (cordoned) return ready ? "cordoned" : "cordoned,NotReady";
  if (!ready) return "NotReady";
  for (const scheduler::Taint& t : taints) {
    if (t.effect == "NoSchedule" || t.effect == "NoExecute") return "yes (tainted)";
  }
  return "yes";
}

NodeReport BuildNodeReport(const std::vector<Json>& nodes, const std::vector<Json>& pods) {
  NodeReport report;
  std::map<std::string, size_t> index;
  for (const Json& node : nodes) report.nodes.push_back(RowOf(node));
  std::sort(report.nodes.begin(), report.nodes.end(),
            [](const NodeRow& a, const NodeRow& b) { return a.name < b.name; });
  for (size_t i = 0; i < report.nodes.size(); ++i) index[report.nodes[i].name] = i;
  for (const Json& pod : pods) {
    auto it = index.find(StringAt(FieldOf(pod, "spec"), "nodeName"));
    if (it == index.end()) continue;
    scheduler::Resources r = scheduler::PodRequests(pod);
    scheduler::Resources& to = report.nodes[it->second].requested;
    to.gpus += r.gpus;
    to.cpu_milli += r.cpu_milli;
    to.memory_mib += r.memory_mib;
    to.pods += r.pods;
  }
  std::map<std::string, ProductSummary> products;
  for (const NodeRow& n : report.nodes) {
    Count(report.total, n);
    if (!n.TakesNewPods()) report.unavailable_free += n.FreeGpus();
    if (n.allocatable.gpus == 0) continue;
    ProductSummary& p = products[n.gpu_product];
    p.gpu_product = n.gpu_product;
    Count(p, n);
  }
  for (auto& [name, p] : products) report.products.push_back(std::move(p));
  return report;
}

std::string FormatNodeReport(const NodeReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::kJson:
      return ReportJson(report).dump(2) + "\n";
    case OutputFormat::kYaml:
      return JsonToYaml(ReportJson(report));
    default:
      return NodeTable(report, format == OutputFormat::kWide) + "\n" + SummaryTable(report);
  }
}

std::string FormatCores(int64_t milli) {
  char buf[32];
  if (milli % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(milli / 1000));
  } else if (milli < 1000) {
    std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(milli));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(milli) / 1000);
  }
  return buf;
}

std::string FormatMib(int64_t mib) {
  if (mib >= 1024) return std::to_string(mib / 1024) + "Gi";
  return std::to_string(mib) + "Mi";
}

}  // namespace dljob
