// S3Store against a real S3-compatible server (s3rver on loopback; skipped when not installed),
// and its retry policy through a failure-injecting wrapper around the real HTTP client.
#include "storage/objstore/s3_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "storage/objstore/testing/s3rver_process.h"

namespace dljob::storage {
namespace {

using testing::S3rverProcess;

class S3StoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!S3rverProcess::Available()) return;
    server_ = new S3rverProcess();
    start_ = server_->Start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    if (!S3rverProcess::Available()) GTEST_SKIP() << S3rverProcess::SkipMessage();
    ASSERT_TRUE(start_.ok()) << start_.message();
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
class FlakyHttpClient : public HttpClient {
 public:
  FlakyHttpClient(HttpClientPtr real, int failures, int status)
      : real_(std::move(real)), failures_(failures), status_(status) {}
  Result<HttpResponse> Send(const HttpRequest& request) override {
    ++requests;
    if (failures_-- > 0) {
      if (status_ == 0) return Status::Unavailable("connection reset by peer");
      HttpResponse r;
      r.status = status_;
      r.body =
          "<Error><Code>SlowDown</Code><Message>Please reduce your request rate."
          "</Message></Error>";
      if (status_ == 429) r.headers.emplace_back("Retry-After", "2");
      return r;
    }
    return real_->Send(request);
  }
  std::atomic<int> requests{0};

 private:
  HttpClientPtr real_;
  std::atomic<int> failures_;
  int status_;
};

TEST_F(S3StoreTest, RetriesServerErrorsWithBackoffAndResigns) {
  ASSERT_TRUE(store_->Put("retry/obj", "payload").ok());
  for (int status : {503, 500, 429, 0}) {
    auto flaky = std::make_unique<FlakyHttpClient>(
        MakeCpprestHttpClient(server_->endpoint(), std::chrono::seconds(30)).value(), 3, status);
    FlakyHttpClient* raw = flaky.get();
    std::vector<std::chrono::milliseconds> sleeps;
    S3StoreOptions options;
    options.sleep = [&](std::chrono::milliseconds d) { sleeps.push_back(d); };
    S3Store store("s3", server_->bucket(), server_->Config(), std::move(flaky), options);
    Result<std::string> got = store.Get("retry/obj");
    ASSERT_TRUE(got.ok()) << status << ": " << got.status().message();
    EXPECT_EQ(*got, "payload");
    EXPECT_EQ(raw->requests, 4);
    using std::chrono::milliseconds;
    if (status == 429) {  // Retry-After: 2 outweighs the first backoffs
      EXPECT_EQ(sleeps, (std::vector<milliseconds>{milliseconds(2000), milliseconds(2000),
                                                   milliseconds(2000)}));
    } else {
      EXPECT_EQ(sleeps, (std::vector<milliseconds>{milliseconds(200), milliseconds(400),
                                                   milliseconds(800)}));
    }
  }
}

TEST_F(S3StoreTest, GivesUpAfterMaxAttemptsAndSaysWhy) {
  auto flaky = std::make_unique<FlakyHttpClient>(
      MakeCpprestHttpClient(server_->endpoint(), std::chrono::seconds(30)).value(), 100, 503);
  S3StoreOptions options;
  options.max_attempts = 3;
  options.sleep = [](std::chrono::milliseconds) {};
  S3Store store("oss", server_->bucket(), server_->Config(), std::move(flaky), options);
  Result<std::string> got = store.Get("retry/obj");
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(got.status().message(),
            "oss://dljob-test/retry/obj: server error (SlowDown: Please reduce your request "
            "rate.) (after 3 attempts)");
}

TEST(S3StoreNoServer, ConnectionRefusedIsUnavailableNamingTheEndpoint) {
  // A port nothing listens on: bind one, note it, close it.
  S3Config config;
  config.endpoint = "http://127.0.0.1:1";
  config.region = "us-east-1";
  S3StoreOptions options;
  options.max_attempts = 2;
  int sleeps = 0;
  options.sleep = [&](std::chrono::milliseconds) { ++sleeps; };
  Result<std::unique_ptr<S3Store>> s = S3Store::Open({"s3", "bucket", ""}, config, options);
  ASSERT_TRUE(s.ok());
  Result<ObjectInfo> head = (*s)->Head("k");
  EXPECT_EQ(head.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(head.status().message().find("s3://bucket/k: "), std::string::npos);
  EXPECT_NE(head.status().message().find("(after 2 attempts); check the endpoint "
                                         "http://127.0.0.1:1 and the network"),
            std::string::npos)
      << head.status().message();
  EXPECT_EQ(sleeps, 1);
}

}  // namespace
}  // namespace dljob::storage
