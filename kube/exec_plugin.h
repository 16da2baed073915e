// Running a kubeconfig credential plugin (users[].user.exec) and keeping what it returns, as
// client-go does for kubectl.
//
// RunExecPlugin() runs the plugin once (base/subprocess.h): the command with its args, this
// process's environment plus the kubeconfig's env and KUBERNETES_EXEC_INFO (exec_credential.h's
// ExecInfo), and decodes the ExecCredential it prints. Run interactively (ExecInteractive: the
// plugin may prompt), it gets this process's stdin and stderr; otherwise stdin is /dev/null and
// its stderr is captured for the error message. Every error names the kubeconfig entry and the
// command; one for a command not found adds the kubeconfig's installHint.
//
// ExecTokenSource is the TokenSource HttpApi asks before each attempt. It keeps the credential
// until its expirationTimestamp, judged on the injected Clock's wall time (Now()); one without an
// expiry is kept until the server refuses it (Invalidate(), after a 401). Only one plugin run is
// in flight at a time: callers that arrive while it runs wait for it and share its outcome, a
// token or its error, instead of running the plugin again. A failed run is not kept; the next
// Token() tries again. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "kube/config.h"
#include "kube/exec_credential.h"
#include "kube/token_source.h"

namespace dljob::kube {

struct ExecOptions {
  // Whether plugins may use the terminal (interactiveMode IfAvailable/Always, with stdin a
  // terminal). The operator sets false: it never has a person to ask.
  bool interactive_allowed = true;
  Clock::Duration timeout = std::chrono::seconds(60);             // a non-interactive run
  Clock::Duration interactive_timeout = std::chrono::minutes(5);  // a person may be typing
};

// Runs config.exec's plugin once. `config` is a loaded one (its ca_data read), for
// provideClusterInfo. The run's timeout is measured on `clock`.
// REQUIRES: config.exec.enabled().
Result<ExecCredential> RunExecPlugin(const Config& config, const ExecOptions& options,
                                     Clock& clock);

class ExecTokenSource : public TokenSource {
 public:
  // Produces a credential: RunExecPlugin in production, a fake in tests.
  using Fetch = std::function<Result<ExecCredential>()>;

  // `first`, when given, is a credential fetched already (MakeApi runs the plugin once when it
  // makes the client, for a client certificate); it is used until it expires.
  ExecTokenSource(Fetch fetch, Clock& clock, std::optional<ExecCredential> first = std::nullopt);

  Result<std::string> Token() override;
  void Invalidate(const std::string& token) override;

 private:
  bool FreshLocked() const REQUIRES(mu_);

  const Fetch fetch_;
  Clock& clock_;
  Mutex run_mu_ ACQUIRED_BEFORE(mu_);  // held while the plugin runs: one run at a time
  mutable Mutex mu_;
  std::optional<ExecCredential> cached_ GUARDED_BY(mu_);
  uint64_t runs_ GUARDED_BY(mu_) = 0;  // runs finished, so a waiter can tell one ended
  Status last_error_ GUARDED_BY(mu_);  // the last run's failure; OK when it succeeded
};

}  // namespace dljob::kube
