// The few S3 XML bodies dljob reads, parsed by a small tolerant scanner rather than an XML library:
// ListObjectsV2 results (ListBucketResult), the answers of a multipart upload
// (InitiateMultipartUploadResult, CompleteMultipartUploadResult) and error bodies
// (<Error><Code>…</Code>…</Error>); and the one body dljob writes (CompleteMultipartUpload).
//
// Tolerant means: namespaces on the root, unknown elements, whitespace, an XML declaration and
// element order are all ignored; only the elements named here are looked at, and entities
// (&amp; &lt; &gt; &quot; &apos; &#N; &#xN;) in their text are decoded. Missing <Key> or a
// non-numeric <Size> in a <Contents> is an error, as is a truncated listing with no token.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/objstore/object_store.h"

namespace dljob::storage {

// `where` prefixes error messages ("s3://bucket/prefix: listing: ...").
Result<ListPage> ParseListObjectsV2(std::string_view xml, const std::string& where);

struct S3ErrorBody {
  std::string code;  // "NoSuchKey", "SignatureDoesNotMatch", ...; "" if the body had none
  std::string message;
};
S3ErrorBody ParseS3Error(std::string_view xml);

// The UploadId of an InitiateMultipartUploadResult; kUnavailable naming `where` when the body is
// not one or has an empty UploadId.
Result<std::string> ParseInitiateMultipartUpload(std::string_view xml, const std::string& where);

// The answer to CompleteMultipartUpload. S3 may answer 200 and still fail: the body is then an
// <Error> (e.g. InternalError while it assembles the parts), returned in `error`.
struct CompleteMultipartResult {
  std::string etag;   // of the assembled object, unquoted; "" if the server sent none
  S3ErrorBody error;  // error.code != "" when the body was an <Error>
};
// kUnavailable naming `where` when the body is neither a CompleteMultipartUploadResult nor an
// <Error>.
Result<CompleteMultipartResult> ParseCompleteMultipartUpload(std::string_view xml,
                                                             const std::string& where);

struct UploadedPart {
  int number = 0;    // 1..10000
  std::string etag;  // as the UploadPart answer's ETag header gave it (quoted or not)
};
// The CompleteMultipartUpload request body listing `parts` in the given order (S3 wants them
// ascending by number).
std::string CompleteMultipartUploadXml(const std::vector<UploadedPart>& parts);

// Escapes & < > for element text.
std::string XmlEscape(std::string_view s);

// Decodes XML entities; unknown ones are kept as written.
std::string XmlUnescape(std::string_view s);
// Strips one pair of surrounding double quotes (ETags come quoted).
std::string Unquote(std::string s);

}  // namespace dljob::storage
