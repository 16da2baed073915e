// Renders charts/dljob without Helm, so users without Helm get plain manifests
// (charts/manifests/dljob.yaml) made from the same templates `helm install` uses.
//
// The chart's templates keep to a small subset of Helm's Go templates, and this renderer
// implements exactly that subset; anything else is an error naming the template and line, so a
// template edit that strays outside it fails the test that keeps the plain manifests in sync:
//
//   {{ .Values.a.b }}  {{ .Release.Name }}  {{ .Release.Namespace }}  {{ .Chart.AppVersion }}
//   {{ . }}  {{ .a.b }}  {{ $.Values.a }}           (`.` is what an enclosing `with` chose)
//   {{ X | quote }}  {{ toYaml X | nindent N }}  {{ X | toYaml | indent N }}
//   {{ if X }} … {{ else }} … {{ end }}            (Go truthiness: false, 0, "", null, empty)
//   {{ with X }} … {{ else }} … {{ end }}          (`.` is X inside, when X is truthy)
//   {{ if gt X 1 }}  eq ne gt ge lt le  not X  and X Y…  or X Y…
//   {{ .Files.Get "dashboards/dljob.json" }}     (the chart's files outside templates/)
//   {{- … -}}                                       (trim whitespace before / after)
// where X is a reference, a "string" without spaces, or a whole number.
//
// A value the template names but the values do not set is an error (Helm would print
// "<no value>"). Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace dljob::chart {

struct RenderContext {
  nlohmann::json values;  // values.yaml with any overrides applied
  nlohmann::json chart;   // Chart.yaml as JSON (Name, Version, AppVersion are read)
  std::map<std::string, std::string> files;  // .Files: path in the chart → content
  std::string release_name = "dljob";
  std::string release_namespace = "dljob-system";
};

// Renders one template. `name` is used in error messages ("deployment.yaml:12: …").
Result<std::string> RenderTemplate(const std::string& name, const std::string& text,
                                   const RenderContext& context);

// Applies `--set a.b=c` overrides: the value is typed as Helm types it (3 → int, true → bool,
// {a,b} → a list of strings, anything else → string); intermediate maps are created.
Status ApplySet(nlohmann::json& values, const std::string& assignment);

// Renders a whole chart directory: the values (values.yaml, then `sets`) are first checked
// against values.schema.json when the chart has one (values_schema.h: Helm's check and its
// message); then the CRDs under crds/ (verbatim) and every templates/*.yaml,
// documents ordered as Helm installs them (Namespace, CRDs, ServiceAccount, RBAC, Service,
// Deployment). When `with_namespace` is set a Namespace object for the release comes first.
// Reads files (the only I/O here).
Result<std::string> RenderChart(const std::string& chart_dir, const std::vector<std::string>& sets,
                                const std::string& release_name,
                                const std::string& release_namespace, bool with_namespace);

}  // namespace dljob::chart
