// KubeletLogs: the one kubelet endpoint dljob-sim-nodes serves, container logs, so that pods/log
// through a real kube-apiserver reaches a simulated node as it reaches a real one: the API server
// dials the node's InternalIP at status.daemonEndpoints.kubeletEndpoint.Port over HTTPS and asks
// GET /containerLogs/{namespace}/{pod}/{container}. Every simulated node of the process names the
// same address (KWOK does the same): this server, on loopback, for all of them.
//
// What a container "writes": a line when its pod starts, and one when it finishes with its exit
// code. A followed log (follow=true) stays open until its pod has finished or been deleted, then
// ends once every line was sent, as a kubelet's does. timestamps=true puts each line's time
// first (RFC 3339, nanoseconds); tailLines=N keeps the last N lines. A pod this process has not
// started is 404 (a kubelet says the pod is not found); a container the pod does not have is 400.
// The API server's client certificate is not checked (a kubelet with --anonymous-auth=false
// would); nothing but loopback is listened on.
//
// Thread-safe: PodRunner calls Started/Finished/Removed from its workers and watch thread while
// the server's connections read.
#pragma once

#include <map>
#include <set>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "http/http_server.h"
#include "kube/api.h"
#include "tests/apiserver/pod_logs.h"

namespace dljob::sim_nodes {

class KubeletLogs {
 public:
  // `port` 0: any free one (port() tells which).
  explicit KubeletLogs(int port);
  ~KubeletLogs();  // Stop()

  // Makes a certificate for 127.0.0.1 and starts serving HTTPS. REQUIRES: called once.
  Status Start();
  int port() const;
  void Stop();

  // The pod's containers started / finished with `exit_code` / are gone (deleted).
  void Started(const kube::Json& pod);
  void Finished(const kube::Json& pod, int exit_code);
  void Removed(const kube::Json& pod);

  // The request handler (public for tests, which call it without a socket).
  void Serve(const http::HttpRequest& request, http::ResponseWriter& out);

 private:
  struct Pod {
    std::set<std::string> containers;
    bool finished = false;
  };
  // Whether `key`'s pod has finished (or is unknown now: it was removed).
  bool Finished(const std::string& key) const;

  const int requested_port_;
  std::unique_ptr<http::HttpServer> server_;
  apiserver::PodLogs logs_;
  mutable Mutex mu_;
  std::map<std::string, Pod> pods_ GUARDED_BY(mu_);  // "ns/name"
};

}  // namespace dljob::sim_nodes
