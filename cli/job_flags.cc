#include "cli/job_flags.h"

#include <cctype>

namespace dljob {

Result<std::pair<std::string, std::string>> SplitDataFlag(const std::string& value) {
  size_t split = value.rfind(":/");
  // "hostPath:/x" alone has no mount path: its only ":/" is the scheme's.
  if (split == std::string::npos || split == 0 || value.compare(0, split + 1, "hostPath:") == 0 ||
      value.compare(split, 3, "://") == 0) {
    return Status::InvalidArgument("--data \"" + value +
                                   "\": expected SOURCE:MOUNTPATH, e.g. "
                                   "hostPath:/srv/datasets/mnist:/data/mnist");
  }
  return std::pair{value.substr(0, split), value.substr(split + 1)};
}

std::string VolumeNameFromMountPath(const std::string& mount_path) {
  std::string path = mount_path;
  while (!path.empty() && path.back() == '/') path.pop_back();
  std::string base = path.substr(path.rfind('/') + 1);
  std::string name;
  for (char c : base) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool ok = std::isalnum(static_cast<unsigned char>(l));
    if (ok)
      name += l;
    else if (!name.empty() && name.back() != '-')
      name += '-';
  }
  while (!name.empty() && name.back() == '-') name.pop_back();
  if (name.size() > 63) name.resize(63);
  return name;
}

Status ApplySubmitFlags(const SubmitFlags& f, DLJob& job) {
  if (!f.name.empty()) job.metadata.name = f.name;
  if (!f.namespace_.empty()) job.metadata.namespace_ = f.namespace_;
  if (!f.image.empty()) job.spec.image = f.image;
  if (!f.working_dir.empty()) job.spec.working_dir = f.working_dir;
  if (f.gpus) job.spec.gpus = f.gpus;
  if (f.gpus_per_worker) job.spec.gpus_per_worker = f.gpus_per_worker;
  if (f.backoff_limit) job.spec.run_policy.backoff_limit = f.backoff_limit;
  if (f.active_deadline_seconds) {
    job.spec.run_policy.active_deadline_seconds = f.active_deadline_seconds;
  }
  for (const std::string& kv : f.env) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("--env \"" + kv + "\": expected KEY=VALUE");
    }
    std::string key = kv.substr(0, eq);
    std::erase_if(job.spec.env, [&](const EnvVar& e) { return e.name == key; });
    job.spec.env.push_back({key, kv.substr(eq + 1)});
  }
  for (const std::string& d : f.data) {
    Result<std::pair<std::string, std::string>> parts = SplitDataFlag(d);
    if (!parts.ok()) return parts.status();
    std::string name = VolumeNameFromMountPath(parts->second);
    if (name.empty()) name = "data-" + std::to_string(job.spec.data.size());
    for (const DataVolume& v : job.spec.data) {
      if (v.name == name) name += "-" + std::to_string(job.spec.data.size());
    }
    DataVolume volume;
    volume.name = name;
    volume.source = parts->first;
    volume.mount_path = parts->second;
    job.spec.data.push_back(std::move(volume));
  }
  if (!f.command.empty()) job.spec.command = f.command;
  return Status::Ok();
}

}  // namespace dljob
