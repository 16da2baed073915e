// S3Store against a real S3-compatible server (s3rver on loopback: a test dependency; when it is
// missing the tests fail and say to run scripts/dev/setup.sh), and its retry policy through a
// failure-injecting wrapper around the real HTTP client.
#include "storage/objstore/s3_store.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "base/testing/fake_clock.h"
#include "http/socket_client.h"
#include "storage/objstore/s3_multipart.h"
#include "storage/objstore/testing/s3rver_process.h"

namespace dljob::storage {
namespace {

using testing::S3rverProcess;

// The production HTTP client for `endpoint`, for the test clients below to wrap.
http::ClientPtr RealClient(const std::string& endpoint) {
  http::ClientOptions options;
  options.base_url = endpoint;
  return std::move(http::SocketClient::Create(options)).value();
}

// A FakeClock set to the real wall time: s3rver, as S3, refuses a signature dated more than 15
// minutes from its own clock. Its waits are still recorded, not slept.
void StartAtRealTime(dljob::testing::FakeClock& clock) {
  clock.Advance(std::chrono::system_clock::now() - clock.Now());
}

class S3StoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new S3rverProcess();
    start_ = server_->Start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(start_.ok())
        << start_.message();  // names scripts/dev/setup.sh if s3rver is missing
    Result<std::unique_ptr<S3Store>> s = S3Store::Open(server_->Url(), server_->Config());
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }

  static S3rverProcess* server_;
  static Status start_;
  std::unique_ptr<S3Store> store_;
};
S3rverProcess* S3StoreTest::server_ = nullptr;
Status S3StoreTest::start_;

std::string Bytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    s[i] = static_cast<char>(seed >> 24);
  }
  return s;
}

TEST_F(S3StoreTest, PutGetHeadDeleteRoundTrip) {
  const std::string data = Bytes(100'000, 1);
  ASSERT_TRUE(store_->Put("rt/a b+c/obj$1.bin", data).ok());
  Result<std::string> got = store_->Get("rt/a b+c/obj$1.bin");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, data);
  Result<ObjectInfo> head = store_->Head("rt/a b+c/obj$1.bin");
  ASSERT_TRUE(head.ok()) << head.status().message();
  EXPECT_EQ(head->size, data.size());
  EXPECT_TRUE(IsMd5Etag(head->etag)) << head->etag;
  ASSERT_TRUE(store_->Delete("rt/a b+c/obj$1.bin").ok());
  Result<std::string> gone = store_->Get("rt/a b+c/obj$1.bin");
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message(), "s3://dljob-test/rt/a b+c/obj$1.bin: not found");
  EXPECT_EQ(store_->Head("rt/missing").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->Delete("rt/missing").ok());
}

TEST_F(S3StoreTest, RangedReads) {
  const std::string data = Bytes(5000, 2);
  ASSERT_TRUE(store_->Put("range/obj", data).ok());
  EXPECT_EQ(*store_->GetRange("range/obj", 0, 10), data.substr(0, 10));
  EXPECT_EQ(*store_->GetRange("range/obj", 1234, 2000), data.substr(1234, 2000));
  EXPECT_EQ(*store_->GetRange("range/obj", 4990, 100), data.substr(4990))
      << "a range past the end is cut short";
  EXPECT_EQ(store_->GetRange("range/obj", 5000, 10).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(S3StoreTest, ListsPastOneThousandKeys) {
  constexpr int kKeys = 1005;
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      for (int i; (i = next++) < kKeys;) {
        char key[32];
        std::snprintf(key, sizeof key, "many/k%05d", i);
        if (!store_->Put(key, std::to_string(i)).ok()) ++failed;
      }
    });
  }
  for (auto& w : writers) w.join();
  ASSERT_EQ(failed, 0);
  ASSERT_TRUE(store_->Put("many-not/x", "x").ok());

  Result<std::vector<ObjectInfo>> all = ListAll(*store_, "many/");
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), static_cast<size_t>(kKeys));
  for (int i = 0; i < kKeys; ++i) {
    char key[32];
    std::snprintf(key, sizeof key, "many/k%05d", i);
    ASSERT_EQ((*all)[i].key, key);
    ASSERT_EQ((*all)[i].size, std::to_string(i).size());
  }
  // Explicit small pages: 1005 keys in pages of 400.
  ListOptions options{.prefix = "many/", .continuation_token = "", .max_keys = 400};
  std::vector<size_t> sizes;
  while (true) {
    Result<ListPage> page = store_->List(options);
    ASSERT_TRUE(page.ok()) << page.status().message();
    sizes.push_back(page->objects.size());
    if (page->next_token.empty()) break;
    options.continuation_token = page->next_token;
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{400, 400, 205}));
}

