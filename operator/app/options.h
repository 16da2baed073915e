// The command line of dljob-operator, as the Helm chart's Deployment passes it (charts/dljob
// templates/deployment.yaml), parsed into OperatorOptions.
//
// Parsing is pure: the environment values it may use (POD_NAME for the leader-election identity,
// the host name) come in as arguments. Errors name the flag and what is wrong; --help text is
// returned, not printed, so main() decides where it goes. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"
#include "scheduler/cluster.h"

namespace dljob::op {

struct OperatorOptions {
  std::string kubeconfig;       // "" = $KUBECONFIG, in-cluster, or ~/.kube/config (client-go order)
  std::string context;          // kubeconfig context; "" = current
  std::string watch_namespace;  // "" = every namespace
  std::string cluster_domain = "cluster.local";
  int workers = 4;
  double qps = 50;
  int burst = 100;
  bool leader_elect = true;
  std::string lease_name = "dljob-operator";
  std::string lease_namespace = "dljob-system";
  std::string identity;  // --identity, else $POD_NAME, else <hostname>_<pid>
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::seconds retry_period{2};
  std::string metrics_address = "0.0.0.0";
  int metrics_port = 8080;  // 0: pick a free port (tests); -1: no HTTP endpoint
  std::string port_file;    // write the bound metrics port here (tests)
  // Write spans of where each job's time goes (kube/runtime/spans.h) to this file; "" = none.
  std::string trace_spans;
  // Where job logs are archived (log_archive_store.h): a directory, or oss:// / s3:// with the
  // keys of the Secret log_archive_secret ("[namespace/]name"; the lease's namespace by default).
  std::string log_archive;  // "" = do not archive job logs
  std::string log_archive_secret;
  // oss:// data volumes (controller/volumes.h): the CSI driver, the endpoint ("" = the Secret's
  // `endpoint` key) and the default Secret with the keys, used unless an entry names its own.
  std::string oss_csi_driver = "ossplugin.csi.alibabacloud.com";
  std::string oss_endpoint;
  std::string oss_secret = "dljob-oss";
  // Gang placement (scheduler/placement_policy.h): the policy's name and the node label
  // that names a node's rack.
  std::string placement_policy = "dljob";
  std::string rack_label = scheduler::kDefaultRackLabel;
  // The queue (scheduler/queue/queue_policy.h): its policy, and how long a job runs
  // before the queue may preempt it.
  std::string queue_policy = "dljob";
  std::chrono::seconds min_run_time{300};
  // How often waiting jobs' start times are estimated, at least (0: never).
  std::chrono::seconds estimate_every{30};
  std::chrono::seconds elastic_grow_after{300};
  // How long a node under a running job may be not Ready before it counts as lost
  // (operator/controller/node_loss.h).
  std::chrono::seconds node_lost_after{30};
  // The validating admission webhook (admission_review.h, webhook_cert.h), HTTPS on its own
  // port, served by every replica; -1: none.
  int webhook_port = -1;
  std::string webhook_port_file;                   // write the bound webhook port here (tests)
  std::string webhook_namespace = "dljob-system";  // the operator's: its Secret and Service
  std::string webhook_service = "dljob-webhook";
  std::string webhook_cert_secret = "dljob-webhook-cert";
  std::string webhook_configuration;  // the ValidatingWebhookConfiguration to give the CA; "": none
  // The PodDisruptionBudget of the operator's own pods (self_budget.h), kept by the leader for
  // this Deployment of this namespace, with this minAvailable; "" for either: none.
  std::string operator_namespace = "dljob-system";
  std::string operator_deployment;
  std::string operator_min_available = "1";
};

// What parsing produced: options to run with, or text to print and an exit code (help, errors).
struct ParsedArgs {
  std::variant<OperatorOptions, std::pair<int, std::string>> result;
};

// `pod_name` and `host_name` seed the default identity; `pid` disambiguates on one host.
ParsedArgs ParseOperatorArgs(const std::vector<std::string>& args, const std::string& pod_name,
                             const std::string& host_name, int pid);

}  // namespace dljob::op
