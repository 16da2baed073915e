// dljob-render-chart: renders charts/dljob into plain Kubernetes manifests (see chart_render.h).
//
//   dljob-render-chart [--chart charts/dljob] [--name dljob] [--namespace dljob-system]
//                      [--set key.path=value]... [--no-namespace]
#include <iostream>

#include <CLI/CLI.hpp>

#include "tools/chart/chart_render.h"

int main(int argc, char** argv) {
  CLI::App app{"Render the dljob Helm chart into plain manifests (for kubectl apply -f)",
               "dljob-render-chart"};
  std::string chart = "charts/dljob";
  std::string name = "dljob";
  std::string ns = "dljob-system";
  std::vector<std::string> sets;
  bool no_namespace = false;
  app.add_option("--chart", chart, "Chart directory")->capture_default_str();
  app.add_option("--name", name, "Release name")->capture_default_str();
  app.add_option("--namespace,-n", ns, "Namespace the operator is installed in")
      ->capture_default_str();
  app.add_option("--set", sets, "Override a value, e.g. --set replicas=3");
  app.add_flag("--no-namespace", no_namespace, "Do not emit a Namespace object");
  CLI11_PARSE(app, argc, argv);

  auto rendered = dljob::chart::RenderChart(chart, sets, name, ns, !no_namespace);
  if (!rendered.ok()) {
    std::cerr << "dljob-render-chart: " << rendered.status().message() << "\n";
    return 1;
  }
  std::cout << *rendered;
  return 0;
}
