#include "cli/kube/launcher_log.h"

#include <algorithm>
#include <sstream>

#include "jobs/child_names.h"
#include "jobs/codec.h"
#include "jobs/log_lines.h"
#include "kube/object_fields.h"

namespace dljob {
namespace {

using kube::Json;

// The header the operator takes a bearer token from when it came through the API server's proxy
// (operator/app/log_access.h: kLogTokenHeader).
constexpr char kLogTokenHeader[] = "X-Dljob-Authorization";

// What to do when the archive cannot be read with the user's own credential.
std::string NoTokenAdvice(const std::string& ns, const OperatorService& at) {
  const std::string svc = at.service.substr(0, at.service.find(':'));
  return "the operator serves archived logs only to a bearer token it can check with the API "
         "server, and your kubeconfig user authenticates with a client certificate, which the API "
         "server's proxy cannot pass on. Use a token instead: e.g. for a service account allowed "
         "to get pods/log in \"" +
         ns + "\": TOKEN=$(kubectl -n " + ns +
         " create token <serviceaccount>); then either `kubectl config set-credentials <user> "
         "--token=$TOKEN` (a kubeconfig user with that token) and dljob logs again, or `kubectl "
         "-n " +
         at.ns + " port-forward svc/" + svc +
         " 8080:8080` and curl -H \"Authorization: Bearer "
         "$TOKEN\" http://localhost:8080/logs/" +
         ns + "/<job>";
}

// Reads one job's launcher logs, incarnation after incarnation.
class LauncherLog {
 public:
  LauncherLog(kube::Api& api, std::string ns, std::string job, const LogOptions& options,
              const std::function<void()>& pause, std::ostream& out, const OperatorService& archive)
      : archive_(archive),
        api_(api),
        ns_(std::move(ns)),
        job_(std::move(job)),
        options_(options),
        pause_(pause),
        out_(out) {}

  Status Run() {
    while (true) {
      // The job first, then the pod: a job seen finished whose launcher has ended has nothing more
      // to say (a restart would have made the job unfinished again first).
      kube::ApiResult<Json> job = api_.Get(kube::resources::kDLJobs, ns_, job_);
      if (!job.ok()) {
        if (job.error().IsNotFound() && started_) return Status::Ok();  // deleted while followed
        if (job.error().IsNotFound()) {
          return Status::NotFound("no DLJob \"" + job_ + "\" in namespace \"" + ns_ + "\"");
        }
        if (!Retry(job.error())) return job.error().ToStatus().WithContext("reading job " + job_);
        continue;
      }
      DLJob decoded = DecodeTree(*job).job;
      bool finished = IsFinished(decoded.status.phase);
      std::string phase = decoded.status.phase == JobPhase::kUnset
                              ? "not yet admitted"
                              : PhaseName(decoded.status.phase);

      kube::ApiResult<Json> pod = api_.Get(kube::resources::kPods, ns_, LauncherName(job_));
      if (!pod.ok() && !pod.error().IsNotFound()) {
        if (!Retry(pod.error())) return pod.error().ToStatus().WithContext("reading the launcher");
        continue;
      }
      bool present = pod.ok();
      std::string uid = present ? kube::UidOf(*pod) : "";
      std::string pod_phase =
          present ? pod->value("/status/phase"_json_pointer, std::string()) : "";
      bool running_or_done = present && !pod_phase.empty() && pod_phase != "Pending";

      if (!running_or_done || uid == ended_uid_) {
        if (!options_.follow || finished) {
          if (started_) return Status::Ok();
          if (finished) {
            return PrintArchived("job \"" + job_ + "\" is " + phase +
                                 " and its launcher pod is gone; ");
          }
          return Status::FailedPrecondition(
              "job \"" + job_ + "\" has no running launcher yet (job " + phase +
              (present ? ", launcher pod " + pod_phase : "") +
              "): it starts once every worker is ready; follow it with: dljob logs -f " + job_);
        }
        pause_();
        continue;
      }
      // A finished job that ran more than once: its launcher pod holds only the last run, the
      // archive every run. The pod's log when the archive cannot be read, with a note saying so.
      if (const int64_t runs = Runs(decoded.status); finished && !started_ && runs > 1) {
        std::ostringstream whole;
        Status archived = PrintArchived("", &whole);
        if (archived.ok()) {
          out_ << whole.str();
          return Status::Ok();
        }
        if (options_.notes) {
          *options_.notes << "dljob: job \"" << job_ << "\" ran " << runs
                          << " times; its launcher pod holds only the last run, printed here: the "
                             "whole log could not be read from the operator's archive: "
                          << archived.message() << "\n";
        }
      }
      if (uid != uid_) {  // a new incarnation: its log starts afresh
        uid_ = uid;
        consumed_ = 0;
      }
      Result<bool> ended = Stream();
      if (!ended.ok()) return ended.status();
      if (!options_.follow) return Status::Ok();
      if (*ended) ended_uid_ = uid_;
    }
  }

