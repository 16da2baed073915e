// The S3 XML scanner on bodies shaped like the ones S3, OSS, MinIO and s3rver send.
#include "storage/objstore/s3_xml.h"

#include <gtest/gtest.h>

namespace dljob::storage {
namespace {

TEST(ParseListObjectsV2, ReadsEntriesAndTheNextToken) {
  const char* xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name><Prefix>data/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents>
    <Key>data/a&amp;b &lt;1&gt;.shard</Key>
    <LastModified>2024-01-01T00:00:00.000Z</LastModified>
    <ETag>&quot;9e107d9d372bb6826bd81d3542a419d6&quot;</ETag>
    <Size>1234567890123</Size><StorageClass>STANDARD</StorageClass>
  </Contents>
  <Contents><Size> 0 </Size><Key>data/&#x1234;&#65;</Key><ETag>"abc-2"</ETag><Owner><ID>x</ID></Owner></Contents>
</ListBucketResult>)";
  Result<ListPage> page = ParseListObjectsV2(xml, "s3://bucket/data/");
  ASSERT_TRUE(page.ok()) << page.status().message();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "data/a&b <1>.shard");
  EXPECT_EQ(page->objects[0].size, 1234567890123u);
  EXPECT_EQ(page->objects[0].etag, "9e107d9d372bb6826bd81d3542a419d6");
  EXPECT_EQ(page->objects[1].key,
            "data/\xE1\x88\xB4"
            "A");
  EXPECT_EQ(page->objects[1].size, 0u);
  EXPECT_EQ(page->objects[1].etag, "abc-2");
  EXPECT_EQ(page->next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(ParseListObjectsV2, LastAndEmptyPages) {
  Result<ListPage> last = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>k</Key><Size>1</Size>"
      "</Contents></ListBucketResult>",
      "w");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->objects.size(), 1u);
  EXPECT_TRUE(last->next_token.empty());
  Result<ListPage> empty = ParseListObjectsV2(
      "<ListBucketResult><KeyCount>0</KeyCount>"
      "<Prefix/></ListBucketResult>",
      "w");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->objects.empty());
}

TEST(ParseListObjectsV2, MalformedBodiesAreErrorsThatSayWhere) {
  EXPECT_EQ(ParseListObjectsV2("<html>proxy error</html>", "s3://b/p").status().message(),
            "s3://b/p: listing: the response is not a ListBucketResult");
  EXPECT_EQ(ParseListObjectsV2("<ListBucketResult><Contents><Size>1</Size></Contents>"
                               "</ListBucketResult>",
                               "w")
                .status()
                .message(),
            "w: listing: an entry has no <Key>");
  EXPECT_EQ(ParseListObjectsV2("<ListBucketResult><Contents><Key>k</Key><Size>12x</Size>"
                               "</Contents></ListBucketResult>",
                               "w")
                .status()
                .message(),
            "w: listing: \"k\" has a bad <Size> \"12x\"");
  EXPECT_FALSE(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                  "</ListBucketResult>",
                                  "w")
                   .ok());
}

TEST(ParseS3Error, CodeAndMessage) {
  S3ErrorBody e = ParseS3Error(
      "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The specified key does not "
      "exist.</Message><Key>a</Key></Error>");
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(e.message, "The specified key does not exist.");
  EXPECT_EQ(ParseS3Error("").code, "");
  EXPECT_EQ(XmlUnescape("&bogus; &amp &#xZZ; &#38;"), "&bogus; &amp &#xZZ; &");
}

TEST(ParseInitiateMultipartUpload, ReadsTheUploadId) {
  Result<std::string> id = ParseInitiateMultipartUpload(
      R"(<?xml version="1.0" encoding="UTF-8"?>
<InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>b</Bucket><Key>k&amp;1</Key>
  <UploadId> VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA&amp;x </UploadId>
</InitiateMultipartUploadResult>)",
      "s3://b/k&1");
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(*id, "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA&x");
}

