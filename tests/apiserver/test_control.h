// The test API server's simulation and control API, served by RestHandler under /_test. Bodies
// and answers are JSON unless noted; errors are metav1.Status bodies like the rest of the API.
//
//   POST   /_test/nodes                       {"name", "gpus": 8, "cpu", "memory", "gpuProduct",
//                                               "labels": {}, "taints": []} -> 201 the Node
//   POST   /_test/nodes/{name}/kubelet        {"running": false}: the node's kubelet stops — its
//                                               Ready condition Unknown and the unreachable
//                                               taints, as the node lifecycle controller sets
//                                               them; its pods neither start nor finish being
//                                               deleted; {"running": true} undoes it -> 200 the
//                                               Node
//   POST   /_test/pods/{ns}/{name}/status     {"phase", "ready", "exitCode", "reason", "message",
//                                               "restartCount", "podIP"} -> 200 the Pod
//   POST   /_test/pods/{ns}/{name}/log        raw text, appended to the pod's log -> 200 Status
//   POST   /_test/faults                      {"method": "GET"|"*", "pathPrefix", "code",
//                                               "count": 1, "message"} -> 201 Status
//   DELETE /_test/faults                      clears every fault and the latency -> 200 Status
//   POST   /_test/latency                     {"milliseconds", "userAgent", "method",
//                                               "pathPrefix"}: added before serving the API
//                                               requests that match every filter given (all
//                                               of them when none is); 0 removes the rule
//   GET    /_test/writes                      {"writes": [{"seq", "userAgent", "method",
//                                               "target", "code", "resourceVersion",
//                                               "appliedAt"}], "dropped"}: the applied writes,
//                                               in the order answered (write_log.h)
//   DELETE /_test/writes                      empties that log
//   POST   /_test/watches/drop                ends every open watch and followed log now
//   POST   /_test/compact                     forgets the history: older versions answer 410
//   POST   /_test/kubelet                     {"enabled": true, "delayMilliseconds": 0}: bound
//                                               Pending pods go Running+Ready after the delay
//   POST   /_test/services                    {"namespace", "name", "port": 0, "address":
//                                               "127.0.0.1:8443"}: webhook calls to that
//                                               service's port (0: any port) go to the address
//                                               ("" removes the route; webhook_dispatcher.h)
//   GET    /_test/info                        {"resourceVersion", "compactedVersion",
//                                               "pendingFaults", "kubelet": {...}}
//
// /_test requests never get injected faults or latency, and are not logged as writes.
#pragma once

namespace dljob::apiserver {

inline constexpr char kTestControlPrefix[] = "/_test";

}  // namespace dljob::apiserver
