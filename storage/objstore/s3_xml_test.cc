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

}  // namespace
}  // namespace dljob::storage
