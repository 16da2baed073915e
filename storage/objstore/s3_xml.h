// The few S3 XML bodies dljob reads, parsed by a small tolerant scanner rather than an XML library:
// ListObjectsV2 results (ListBucketResult) and error bodies (<Error><Code>…</Code>…</Error>).
//
// Tolerant means: namespaces on the root, unknown elements, whitespace, an XML declaration and
// element order are all ignored; only the elements named here are looked at, and entities
// (&amp; &lt; &gt; &quot; &apos; &#N; &#xN;) in their text are decoded. Missing <Key> or a
// non-numeric <Size> in a <Contents> is an error, as is a truncated listing with no token.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "jobs/status.h"
#include "storage/objstore/object_store.h"

namespace dljob::storage {

// `where` prefixes error messages ("s3://bucket/prefix: listing: ...").
Result<ListPage> ParseListObjectsV2(std::string_view xml, const std::string& where);

struct S3ErrorBody {
  std::string code;  // "NoSuchKey", "SignatureDoesNotMatch", ...; "" if the body had none
  std::string message;
};
S3ErrorBody ParseS3Error(std::string_view xml);

// Decodes XML entities; unknown ones are kept as written.
std::string XmlUnescape(std::string_view s);
// Strips one pair of surrounding double quotes (ETags come quoted).
std::string Unquote(std::string s);

}  // namespace dljob::storage
