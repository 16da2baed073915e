// Status and Result<T, E = Status>: how expected failures travel in dljob.
//
// Bad input, API errors and I/O failures are returned, never thrown: a Status names what failed
// and where ("spec.gpus: must be a positive integer, got -2"). Exceptions from libraries
// (yaml-cpp, nlohmann/json, LibTorch) are caught at the boundary that calls them and converted.
// Broken invariants are not Statuses; they abort. Both types are values: cheap to copy and move,
// safe to use from any thread.
#pragma once

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace dljob {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller's input is wrong; fixing the input fixes it
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,  // the world is not in the state the operation needs
  kUnavailable,         // try again later (I/O, network)
  kInternal,
};

class Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(const std::string& context) const {
    return ok() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or an error: the one result type of dljob. The error is a non-OK Status unless a
// layer's errors carry more than a Status can (http::ClientResult carries why no answer arrived,
// kube::ApiResult the HTTP status and reason); those layers alias Result<T, TheirError>, and their
// error type provides `Status ToStatus() const` so status() works on every Result.
// REQUIRES: value() only when ok(); error() only when !ok().
template <typename T, typename E = Status>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(E error) : v_(std::move(error)) {   // NOLINT(google-explicit-constructor)
    if constexpr (std::is_same_v<E, Status>) {
      assert(!std::get<Status>(v_).ok() && "Result needs a value or an error");
    }
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const E& error() const { return std::get<E>(v_); }
  // OK when there is a value; otherwise the error as a Status.
  Status status() const {
    if (ok()) return Status::Ok();
    if constexpr (std::is_same_v<E, Status>) {
      return error();
    } else {
      return error().ToStatus();
    }
  }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, E> v_;
};

}  // namespace dljob
