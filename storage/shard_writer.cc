#include "storage/shard_writer.h"

#include <unistd.h>

#include <filesystem>

#include "base/env.h"
#include "base/errno_status.h"
#include "storage/crc32c.h"
#include "storage/dataset.h"

namespace dljob::storage {
namespace fs = std::filesystem;

namespace {

// A failed stdio call on `path`, with errno's reason.
Status StdioError(const std::string& what, const std::string& path) {
  return ErrnoStatus("cannot " + what, path);
}

}  // namespace

ShardWriter::ShardWriter(std::string dir, std::string split, ShardWriterOptions options)
    : dir_(std::move(dir)), split_(std::move(split)), options_(options) {}

Result<std::unique_ptr<ShardWriter>> ShardWriter::Create(const std::string& dir,
                                                         const std::string& split,
                                                         ShardWriterOptions options) {
  if (Status s = ValidateSplitName(split); !s.ok()) return s;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": no such directory");
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = ParseShardFileName(entry.path().filename().string());
    if (name && name->split == split) {
      return Status::AlreadyExists(dir + " already holds shards of split \"" + split + "\" (" +
                                   entry.path().filename().string() + ")");
    }
  }
  if (ec) return Status::Unavailable(dir + ": " + ec.message());
  return std::unique_ptr<ShardWriter>(new ShardWriter(dir, split, options));
}

ShardWriter::~ShardWriter() {
  if (file_ != nullptr) std::fclose(file_);
  if (!finished_) RemoveTemporaries();
}

void ShardWriter::RemoveTemporaries() {
  for (const std::string& path : temp_paths_) ::unlink(path.c_str());
}

Status ShardWriter::Write(const void* data, size_t n) {
  if (n > 0 && std::fwrite(data, 1, n, file_) != n) return StdioError("write", temp_paths_.back());
  shard_offset_ += n;
  total_bytes_ += n;
  return Status::Ok();
}

Status ShardWriter::OpenNext() {
  char seq[16];
  std::snprintf(seq, sizeof seq, "%05zu", temp_paths_.size());
  std::string path = dir_ + "/." + split_ + "-" + seq + ".shard.tmp";
  file_ = std::fopen(path.c_str(), "wbx");
  if (file_ == nullptr) return StdioError("create", path);
  temp_paths_.push_back(path);
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  shard_offset_ = 0;
  shard_records_ = 0;
  index_.clear();
  std::vector<uint8_t> header(kShardMagic, kShardMagic + 8);
  PutU32(header, kShardFormatVersion);
  PutU32(header, Crc32c(header));
  return Write(header.data(), header.size());
}

Status ShardWriter::CloseCurrent() {
  const uint64_t index_offset = shard_offset_;
  std::vector<uint8_t> footer;
  PutU64(footer, index_offset);
  PutU64(footer, shard_records_);
  PutU32(footer, Crc32c(index_));
  PutU32(footer, Crc32c(footer));
  footer.insert(footer.end(), kShardEndMagic, kShardEndMagic + 8);
  Status s = Write(index_.data(), index_.size());
  if (s.ok()) s = Write(footer.data(), footer.size());
  const std::string& path = temp_paths_.back();
  if (s.ok() && std::fflush(file_) != 0) s = StdioError("write", path);
  if (s.ok() && ::fsync(fileno(file_)) != 0) s = StdioError("sync", path);
  if (std::fclose(file_) != 0 && s.ok()) s = StdioError("close", path);
  file_ = nullptr;
  return s;
}

bool ShardWriter::ShouldRoll(size_t record_bytes) const {
  if (file_ == nullptr || shard_records_ == 0) return false;
  if (options_.max_records_per_shard > 0 && shard_records_ >= options_.max_records_per_shard) {
    return true;
  }
  const uint64_t after =
      shard_offset_ + record_bytes + index_.size() + kIndexEntryBytes + kShardFooterBytes;
  return options_.max_shard_bytes > 0 && after > options_.max_shard_bytes;
}

Status ShardWriter::Append(const Sample& sample) {
  if (!status_.ok()) return status_;
  payload_.clear();
  EncodeSample(sample, payload_);
  if (payload_.size() > kMaxPayloadBytes) {
    return Status::InvalidArgument("sample of " + std::to_string(payload_.size()) +
                                   " bytes exceeds the record limit");
  }
  if (ShouldRoll(kRecordHeaderBytes + payload_.size())) status_ = CloseCurrent();
  if (status_.ok() && file_ == nullptr) status_ = OpenNext();
  if (!status_.ok()) return status_;
  PutU64(index_, shard_offset_);
  PutU32(index_, static_cast<uint32_t>(payload_.size()));
  std::vector<uint8_t> header;
  PutU32(header, static_cast<uint32_t>(payload_.size()));
  PutU32(header, Crc32c(payload_));
  status_ = Write(header.data(), header.size());
  if (status_.ok()) status_ = Write(payload_.data(), payload_.size());
  ++shard_records_;
  ++total_records_;
  return status_;
}

Result<std::vector<std::string>> ShardWriter::Finish() {
  if (status_.ok() && file_ == nullptr && temp_paths_.empty()) status_ = OpenNext();
  if (status_.ok() && file_ != nullptr) status_ = CloseCurrent();
  if (!status_.ok()) return status_;
  const int count = static_cast<int>(temp_paths_.size());
  std::vector<std::string> finals;
  for (int i = 0; i < count; ++i) {
    finals.push_back(dir_ + "/" + ShardFileName(split_, i, count));
    if (::access(finals.back().c_str(), F_OK) == 0) {
      status_ = Status::AlreadyExists(finals.back() + " appeared while packing");
      return status_;
    }
  }
  for (int i = 0; i < count; ++i) {
    // Each rename is durable (the directory synced) before the next.
    status_ = DefaultEnv().RenameFile(temp_paths_[i], finals[i]);
    if (!status_.ok()) return status_;
  }
  finished_ = true;
  return finals;
}

}  // namespace dljob::storage
