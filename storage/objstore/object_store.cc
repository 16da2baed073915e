// See object_store.h.
#include "storage/objstore/object_store.h"

namespace dljob::storage {

Result<std::vector<ObjectInfo>> ListAll(ObjectStore& store, const std::string& prefix) {
  std::vector<ObjectInfo> all;
  ListOptions options;
  options.prefix = prefix;
  while (true) {
    Result<ListPage> page = store.List(options);
    if (!page.ok()) return page.status();
    for (ObjectInfo& o : page->objects) all.push_back(std::move(o));
    if (page->next_token.empty()) return all;
    if (page->next_token == options.continuation_token) {
      return Status::Internal(store.Url(prefix) + ": listing returned the same page token twice");
    }
    options.continuation_token = page->next_token;
  }
}

bool IsMd5Etag(std::string_view etag) {
  if (etag.size() != 32) return false;
  for (char c : etag) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

Status ValidateKey(std::string_view key, const std::string& url) {
  if (key.empty()) return Status::InvalidArgument(url + ": empty object key");
  if (key.size() > 1024)
    return Status::InvalidArgument(url + ": object key longer than 1024 bytes");
  if (key.front() == '/') return Status::InvalidArgument(url + ": object key starts with '/'");
  if (key.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument(url + ": object key contains a NUL byte");
  }
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    std::string_view segment = key.substr(start, end - start);
    if (segment == "." || segment == "..") {
      return Status::InvalidArgument(url + ": object key has a \"" + std::string(segment) +
                                     "\" path segment");
    }
    if (segment.empty() && end != key.size()) {
      return Status::InvalidArgument(url + ": object key has an empty path segment (\"//\")");
    }
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace dljob::storage
