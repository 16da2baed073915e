#include "base/errno_status.h"

#include <cstring>

namespace dljob {

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  std::string message = what;
  if (!path.empty()) message += " \"" + path + "\"";
  message += ": ";
  message += std::strerror(err);
  if (err == ENOENT) return Status::NotFound(std::move(message));
  if (err == EEXIST) return Status::AlreadyExists(std::move(message));
  return Status::Unavailable(std::move(message));
}

}  // namespace dljob
