// See exec_plugin.h.
#include "kube/exec_plugin.h"

#include <unistd.h>

#include <cassert>
#include <utility>

#include "base/subprocess.h"

namespace dljob::kube {

Result<ExecCredential> RunExecPlugin(const Config& config, const ExecOptions& options,
                                     Clock& clock) {
  const ExecConfig& exec = config.exec;
  assert(exec.enabled());
  Result<bool> interactive =
      ExecInteractive(exec, isatty(STDIN_FILENO) == 1, options.interactive_allowed);
  if (!interactive.ok()) return interactive.status();
  ProcessSpec spec;
  spec.argv.push_back(exec.command);
  spec.argv.insert(spec.argv.end(), exec.args.begin(), exec.args.end());
  spec.env = exec.env;
  spec.env.emplace_back("KUBERNETES_EXEC_INFO", ExecInfo(config, *interactive));
  spec.inherit_stdin = *interactive;
  spec.capture_stderr = !*interactive;  // a prompt must reach the person
  spec.timeout = *interactive ? options.interactive_timeout : options.timeout;
  Result<ProcessResult> ran = RunProcess(spec, clock);
  if (!ran.ok()) return ExecStartFailure(exec, ran.status());
  if (!ran->succeeded()) return ExecRunFailure(exec, *ran, spec.timeout);
  Result<ExecCredential> credential = DecodeExecCredential(ran->out, exec.api_version);
  if (!credential.ok()) {
    return credential.status().WithContext(exec.where + ": the credential plugin \"" +
                                           ExecCommandLine(exec) +
                                           "\" printed a bad ExecCredential");
  }
  return credential;
}

ExecTokenSource::ExecTokenSource(Fetch fetch, Clock& clock, std::optional<ExecCredential> first)
    : fetch_(std::move(fetch)), clock_(clock), cached_(std::move(first)) {}

bool ExecTokenSource::FreshLocked() const {
  return cached_ && (!cached_->expiration || clock_.Now() < *cached_->expiration);
}

Result<std::string> ExecTokenSource::Token() {
  uint64_t seen = 0;
  {
    MutexLock lock(mu_);
    if (FreshLocked()) return cached_->token;
    seen = runs_;
  }
  MutexLock run(run_mu_);
  {
    MutexLock lock(mu_);
    if (runs_ != seen && !last_error_.ok()) return last_error_;  // it failed while we waited
    if (runs_ != seen && cached_) return cached_->token;         // it succeeded
  }
  Result<ExecCredential> fetched = fetch_();
  MutexLock lock(mu_);
  ++runs_;
  last_error_ = fetched.status();
  if (!fetched.ok()) return last_error_;
  cached_ = std::move(fetched).value();
  return cached_->token;
}

void ExecTokenSource::Invalidate(const std::string& token) {
  MutexLock lock(mu_);
  if (cached_ && cached_->token == token) cached_.reset();
}

}  // namespace dljob::kube
