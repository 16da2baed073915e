#include "images/trainer/comm/collective_backend.h"

#include <string>
#include <utility>

namespace dljob::trainer {

void CollectiveRegistry::Add(CollectiveBackendPtr&& backend) {
  backends_.push_back(std::move(backend));
}

Result<CollectiveBackend*> CollectiveRegistry::Choose(CollectiveChoice choice) {
  const std::string flag = "--collective=" + std::string(Name(choice));
  for (const CollectiveBackendPtr& backend : backends_) {
    if (choice != CollectiveChoice::kAuto && backend->kind() != choice) continue;
    Status enabled = backend->Enabled();
    if (enabled.ok()) return backend.get();
    if (choice != CollectiveChoice::kAuto) return enabled;
  }
  if (choice == CollectiveChoice::kAuto) {
    return Status::FailedPrecondition(flag + ": no backend of this dljob-train can run here");
  }
  return Status::FailedPrecondition(flag + ": this dljob-train has no such backend");
}

std::vector<CollectiveChoice> CollectiveRegistry::kinds() const {
  std::vector<CollectiveChoice> kinds;
  for (const CollectiveBackendPtr& backend : backends_) kinds.push_back(backend->kind());
  return kinds;
}

}  // namespace dljob::trainer
