// See options.h.
#include "operator/app/options.h"

#include <CLI/CLI.hpp>

#include "operator/app/self_budget.h"
#include "scheduler/placement_policy.h"
#include "scheduler/queue/queue_policy.h"

namespace dljob::op {
namespace {

// Seconds flags accept "15" or "15s", as the chart and kubectl users write them; positive unless
// `zero_ok`.
std::string SecondsFlag(CLI::App& app, const std::string& name, std::chrono::seconds* out,
                        const std::string& help, bool zero_ok = false) {
  app.add_option_function<std::string>(
         name,
         [out, name, zero_ok](const std::string& v) {
           std::string digits = v;
           if (!digits.empty() && digits.back() == 's') digits.pop_back();
           size_t used = 0;
           long long n = -1;
           try {
             n = std::stoll(digits, &used);
           } catch (const std::exception&) {
             used = 0;
           }
           if (used != digits.size() || digits.empty() || n < (zero_ok ? 0 : 1)) {
             throw CLI::ValidationError(name, std::string("must be a ") +
                                                  (zero_ok ? "non-negative" : "positive") +
                                                  " number of seconds, got \"" + v + "\"");
           }
           *out = std::chrono::seconds(n);
         },
         help)
      ->default_str(std::to_string(out->count()));
  return name;
}

// Where the operator finds the API server and how hard it may press it.
void AddClientFlags(CLI::App& app, OperatorOptions& o) {
  app.add_option("--kubeconfig", o.kubeconfig,
                 "kubeconfig file; default $KUBECONFIG, in-cluster, then ~/.kube/config");
  app.add_option("--context", o.context, "kubeconfig context (default: current-context)");
  app.add_option("--namespace", o.watch_namespace, "only watch this namespace (default: all)");
  app.add_option("--cluster-domain", o.cluster_domain, "the cluster's DNS domain")
      ->capture_default_str();
  app.add_option("--workers", o.workers, "jobs reconciled at once")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--qps", o.qps, "API requests per second (token bucket)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--burst", o.burst, "API request burst")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
}

// Leader election through a Lease.
void AddLeaseFlags(CLI::App& app, OperatorOptions& o) {
  app.add_option("--leader-elect", o.leader_elect,
                 "elect a leader among replicas through a Lease (true|false)")
      ->capture_default_str();
  app.add_option("--lease-name", o.lease_name, "the Lease's name")->capture_default_str();
  app.add_option("--lease-namespace", o.lease_namespace, "the Lease's namespace")
      ->capture_default_str();
  app.add_option("--identity", o.identity,
                 "this replica's name in the Lease (default: $POD_NAME, else host_pid)");
  SecondsFlag(app, "--lease-duration", &o.lease_duration,
              "how long a standby waits after the last renewal before taking over");
  SecondsFlag(app, "--renew-deadline", &o.renew_deadline,
              "how long the leader retries renewing before it steps down");
  SecondsFlag(app, "--retry-period", &o.retry_period, "time between lease attempts");
}

// The HTTP endpoint, the job log archive and oss:// data volumes.
void AddEndpointAndDataFlags(CLI::App& app, OperatorOptions& o) {
  app.add_option("--metrics-address", o.metrics_address, "address of /metrics, /healthz, /readyz")
      ->capture_default_str();
  app.add_option("--metrics-port", o.metrics_port, "port of /metrics (0: any free; -1: none)")
      ->check(CLI::Range(-1, 65535))
      ->capture_default_str();
  app.add_option("--port-file", o.port_file, "write the bound metrics port to this file");
  app.add_option("--trace-spans", o.trace_spans,
                 "write spans of where each job's time goes (queue, reconcile passes, API calls) "
                 "to this file, one JSON object per line (bench/operator_phases reads them)");
  app.add_option("--log-archive", o.log_archive,
                 "keep every job's full launcher log here: a directory (a PersistentVolumeClaim's "
                 "mount), or oss://bucket/prefix or s3://bucket/prefix");
  app.add_option("--log-archive-dir", o.log_archive, "the same as --log-archive (a directory)");
  app.add_option("--log-archive-secret", o.log_archive_secret,
                 "[namespace/]Secret with akId/akSecret[/endpoint/region] for an oss:// or s3:// "
                 "--log-archive (namespace: --lease-namespace)");
  app.add_option("--oss-csi-driver", o.oss_csi_driver, "CSI driver of uncached oss:// data volumes")
      ->capture_default_str();
  app.add_option("--oss-endpoint", o.oss_endpoint,
                 "OSS/S3 endpoint of oss:// data (default: the Secret's `endpoint` key)");
  app.add_option("--oss-secret", o.oss_secret,
                 "Secret (in the job's namespace) with akId/akSecret[/endpoint] for oss:// data "
                 "whose entry names no secretName")
      ->capture_default_str();
}

// Gang placement and the queue, each policy chosen by name.
void AddSchedulingFlags(CLI::App& app, OperatorOptions& o) {
  std::string policies;
  for (std::string_view name : scheduler::PlacementPolicyNames()) {
    policies += (policies.empty() ? "" : ", ") + std::string(name);
  }
  app.add_option("--placement-policy", o.placement_policy,
                 "where a job's workers go: " + policies +
                     " (dljob: fewest nodes, one NVLink clique/rack/zone, best fit, cached data)")
      ->check([](const std::string& name) {
        Result<scheduler::PlacementPolicyPtr> p = scheduler::MakePlacementPolicy(name);
        return p.ok() ? std::string() : p.status().message();
      })
      ->capture_default_str();
  app.add_option("--rack-label", o.rack_label,
                 "node label naming a node's rack, for the dljob placement policy")
      ->capture_default_str();
  std::string queue_policies;
  for (std::string_view name : scheduler::QueuePolicyNames()) {
    if (name == "sjf") continue;  // an oracle: it needs durations no real job declares
    queue_policies += (queue_policies.empty() ? "" : ", ") + std::string(name);
  }
  app.add_option("--queue-policy", o.queue_policy,
                 "which waiting job goes first: " + queue_policies +
                     " (dljob: priority, then FIFO, with backfill and preemption; las: least "
                     "GPU-time used first, preempting by suspend)")
      ->check([](const std::string& name) {
        if (name == "sjf") return std::string("sjf needs job durations; use dljob or las");
        Result<scheduler::QueueOptions> q = scheduler::QueueOptionsByName(name);
        return q.ok() ? std::string() : q.status().message();
      })
      ->capture_default_str();
  SecondsFlag(app, "--min-run-time", &o.min_run_time,
              "how long a job runs before the queue may preempt it", /*zero_ok=*/true);
  SecondsFlag(app, "--estimate-every", &o.estimate_every,
              "how often the queue estimates when each waiting job starts (status.startEstimate; "
              "0: never); a large queue's estimate waits ten times as long as the last one took",
              /*zero_ok=*/true);
  SecondsFlag(app, "--elastic-grow-after", &o.elastic_grow_after,
              "how long GPUs stay idle, with no job waiting for them, before an elastic job grows "
              "onto them (spec.elastic)",
              /*zero_ok=*/true);
  SecondsFlag(app, "--node-lost-after", &o.node_lost_after,
              "how long a node under a running job may be not Ready before the job is restarted "
              "on the nodes that remain",
              /*zero_ok=*/true);
}

// The admission webhook: its port, and the names of what its certificate involves.
void AddWebhookFlags(CLI::App& app, OperatorOptions& o) {
  app.add_option("--webhook-port", o.webhook_port,
                 "HTTPS port of the validating admission webhook (0: any free; -1: none)")
      ->check(CLI::Range(-1, 65535))
      ->capture_default_str();
  app.add_option("--webhook-port-file", o.webhook_port_file,
                 "write the bound webhook port to this file");
  app.add_option("--webhook-namespace", o.webhook_namespace,
                 "the operator's namespace: the webhook's Service and certificate Secret")
      ->capture_default_str();
  app.add_option("--webhook-service", o.webhook_service,
                 "the webhook's Service (its DNS names are the certificate's)")
      ->capture_default_str();
  app.add_option("--webhook-cert-secret", o.webhook_cert_secret,
                 "Secret keeping the webhook's CA and serving certificate (made when missing)")
      ->capture_default_str();
  app.add_option("--webhook-configuration", o.webhook_configuration,
                 "ValidatingWebhookConfiguration whose caBundle is set at start-up (\"\": none)");
}

// The operator's own PodDisruptionBudget: which Deployment it covers, and how many pods it keeps.
void AddSelfBudgetFlags(CLI::App& app, OperatorOptions& o) {
  app.add_option("--operator-namespace", o.operator_namespace,
                 "the operator's namespace: its Deployment and PodDisruptionBudget")
      ->capture_default_str();
  app.add_option("--operator-deployment", o.operator_deployment,
                 "the operator's Deployment: the leader keeps a PodDisruptionBudget of this name "
                 "for its pods, at the policy version the server serves, while it has 2 or more "
                 "replicas (\"\": none)");
  app.add_option("--operator-min-available", o.operator_min_available,
                 "that budget's minAvailable: a count of pods or a percentage (\"\": no budget)")
      ->check([](const std::string& v) { return v.empty() ? "" : MinAvailableError(v); })
      ->capture_default_str();
}

// "--namespace=" (an empty value, as the chart renders an unset one) is the flag with "" as its
// value; CLI11 would otherwise take the next argument as the value. Returned in reverse order, as
// CLI::App::parse(std::vector) takes its arguments.
std::vector<std::string> SplitEmptyValuesReversed(const std::vector<std::string>& args) {
  std::vector<std::string> split;
  for (const std::string& a : args) {
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.back() == '=' && a.find('=') == a.size() - 1) {
      split.push_back(a.substr(0, a.size() - 1));
      split.push_back("");
    } else {
      split.push_back(a);
    }
  }
  return std::vector<std::string>(split.rbegin(), split.rend());
}

// The checks that span flags, after each flag parsed on its own. Empty when the options hold.
std::string CheckOptions(const OperatorOptions& o) {
  if (o.renew_deadline >= o.lease_duration) {
    return "dljob-operator: --renew-deadline (" + std::to_string(o.renew_deadline.count()) +
           "s) must be shorter than --lease-duration (" + std::to_string(o.lease_duration.count()) +
           "s), or a standby could take over while the leader still acts\n";
  }
  return "";
}

}  // namespace

ParsedArgs ParseOperatorArgs(const std::vector<std::string>& args, const std::string& pod_name,
                             const std::string& host_name, int pid) {
  OperatorOptions o;
  CLI::App app(
      "dljob-operator: runs DLJobs on Kubernetes (MPI launcher + workers, status, "
      "throughput, logs).",
      "dljob-operator");
  AddClientFlags(app, o);
  AddLeaseFlags(app, o);
  AddEndpointAndDataFlags(app, o);
  AddSchedulingFlags(app, o);
  AddWebhookFlags(app, o);
  AddSelfBudgetFlags(app, o);
  std::vector<std::string> reversed = SplitEmptyValuesReversed(args);
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    return {std::pair<int, std::string>{0, app.help()}};
  } catch (const CLI::ParseError& e) {
    return {std::pair<int, std::string>{
        2, "dljob-operator: " + std::string(e.what()) + "\nRun with --help for the flags.\n"}};
  }
  if (std::string error = CheckOptions(o); !error.empty()) {
    return {std::pair<int, std::string>{2, error}};
  }
  if (o.identity.empty()) {
    o.identity = !pod_name.empty() ? pod_name : host_name + "_" + std::to_string(pid);
  }
  return {o};
}

}  // namespace dljob::op