 private:
  // Runs of the job so far: the first, and one more for each time its pods were replaced.
  static int64_t Runs(const DLJobStatus& status) {
    int64_t runs = 1;
    for (const std::optional<int64_t>& n : {status.restarts, status.preemptions, status.resizes,
                                            status.spec_restarts, status.disruption_restarts}) {
      runs += std::max<int64_t>(n.value_or(0), 0);
    }
    return runs;
  }

  // The finished job's whole log from the operator's archive, printed to `out` (out_ when null);
  // a failure's message starts with `gone`.
  Status PrintArchived(const std::string& gone, std::ostream* to = nullptr) {
    std::ostream& out = to ? *to : out_;
    const std::string where = "the log archive (Service " + archive_.ns + "/" + archive_.service +
                              ", set by DLJOB_OPERATOR_SERVICE)";
    kube::ApiResult<std::string> log = api_.ServiceProxyGet(
        archive_.ns, archive_.service, "/logs/" + ns_ + "/" + job_, kLogTokenHeader);
    if (!log.ok()) {
      const kube::ApiError& e = log.error();
      if (e.reason == kube::kReasonNoToken) {
        return Status::FailedPrecondition(gone + NoTokenAdvice(ns_, archive_));
      }
      std::string why = e.message;
      while (!why.empty() && why.back() == '\n') why.pop_back();
      if (e.http == 401) {
        return Status::FailedPrecondition(gone +
                                          "the operator did not accept your credential: " + why);
      }
      if (e.http == 403) {
        return Status::FailedPrecondition(
            gone + "reading it from " + where + " was refused: " + why +
            (why.find("services/proxy") != std::string::npos
                 ? " (the chart grants this with logArchive.proxyAccess)"
                 : ""));
      }
      if (e.http == 404) return Status::NotFound(gone + where + ": " + why);
      return Status::Unavailable(gone + "cannot read " + where + ": " + e.ToString());
    }
    std::istringstream in(*log);
    for (std::string line; std::getline(in, line);) {
      if (options_.rank) {
        std::optional<TaggedLine> tagged = ParseLogLine(line);
        if (!tagged || tagged->rank != *options_.rank) continue;
        out << tagged->text << '\n';
      } else {
        out << line << '\n';
      }
    }
    if (!out) return Status::Unavailable("cannot write the log to the output");
    return Status::Ok();
  }

  // Prints the current launcher's lines from consumed_ on. Returns whether its log ended (the
  // container finished); false when the stream broke and should be re-opened.
  Result<bool> Stream() {
    kube::LogOptions lo;
    lo.container = kLauncherContainer;
    lo.follow = options_.follow;
    kube::ApiResult<kube::LineStreamPtr> stream = api_.Logs(ns_, LauncherName(job_), lo);
    if (!stream.ok()) {
      if (Retry(stream.error())) return false;
      return stream.error().ToStatus().WithContext("reading the log of pod " + LauncherName(job_));
    }
    started_ = true;
    int64_t skip = consumed_;  // lines printed before the stream broke
    while (true) {
      kube::ApiResult<std::optional<std::string>> line = (*stream)->Next();
      if (!line.ok()) {
        if (Retry(line.error())) return false;
        return line.error().ToStatus().WithContext("reading the log of pod " + LauncherName(job_));
      }
      if (!line->has_value()) return true;
      if (skip > 0) {
        --skip;
        continue;
      }
      ++consumed_;
      if (std::optional<std::string> text = JobLogLine(**line, options_)) {
        out_ << *text << '\n';
        if (options_.follow) out_.flush();
      }
      if (!out_) return Status::Unavailable("cannot write the log to the output");
    }
  }

  // While following, a failure the server may get over is waited out; otherwise it is final.
  bool Retry(const kube::ApiError& error) {
    if (!options_.follow || !(error.IsRetryable() || error.http == 400)) return false;
    pause_();
    return true;
  }

  const OperatorService& archive_;
  kube::Api& api_;
  const std::string ns_, job_;
  const LogOptions& options_;
  const std::function<void()>& pause_;
  std::ostream& out_;
  bool started_ = false;   // some launcher log was opened
  std::string uid_;        // the launcher incarnation being read
  int64_t consumed_ = 0;   // lines of it already handled (printed or filtered)
  std::string ended_uid_;  // the incarnation whose log has ended
};

}  // namespace

std::optional<std::string> JobLogLine(std::string_view launcher_line, const LogOptions& options) {
  MpirunLine line = ParseMpirunLine(launcher_line);
  if (!options.rank) return FormatLogLine(line.rank, line.text);
  if (line.rank != *options.rank) return std::nullopt;
  return std::move(line.text);
}

Status PrintLauncherLog(kube::Api& api, const std::string& ns, const std::string& job,
                        const LogOptions& options, const std::function<void()>& pause,
                        std::ostream& out, const OperatorService& archive) {
  return LauncherLog(api, ns, job, options, pause, out, archive).Run();
}

std::optional<OperatorService> ParseOperatorService(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() ||
      text.find('/', slash + 1) != std::string::npos) {
    return std::nullopt;
  }
  return OperatorService{text.substr(0, slash), text.substr(slash + 1)};
}

}  // namespace dljob