TEST_F(S3StoreTest, WrongCredentialsAreRefusedAndNamed) {
  // s3rver checks the key id of a V4 signature, not the signature itself.
  S3Config bad = server_->Config();
  bad.access_key_id = "NOT-A-KEY";
  Result<std::unique_ptr<S3Store>> s = S3Store::Open(server_->Url(), bad);
  ASSERT_TRUE(s.ok());
  Status put = (*s)->Put("creds/x", "x");
  EXPECT_EQ(put.code(), StatusCode::kFailedPrecondition) << put.message();
  EXPECT_NE(put.message().find("s3://dljob-test/creds/x: access denied (InvalidAccessKeyId"),
            std::string::npos)
      << put.message();
  EXPECT_NE(put.message().find("check the access key id and secret"), std::string::npos);
}

TEST_F(S3StoreTest, MissingBucketIsNamed) {
  Result<std::unique_ptr<S3Store>> s =
      S3Store::Open(ObjectUrl{"s3", "no-such-bucket", ""}, server_->Config());
  ASSERT_TRUE(s.ok());
  Result<ListPage> page = (*s)->List({});
  EXPECT_EQ(page.status().code(), StatusCode::kNotFound);
  EXPECT_NE(page.status().message().find("bucket \"no-such-bucket\" does not exist"),
            std::string::npos)
      << page.status().message();
}

// Answers the first `failures` requests with `status` (or a dropped connection when 0) and
// passes the rest to the real client.
class FlakyHttpClient : public http::Client {
 public:
  FlakyHttpClient(http::ClientPtr real, int failures, int status)
      : real_(std::move(real)), failures_(failures), status_(status) {}
  http::ClientResult<http::ClientResponse> Send(const http::ClientRequest& request) override {
    ++requests;
    if (failures_-- > 0) {
      if (status_ == 0) {
        return http::ClientError{http::Failure::kTransportError, "connection reset by peer"};
      }
      http::ClientResponse r;
      r.status = status_;
      r.body =
          "<Error><Code>SlowDown</Code><Message>Please reduce your request rate."
          "</Message></Error>";
      if (status_ == 429) r.headers.emplace_back("Retry-After", "2");
      return r;
    }
    return real_->Send(request);
  }
  http::ClientResult<http::StreamedResponse> Open(const http::ClientRequest& request) override {
    return real_->Open(request);
  }
  std::atomic<int> requests{0};

 private:
  http::ClientPtr real_;
  std::atomic<int> failures_;
  int status_;
};

TEST_F(S3StoreTest, RetriesServerErrorsWithBackoffAndResigns) {
  ASSERT_TRUE(store_->Put("retry/obj", "payload").ok());
  for (int status : {503, 500, 429, 0}) {
    auto flaky = std::make_unique<FlakyHttpClient>(RealClient(server_->endpoint()), 3, status);
    FlakyHttpClient* raw = flaky.get();
    dljob::testing::FakeClock clock;
    StartAtRealTime(clock);
    S3StoreOptions options;
    options.clock = &clock;
    S3Store store("s3", server_->bucket(), server_->Config(), std::move(flaky), options);
    Result<std::string> got = store.Get("retry/obj");
    ASSERT_TRUE(got.ok()) << status << ": " << got.status().message();
    EXPECT_EQ(*got, "payload");
    EXPECT_EQ(raw->requests, 4);
    using std::chrono::milliseconds;
    using Waits = std::vector<Clock::Duration>;
    if (status == 429) {  // Retry-After: 2 outweighs the first backoffs
      EXPECT_EQ(clock.sleeps(),
                (Waits{milliseconds(2000), milliseconds(2000), milliseconds(2000)}));
    } else {
      EXPECT_EQ(clock.sleeps(), (Waits{milliseconds(200), milliseconds(400), milliseconds(800)}));
    }
  }
}

