// The ExecCredential exchange with a kubeconfig credential plugin (client.authentication.k8s.io
// v1 and v1beta1), as pure functions: what the plugin is told (the KUBERNETES_EXEC_INFO
// variable), what it answers (the ExecCredential on its stdout), whether it may talk to the
// person at the terminal, and how its failures read. kube/exec_plugin.h runs the plugin with them.
//
// Messages name the kubeconfig entry (ExecConfig::where: "/home/u/.kube/config:
// users[eks].user.exec") and never contain a credential: a plugin's stdout is not quoted back,
// only what in it is wrong. A plugin's stderr is quoted, on one line, capped at kMaxQuotedStderr.
// Thread-safe (no state).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "base/subprocess.h"
#include "kube/config.h"

namespace dljob::kube {

// What a plugin returned: a bearer token, a client certificate and key, or both.
struct ExecCredential {
  std::string token;
  std::optional<WallTime> expiration;  // nullopt: good until the server refuses it (a 401)
  std::string client_cert_data;        // PEM; with client_key_data or not at all
  std::string client_key_data;
};

inline constexpr size_t kMaxQuotedStderr = 4096;

// The KUBERNETES_EXEC_INFO JSON for `config`'s plugin: apiVersion (the plugin's), kind
// ExecCredential, spec.interactive and, when the plugin asks for provideClusterInfo,
// spec.cluster: server, tls-server-name, insecure-skip-tls-verify and
// certificate-authority-data (base64 of config.ca_data), each only when set.
std::string ExecInfo(const Config& config, bool interactive);

// Decodes the plugin's stdout: an ExecCredential of `api_version` (the one the kubeconfig asked
// for) with status.token and/or status.clientCertificateData + clientKeyData, and an optional
// status.expirationTimestamp (RFC 3339). Errors say what is wrong, not what was printed.
Result<ExecCredential> DecodeExecCredential(std::string_view out, const std::string& api_version);

// Whether to run the plugin interactively (with this process's stdin and stderr): Never: no;
// IfAvailable: when stdin is a terminal and this program lets plugins ask (`allowed`; the
// operator never does); Always: the same, and an error when it cannot.
Result<bool> ExecInteractive(const ExecConfig& exec, bool stdin_is_terminal, bool allowed);

// "aws eks get-token --cluster-name prod": the command and its arguments, for messages.
std::string ExecCommandLine(const ExecConfig& exec);

// The plugin could not be started (`error` from RunProcess): names the command and, when it was
// not found, adds the kubeconfig's installHint.
Status ExecStartFailure(const ExecConfig& exec, const Status& error);

// The plugin ran and failed (non-zero exit, killed, timed out after `timeout`): names the command
// and how it ended, and quotes its stderr when it was captured.
Status ExecRunFailure(const ExecConfig& exec, const ProcessResult& result, Clock::Duration timeout);

// `text` on one line for a message: trimmed, line breaks and the space around them folded to
// " | ", and at most `max` bytes (the end is kept, where errors usually are; "…" marks the cut).
std::string OneLine(std::string_view text, size_t max);

}  // namespace dljob::kube
