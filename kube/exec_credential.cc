// See exec_credential.h.
#include "kube/exec_credential.h"

#include <cctype>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/time_format.h"

namespace dljob::kube {
namespace {

using Json = nlohmann::json;

std::string InQuotes(const std::string& s) { return "\"" + s + "\""; }

// The string at status.<key>: "" when absent; an error when it is not a string.
Result<std::string> StatusString(const Json& status, const char* key) {
  auto it = status.find(key);
  if (it == status.end() || it->is_null()) return std::string();
  if (!it->is_string())
    return Status::InvalidArgument(std::string("status.") + key + ": must be a string");
  return it->get<std::string>();
}

Status CheckHeader(const Json& answer, const std::string& api_version) {
  auto version = answer.find("apiVersion");
  if (version == answer.end() || !version->is_string()) {
    return Status::InvalidArgument("apiVersion: missing; the plugin must answer " + api_version);
  }
  if (*version != api_version) {
    return Status::InvalidArgument("apiVersion: the plugin answered " +
                                   InQuotes(version->get<std::string>()) +
                                   ", but the kubeconfig asks for " + InQuotes(api_version));
  }
  auto kind = answer.find("kind");
  if (kind == answer.end() || !kind->is_string() || *kind != "ExecCredential") {
    std::string got =
        kind != answer.end() && kind->is_string() ? InQuotes(kind->get<std::string>()) : "none";
    return Status::InvalidArgument("kind: must be ExecCredential, got " + got);
  }
  return Status::Ok();
}

Result<std::optional<WallTime>> Expiration(const Json& status) {
  Result<std::string> text = StatusString(status, "expirationTimestamp");
  if (!text.ok()) return text.status();
  if (text->empty()) return std::optional<WallTime>();
  std::optional<WallTime> t = ParseRfc3339(*text);
  if (!t) {
    return Status::InvalidArgument("status.expirationTimestamp: not an RFC 3339 time: " +
                                   InQuotes(*text));
  }
  return t;
}

}  // namespace

std::string ExecInfo(const Config& config, bool interactive) {
  Json spec = {{"interactive", interactive}};
  if (config.exec.provide_cluster_info) {
    Json cluster = {{"server", config.server}};
    if (!config.tls_server_name.empty()) cluster["tls-server-name"] = config.tls_server_name;
    if (!config.proxy_url.empty()) cluster["proxy-url"] = config.proxy_url;
    if (config.insecure_skip_tls_verify) cluster["insecure-skip-tls-verify"] = true;
    if (!config.ca_data.empty()) {
      cluster["certificate-authority-data"] = Base64Encode(config.ca_data);
    }
    spec["cluster"] = std::move(cluster);
  }
  Json info = {{"apiVersion", config.exec.api_version}, {"kind", "ExecCredential"}, {"spec", spec}};
  return info.dump();
}

Result<ExecCredential> DecodeExecCredential(std::string_view out, const std::string& api_version) {
  Json answer = Json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded() || !answer.is_object()) {
    return Status::InvalidArgument(
        "its output is not a JSON object (" + std::to_string(out.size()) +
        " bytes on stdout; a plugin prints only the ExecCredential there, anything else on "
        "stderr)");
  }
  if (Status s = CheckHeader(answer, api_version); !s.ok()) return s;
  auto status = answer.find("status");
  if (status == answer.end() || status->is_null()) {
    return Status::InvalidArgument("status: missing; the plugin returned no credential");
  }
  if (!status->is_object()) return Status::InvalidArgument("status: must be an object");
  ExecCredential c;
  for (auto [key, field] :
       {std::pair{"token", &c.token}, std::pair{"clientCertificateData", &c.client_cert_data},
        std::pair{"clientKeyData", &c.client_key_data}}) {
    Result<std::string> v = StatusString(*status, key);
    if (!v.ok()) return v.status();
    *field = std::move(v).value();
  }
  if (c.client_cert_data.empty() != c.client_key_data.empty()) {
    return Status::InvalidArgument(c.client_cert_data.empty()
                                       ? "status.clientKeyData without clientCertificateData"
                                       : "status.clientCertificateData without clientKeyData");
  }
  if (c.token.empty() && c.client_cert_data.empty()) {
    return Status::InvalidArgument(
        "status: neither a token nor clientCertificateData and clientKeyData");
  }
  Result<std::optional<WallTime>> expiration = Expiration(*status);
  if (!expiration.ok()) return expiration.status();
  c.expiration = *expiration;
  return c;
}

Result<bool> ExecInteractive(const ExecConfig& exec, bool stdin_is_terminal, bool allowed) {
  using Mode = ExecConfig::InteractiveMode;
  if (exec.interactive_mode == Mode::kNever) return false;
  bool can = allowed && stdin_is_terminal;
  if (exec.interactive_mode == Mode::kIfAvailable || can) return can;
  return Status::FailedPrecondition(
      exec.where + ".interactiveMode: Always, but " +
      (allowed ? "standard input is not a terminal"
               : "this program never runs plugins interactively") +
      "; run it from a terminal, or use a plugin that can work with interactiveMode "
      "IfAvailable or Never");
}

std::string ExecCommandLine(const ExecConfig& exec) {
  std::string line = exec.command;
  for (const std::string& arg : exec.args) {
    bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"") == std::string::npos;
    line += " " + (plain ? arg : "'" + arg + "'");
  }
  return line;
}

Status ExecStartFailure(const ExecConfig& exec, const Status& error) {
  std::string message = exec.where + ": cannot run the credential plugin " +
                        InQuotes(ExecCommandLine(exec)) + ": " + error.message();
  if (error.code() != StatusCode::kNotFound) return Status(error.code(), message);
  message += exec.command.find('/') == std::string::npos ? " (not on PATH)" : "";
  if (!exec.install_hint.empty()) message += "; " + OneLine(exec.install_hint, kMaxQuotedStderr);
  return Status::FailedPrecondition(message);
}

Status ExecRunFailure(const ExecConfig& exec, const ProcessResult& result,
                      Clock::Duration timeout) {
  std::string message =
      exec.where + ": the credential plugin " + InQuotes(ExecCommandLine(exec)) + " ";
  if (result.timed_out) {
    message += "did not finish within " +
               HumanDuration(std::chrono::duration_cast<std::chrono::seconds>(timeout)) +
               " and was killed";
  } else {
    message += result.Describe();
  }
  std::string err = OneLine(result.err, kMaxQuotedStderr);
  if (!err.empty()) message += ": " + err;
  return Status::Unavailable(message);
}

std::string OneLine(std::string_view text, size_t max) {
  std::string out;
  bool pending_break = false;  // a line break seen since the last character kept
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      pending_break = true;
      continue;
    }
    if (pending_break && std::isspace(static_cast<unsigned char>(c))) continue;
    if (pending_break && !out.empty()) out += " | ";
    pending_break = false;
    out += c;
  }
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  size_t start = out.find_first_not_of(" \t");
  out.erase(0, start == std::string::npos ? out.size() : start);
  if (out.size() <= max) return out;
  size_t cut = out.size() - max;
  while (cut < out.size() && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) ++cut;
  return "…" + out.substr(cut);
}

}  // namespace dljob::kube
