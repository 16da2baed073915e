// PrometheusProcess: Debian's `prometheus` (scripts/dev/setup.sh installs it) started by a test as
// a child process, scraping loopback targets, and its HTTP API read back — so a test can show what
// a real Prometheus makes of what the operator exports (target labels, `exported_*` renames) and
// what the dashboard's queries return.
//
// It listens on 127.0.0.1 only, keeps its TSDB in a private temporary directory removed with the
// handle, and is SIGKILLed and reaped by the handle's destructor (command.h's Background). No
// systemd unit, no /etc/prometheus: the test's own config file is the only one it reads.
//
// Not thread-safe: one test thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "testing/command.h"

namespace dljob::testing {

class PrometheusProcess {
 public:
  // Starts `prometheus` from PATH scraping `targets` ("127.0.0.1:<port>") every second as the
  // scrape job `job_name` (so Prometheus adds job="<job_name>" and instance="<target>" to each
  // series), and waits up to timeout_ms until /-/ready answers 200. Errors: prometheus not on PATH
  // (naming scripts/dev/setup.sh), or not ready in time (with its output).
  static Result<std::unique_ptr<PrometheusProcess>> Start(const std::string& job_name,
                                                          const std::vector<std::string>& targets,
                                                          int timeout_ms);

  // An instant query (/api/v1/query) at the latest time: data.result, an array of
  // {"metric": {labels}, "value": [time, "value"]} for a vector. Errors carry Prometheus's own
  // errorType and error (a query it cannot parse), or say it did not answer.
  Result<nlohmann::json> Query(const std::string& expr) const;
  // /api/v1/label/<label>/values?match[]=<selector> (no match[] when selector is ""): the values.
  Result<nlohmann::json> LabelValues(const std::string& label, const std::string& selector) const;

  int port() const { return port_; }
  std::string Log() const;  // its output (it logs to stderr)

 private:
  PrometheusProcess() = default;
  Result<nlohmann::json> GetData(const std::string& target) const;

  TempDir dir_;
  std::unique_ptr<Background> process_;
  int port_ = 0;
};

}  // namespace dljob::testing