TEST(ParseInitiateMultipartUpload, RefusesOtherBodiesNamingTheObject) {
  for (const char* xml :
       {"", "<Error><Code>AccessDenied</Code></Error>",
        // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one body, 2 lines
        "<InitiateMultipartUploadResult><UploadId></UploadId>"
        "</InitiateMultipartUploadResult>",
        "<InitiateMultipartUploadResult><Bucket>b</Bucket>", "<InitiateMultipartUploadResultX/>"}) {
    Result<std::string> id = ParseInitiateMultipartUpload(xml, "s3://b/k");
    ASSERT_FALSE(id.ok()) << xml;
    EXPECT_EQ(id.status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(id.status().message().rfind("s3://b/k: starting a multipart upload: ", 0), 0u)
        << id.status().message();
  }
}

TEST(ParseCompleteMultipartUpload, ResultErrorOrNeither) {
  Result<CompleteMultipartResult> done = ParseCompleteMultipartUpload(
      "<CompleteMultipartUploadResult><Location>http://x/b/k</Location><Bucket>b</Bucket>"
      "<Key>k</Key><ETag>\"3858f62230ac3c915f300c664312c11f-9\"</ETag>"
      "</CompleteMultipartUploadResult>",
      "s3://b/k");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->etag, "3858f62230ac3c915f300c664312c11f-9");
  EXPECT_EQ(done->error.code, "");

  // S3 may answer 200 and an error while it assembles the parts.
  done = ParseCompleteMultipartUpload(
      "<?xml version=\"1.0\"?>\n<Error><Code>InternalError</Code><Message>We encountered an "
      "internal error. Please try again.</Message></Error>",
      "s3://b/k");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->error.code, "InternalError");
  EXPECT_EQ(done->error.message, "We encountered an internal error. Please try again.");

  done = ParseCompleteMultipartUpload("<html>bad gateway</html>", "s3://b/k");
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().message(),
            "s3://b/k: completing a multipart upload: the response is neither a "
            "CompleteMultipartUploadResult nor an Error");
}

TEST(CompleteMultipartUploadXml, ListsPartsAndEscapesEtags) {
  EXPECT_EQ(CompleteMultipartUploadXml({{1, "\"a1\""}, {2, "b<&>2"}}),
            "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            "<Part><PartNumber>1</PartNumber><ETag>\"a1\"</ETag></Part>"
            "<Part><PartNumber>2</PartNumber><ETag>b&lt;&amp;&gt;2</ETag></Part>"
            "</CompleteMultipartUpload>");
  // What it writes, the scanner reads back.
  EXPECT_EQ(XmlUnescape(XmlEscape("x&amp;<y>\"")), "x&amp;<y>\"");
}

TEST(MultipartXml, ArbitraryBytesNeverCrash) {
  // A fuzz-style sweep: truncations and byte flips of valid answers parse, or fail with a
  // message naming the object; an UploadId is never empty.
  const std::string bodies[] = {
      "<InitiateMultipartUploadResult><UploadId>abc</UploadId></InitiateMultipartUploadResult>",
      "<CompleteMultipartUploadResult><ETag>\"e-2\"</ETag></CompleteMultipartUploadResult>",
      "<Error><Code>InternalError</Code><Message>m</Message></Error>"};
  uint32_t seed = 1;
  for (const std::string& body : bodies) {
    for (size_t cut = 0; cut <= body.size(); ++cut) {
      std::string s = body.substr(0, cut);
      for (int flip = 0; flip < 4 && !s.empty(); ++flip) {
        seed = seed * 1664525u + 1013904223u;
        Result<std::string> id = ParseInitiateMultipartUpload(s, "w");
        Result<CompleteMultipartResult> done = ParseCompleteMultipartUpload(s, "w");
        for (const Status& st : {id.status(), done.status()}) {
          if (st.ok()) continue;
          ASSERT_EQ(st.code(), StatusCode::kUnavailable) << s;
          ASSERT_EQ(st.message().rfind("w: ", 0), 0u) << st.message();
        }
        if (id.ok()) {
          ASSERT_FALSE(id->empty()) << s;
        }
        s[seed % s.size()] = static_cast<char>(seed >> 24);
      }
    }
  }
}

}  // namespace
}  // namespace dljob::storage