TEST_F(S3StoreTest, GivesUpAfterMaxAttemptsAndSaysWhy) {
  auto flaky = std::make_unique<FlakyHttpClient>(RealClient(server_->endpoint()), 100, 503);
  S3StoreOptions options;
  options.max_attempts = 3;
  dljob::testing::FakeClock clock;
  StartAtRealTime(clock);
  options.clock = &clock;
  S3Store store("oss", server_->bucket(), server_->Config(), std::move(flaky), options);
  Result<std::string> got = store.Get("retry/obj");
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(got.status().message(),
            "oss://dljob-test/retry/obj: server error (SlowDown: Please reduce your request "
            "rate.) (after 3 attempts)");
}

// Passes requests to the real client and records them; requests whose "METHOD target" contains
// `match` are answered with `status` instead, `failures` times (all of them when negative).
class RecordingHttpClient : public http::Client {
 public:
  RecordingHttpClient(http::ClientPtr real, std::string match = "", int failures = 0,
                      int status = 503)
      : real_(std::move(real)), match_(std::move(match)), failures_(failures), status_(status) {}
  http::ClientResult<http::ClientResponse> Send(const http::ClientRequest& request) override {
    const std::string line = request.method + " " + request.target;
    bool fail = false;
    {
      MutexLock lock(mu_);
      log_.push_back(line);
      if (!match_.empty() && line.find(match_) != std::string::npos && failures_ != 0) {
        fail = true;
        if (failures_ > 0) --failures_;
      }
    }
    if (fail) {
      http::ClientResponse r;
      r.status = status_;
      r.body = "<Error><Code>InternalError</Code><Message>injected</Message></Error>";
      return r;
    }
    http::ClientResult<http::ClientResponse> r = real_->Send(request);
    MutexLock lock(mu_);
    answers_.push_back(line + " -> " + (r.ok() ? std::to_string(r->status) : "no answer"));
    return r;
  }
  http::ClientResult<http::StreamedResponse> Open(const http::ClientRequest& request) override {
    return real_->Open(request);
  }
  // Requests whose "METHOD target" contains all of `parts`.
  int Count(std::initializer_list<std::string> parts) {
    MutexLock lock(mu_);
    return int(std::count_if(log_.begin(), log_.end(), [&](const std::string& line) {
      return std::all_of(parts.begin(), parts.end(),
                         [&](const std::string& p) { return line.find(p) != std::string::npos; });
    }));
  }
  std::vector<std::string> answers() {
    MutexLock lock(mu_);
    return answers_;
  }

 private:
  http::ClientPtr real_;
  std::string match_;
  Mutex mu_;
  std::vector<std::string> log_ GUARDED_BY(mu_);
  std::vector<std::string> answers_ GUARDED_BY(mu_);
  int failures_ GUARDED_BY(mu_);
  int status_;
};

// Small parts keep the test fast; s3rver does not enforce S3's 5 MiB minimum part size. Waits go
// to `clock`, a FakeClock, so retries do not sleep.
S3StoreOptions SmallParts(Clock& clock) {
  S3StoreOptions options;
  options.multipart_threshold = 4 << 20;
  options.part_size = 1 << 20;
  options.part_concurrency = 3;
  options.clock = &clock;
  return options;
}

class S3MultipartTest : public S3StoreTest {
 protected:
  S3Store& Store(std::string match = "", int failures = 0) {
    return Store(std::move(match), failures, SmallParts(clock_));
  }
  S3Store& Store(std::string match, int failures, S3StoreOptions options, int status = 503) {
    auto client = std::make_unique<RecordingHttpClient>(RealClient(server_->endpoint()),
                                                        std::move(match), failures, status);
    client_ = client.get();
    multipart_ = std::make_unique<S3Store>("s3", server_->bucket(), server_->Config(),
                                           std::move(client), std::move(options));
    return *multipart_;
  }
  void SetUp() override {
    S3StoreTest::SetUp();
    StartAtRealTime(clock_);
  }
  dljob::testing::FakeClock clock_;
  RecordingHttpClient* client_ = nullptr;
  std::unique_ptr<S3Store> multipart_;
};

constexpr size_t kLarge = (20 << 20) + 12345;  // 21 parts of 1 MiB, the last one 12345 bytes

