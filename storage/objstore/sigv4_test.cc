// SigV4 against AWS's published values: cases of the Signature Version 4 test suite (credentials
// AKIDEXAMPLE, 2015-08-30T12:36:00Z, region us-east-1, service "service") and the worked S3
// examples of "Signature Calculations for the Authorization Header" (AKIAIOSFODNN7EXAMPLE,
// 2013-05-24, bucket examplebucket). The suite's path-normalisation cases are left out on
// purpose: S3 does not normalise paths.
#include "storage/objstore/sigv4.h"

#include <gtest/gtest.h>

namespace dljob::storage {
namespace {

const char kEmptyHash[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const SigV4Credentials kSuite{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
const SigV4Credentials kS3{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};

SigV4Request SuiteRequest(std::string method, std::string path, KeyValues query,
                          KeyValues extra_headers = {}) {
  SigV4Request r{std::move(method),
                 std::move(path),
                 std::move(query),
                 {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}},
                 kEmptyHash};
  for (auto& h : extra_headers) r.headers.push_back(std::move(h));
  return r;
}

std::string SuiteSign(const SigV4Request& r, const SigV4Credentials& c = kSuite) {
  return SignV4(r, c, "us-east-1", "service", "20150830T123600Z").signature;
}

TEST(SigV4Suite, GetVanilla) {
  SigV4Signature s =
      SignV4(SuiteRequest("GET", "/", {}), kSuite, "us-east-1", "service", "20150830T123600Z");
  EXPECT_EQ(s.canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\n" +
                std::string(kEmptyHash));
  EXPECT_EQ(s.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST(SigV4Suite, QueryOrderingAndEncoding) {
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/", {{"Param2", "value2"}, {"Param1", "value1"}})),
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/", {{"Param1", "value2"}, {"Param1", "Value1"}})),
            "eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1");
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/", {{"Param1", "value2"}, {"Param1", "value1"}})),
            "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694");
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/", {{"\xE1\x88\xB4", "bar"}})),
            "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04");
  const std::string unreserved =
      "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/", {{unreserved, unreserved}})),
            "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197");
  EXPECT_EQ(SuiteSign(SuiteRequest("POST", "/", {{"Param1", "value1"}})),
            "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11");
}

TEST(SigV4Suite, PathEncoding) {
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/\xE1\x88\xB4", {})),
            "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/example space/", {})),
            "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741");
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/example/$delete", {})),
            "a853c9b21b528b19643d00910d35b83a10c366a10833ceefb45edd6c80e40f27");
  EXPECT_EQ(SuiteSign(SuiteRequest(
                "GET", "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", {})),
            "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f");
}

TEST(SigV4Suite, HeaderCanonicalisation) {
  EXPECT_EQ(SuiteSign(SuiteRequest(
                "GET", "/", {},
                {{"My-Header1", "value2"}, {"My-Header1", "value2"}, {"My-Header1", "value1"}})),
            "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea");
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/", {},
                                   {{"My-Header1", " value1"}, {"My-Header2", " \"a   b   c\""}})),
            "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736");
  EXPECT_EQ(SuiteSign(SuiteRequest("POST", "/", {}, {{"My-Header1", "VALUE1"}})),
            "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d");
  SigV4Request form =
      SuiteRequest("POST", "/", {}, {{"Content-Type", "application/x-www-form-urlencoded"}});
  form.payload_hash = Sha256Hex("Param1=value1");
  EXPECT_EQ(form.payload_hash, "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
  EXPECT_EQ(SuiteSign(form), "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a");
}

TEST(SigV4Suite, SessionToken) {
  SigV4Credentials creds = kSuite;
  creds.session_token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
  EXPECT_EQ(SuiteSign(SuiteRequest("GET", "/", {}, {{"X-Amz-Security-Token", creds.session_token}}),
                      creds),
            "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8");
}

// 2013-05-24T00:00:00Z
const auto kS3Time = std::chrono::system_clock::from_time_t(1369353600);

TEST(SigV4S3Examples, GetObjectRange) {
  SigV4Request r{"GET", "/test.txt", {}, {{"Range", "bytes=0-9"}}, kEmptyHash};
  SignS3Request(r, kS3, "us-east-1", "examplebucket.s3.amazonaws.com", kS3Time);
  const std::string authz = r.headers.back().second;
  EXPECT_EQ(r.headers.back().first, "Authorization");
  EXPECT_EQ(authz,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4S3Examples, PutObjectWithEncodedKey) {
  SigV4Request r{
      "PUT",
      "/test$file.text",
      {},
      {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
      Sha256Hex("Welcome to Amazon S3.")};
  EXPECT_EQ(r.payload_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SignS3Request(r, kS3, "us-east-1", "examplebucket.s3.amazonaws.com", kS3Time);
  EXPECT_NE(r.headers.back().second.find(
                "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"),
            std::string::npos)
      << r.headers.back().second;
}

TEST(SigV4S3Examples, ListObjectsAndSubresource) {
  SigV4Request list{"GET", "/", {{"prefix", "J"}, {"max-keys", "2"}}, {}, kEmptyHash};
  SignS3Request(list, kS3, "us-east-1", "examplebucket.s3.amazonaws.com", kS3Time);
  EXPECT_NE(list.headers.back().second.find(
                "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
            std::string::npos);
  SigV4Request lifecycle{"GET", "/", {{"lifecycle", ""}}, {}, kEmptyHash};
  SignS3Request(lifecycle, kS3, "us-east-1", "examplebucket.s3.amazonaws.com", kS3Time);
  EXPECT_NE(lifecycle.headers.back().second.find(
                "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"),
            std::string::npos);
}

TEST(SigV4, AnonymousRequestsCarryNoAuthorization) {
  SigV4Request r{"GET", "/b/k", {}, {}, kEmptyHash};
  SignS3Request(r, {}, "us-east-1", "h", kS3Time);
  for (const auto& [name, value] : r.headers) EXPECT_NE(name, "Authorization");
  EXPECT_EQ(FormatAmzDate(kS3Time), "20130524T000000Z");
}

TEST(SigV4, UriEncodeAndQuery) {
  EXPECT_EQ(UriEncode("a b+c/d~", false), "a%20b%2Bc/d~");
  EXPECT_EQ(UriEncode("a/b", true), "a%2Fb");
  EXPECT_EQ(CanonicalQuery({{"prefix", "a b/"}, {"list-type", "2"}, {"continuation-token", ""}}),
            "continuation-token=&list-type=2&prefix=a%20b%2F");
}

}  // namespace
}  // namespace dljob::storage