TEST_F(S3MultipartTest, LargeObjectRoundTripsInPlannedParts) {
  S3Store& store = Store();
  const std::string data = Bytes(kLarge, 7);
  Status put = store.Put("mp/large.bin", data);
  ASSERT_TRUE(put.ok()) << put.message();
  EXPECT_EQ(client_->Count({"POST ", "mp/large.bin?uploads"}), 1);
  EXPECT_EQ(client_->Count({"PUT ", "partNumber="}), 21);
  for (int part : {1, 11, 21}) {
    EXPECT_EQ(client_->Count({"PUT ", "partNumber=" + std::to_string(part) + "&"}), 1) << part;
  }
  EXPECT_EQ(client_->Count({"POST ", "mp/large.bin?uploadId="}), 1);
  EXPECT_EQ(client_->Count({"DELETE "}), 0);
  Result<std::string> got = store_->Get("mp/large.bin");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(*got == data) << "sizes " << got->size() << " vs " << data.size();
  EXPECT_EQ(store_->Head("mp/large.bin")->size, kLarge);

  // Below the threshold: one plain PUT.
  ASSERT_TRUE(store.Put("mp/small.bin", Bytes((4 << 20) - 1, 8)).ok());
  EXPECT_EQ(client_->Count({"PUT ", "mp/small.bin"}), 1);
  EXPECT_EQ(client_->Count({"mp/small.bin?"}), 0);
}

TEST_F(S3MultipartTest, AFailedPartIsRetried) {
  S3Store& store = Store("PUT /dljob-test/mp/retry.bin?partNumber=3&", 2);
  const std::string data = Bytes(kLarge, 9);
  Status put = store.Put("mp/retry.bin", data);
  ASSERT_TRUE(put.ok()) << put.message();
  EXPECT_EQ(client_->Count({"PUT ", "partNumber=3&"}), 3) << "two injected 503s, then success";
  EXPECT_EQ(client_->Count({"PUT ", "partNumber="}), 23);
  EXPECT_EQ(*store_->Get("mp/retry.bin"), data);
}

TEST_F(S3MultipartTest, CompletionAnswered200WithAnInternalErrorIsRetried) {
  // S3 may accept CompleteMultipartUpload (200) and then fail while assembling the parts, sending
  // an <Error> body; the documented remedy is to send the same request again.
  S3StoreOptions options = SmallParts(clock_);
  S3Store& store = Store("POST /dljob-test/mp/complete.bin?uploadId=", 1, options, 200);
  const std::string data = Bytes(kLarge, 12);
  Status put = store.Put("mp/complete.bin", data);
  ASSERT_TRUE(put.ok()) << put.message();
  EXPECT_EQ(client_->Count({"POST ", "mp/complete.bin?uploadId="}), 2);
  EXPECT_EQ(clock_.sleeps(), std::vector<Clock::Duration>{std::chrono::milliseconds(200)});
  EXPECT_EQ(*store_->Get("mp/complete.bin"), data);

  // Always an error: given up after max_attempts, named, and aborted.
  options.max_attempts = 2;
  S3Store& failing = Store("POST /dljob-test/mp/complete2.bin?uploadId=", -1, options, 200);
  put = failing.Put("mp/complete2.bin", data);
  EXPECT_EQ(put.code(), StatusCode::kUnavailable);
  EXPECT_EQ(put.message().rfind("s3://dljob-test/mp/complete2.bin: completing the multipart "
                                "upload: InternalError: injected (after 2 attempts); ",
                                0),
            0u)
      << put.message();
  EXPECT_EQ(client_->Count({"DELETE /dljob-test/mp/complete2.bin?uploadId="}), 1);
  EXPECT_EQ(store_->Head("mp/complete2.bin").status().code(), StatusCode::kNotFound);
}

TEST_F(S3MultipartTest, AnUnrecoverablePartAbortsAndLeavesTheOldObject) {
  ASSERT_TRUE(store_->Put("mp/fail.bin", "old content").ok());
  S3StoreOptions options = SmallParts(clock_);
  options.max_attempts = 2;
  S3Store& store = Store("PUT /dljob-test/mp/fail.bin?partNumber=5&", -1, options);
  Status put = store.Put("mp/fail.bin", Bytes(kLarge, 10));
  EXPECT_EQ(put.code(), StatusCode::kUnavailable);
  EXPECT_EQ(put.message().rfind("s3://dljob-test/mp/fail.bin: part 5 of 21: server error "
                                "(InternalError: injected) (after 2 attempts); ",
                                0),
            0u)
      << put.message();
  EXPECT_EQ(client_->Count({"PUT ", "partNumber=5&"}), 2);
  EXPECT_EQ(client_->Count({"POST ", "uploadId="}), 0) << "never completed";
  EXPECT_EQ(client_->Count({"DELETE /dljob-test/mp/fail.bin?uploadId="}), 1) << "aborted";
  // s3rver 3.7 has no AbortMultipartUpload (DELETE ?uploadId answers 405 MethodNotAllowed); S3,
  // OSS and MinIO answer 204. Either way the message says what became of the upload.
  std::vector<std::string> answers = client_->answers();
  const bool aborted = std::count_if(answers.begin(), answers.end(), [](const std::string& a) {
                         return a.find("DELETE") != std::string::npos && a.ends_with("-> 204");
                       }) == 1;
  const bool refused = std::count_if(answers.begin(), answers.end(), [](const std::string& a) {
                         return a.find("DELETE") != std::string::npos && a.ends_with("-> 405");
                       }) == 1;
  ASSERT_TRUE(aborted || refused) << ::testing::PrintToString(answers);
  if (aborted) {
    EXPECT_TRUE(put.message().ends_with("; the upload was aborted")) << put.message();
  } else {
    EXPECT_NE(put.message().find("; aborting upload "), std::string::npos) << put.message();
    EXPECT_TRUE(put.message().ends_with(
        "(request refused (HTTP 405, MethodNotAllowed: The specified method is not allowed "
        "against this resource.)): its parts stay on the server until a lifecycle rule or an "
        "abort removes them"))
        << put.message();
  }
  EXPECT_EQ(*store_->Get("mp/fail.bin"), "old content");

  // A new key: no object appears at all.
  S3Store& fresh = Store("PUT /dljob-test/mp/never.bin?partNumber=1&", -1, options);
  EXPECT_FALSE(fresh.Put("mp/never.bin", Bytes(kLarge, 11)).ok());
  EXPECT_EQ(store_->Head("mp/never.bin").status().code(), StatusCode::kNotFound);
  Result<std::vector<ObjectInfo>> listed = ListAll(*store_, "mp/never");
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST(PlanParts, CutsIntoNumberedPartsWithAShortLastOne) {
  EXPECT_EQ(PlanParts(10, 4), (std::vector<PartRange>{{1, 0, 4}, {2, 4, 4}, {3, 8, 2}}));
  EXPECT_EQ(PlanParts(8, 4), (std::vector<PartRange>{{1, 0, 4}, {2, 4, 4}}));
  EXPECT_EQ(PlanParts(3, 4), (std::vector<PartRange>{{1, 0, 3}}));
}

TEST(PlanParts, GrowsPartsToStayWithinTenThousand) {
  const uint64_t size = uint64_t{100} << 30;  // 100 GiB in 8 MiB parts would be 12,800 parts
  const std::vector<PartRange> parts = PlanParts(size, 8 << 20);
  EXPECT_LE(parts.size(), size_t(kMaxUploadParts));
  EXPECT_EQ(parts.front().size, (size + kMaxUploadParts - 1) / kMaxUploadParts);
  uint64_t covered = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    ASSERT_EQ(parts[i].number, int(i) + 1);
    ASSERT_EQ(parts[i].offset, covered);
    covered += parts[i].size;
  }
  EXPECT_EQ(covered, size);
}

TEST(S3StoreNoServer, ConnectionRefusedIsUnavailableNamingTheEndpoint) {
  // A port nothing listens on: bind one, note it, close it.
  S3Config config;
  config.endpoint = "http://127.0.0.1:1";
  config.region = "us-east-1";
  S3StoreOptions options;
  options.max_attempts = 2;
  dljob::testing::FakeClock clock;
  options.clock = &clock;
  Result<std::unique_ptr<S3Store>> s = S3Store::Open({"s3", "bucket", ""}, config, options);
  ASSERT_TRUE(s.ok());
  Result<ObjectInfo> head = (*s)->Head("k");
  EXPECT_EQ(head.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(head.status().message().find("s3://bucket/k: "), std::string::npos);
  EXPECT_NE(head.status().message().find("(after 2 attempts); check the endpoint "
                                         "http://127.0.0.1:1 and the network"),
            std::string::npos)
      << head.status().message();
  EXPECT_EQ(clock.sleeps().size(), 1u);
}

}  // namespace
}  // namespace dljob::storage
