// See s3_xml.h.
#include "storage/objstore/s3_xml.h"

#include <charconv>
#include <optional>

namespace dljob::storage {
namespace {

// The text of the first <name>…</name> (or <name attr…>…</name>) in `xml` at or after `from`,
// and where it ends; nullopt if absent.
struct Element {
  std::string_view text;
  size_t end = 0;
};

std::optional<Element> Find(std::string_view xml, std::string_view name, size_t from = 0) {
  const std::string open = "<" + std::string(name);
  const std::string close = "</" + std::string(name) + ">";
  size_t at = from;
  while ((at = xml.find(open, at)) != std::string_view::npos) {
    const size_t after = at + open.size();
    if (after < xml.size() && (xml[after] == '>' || xml[after] == ' ' || xml[after] == '\t' ||
                               xml[after] == '\n' || xml[after] == '\r' || xml[after] == '/')) {
      const size_t gt = xml.find('>', after);
      if (gt == std::string_view::npos) return std::nullopt;
      if (xml[gt - 1] == '/') return Element{std::string_view(), gt + 1};  // <name/>
      const size_t end = xml.find(close, gt + 1);
      if (end == std::string_view::npos) return std::nullopt;
      return Element{xml.substr(gt + 1, end - gt - 1), end + close.size()};
    }
    at = after;
  }
  return std::nullopt;
}

std::string Text(std::string_view xml, std::string_view name) {
  std::optional<Element> e = Find(xml, name);
  return e ? XmlUnescape(e->text) : std::string();
}

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  s.erase(s.find_last_not_of(ws) + 1);
  return s;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::string XmlUnescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out += s[i];
      continue;
    }
    std::string_view ent = s.substr(i + 1, semi - i - 1);
    std::optional<std::string> repl;
    if (ent == "amp")
      repl = "&";
    else if (ent == "lt")
      repl = "<";
    else if (ent == "gt")
      repl = ">";
    else if (ent == "quot")
      repl = "\"";
    else if (ent == "apos")
      repl = "'";
    else if (ent.size() > 1 && ent[0] == '#') {
      const bool hex = ent[1] == 'x' || ent[1] == 'X';
      std::string_view digits = ent.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      auto [p, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
      if (ec == std::errc() && p == digits.data() + digits.size() && !digits.empty() &&
          cp <= 0x10FFFF) {
        std::string u;
        AppendUtf8(u, cp);
        repl = u;
      }
    }
    if (!repl) {
      out += s[i];
      continue;
    }
    out += *repl;
    i = semi;
  }
  return out;
}

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

Result<ListPage> ParseListObjectsV2(std::string_view xml, const std::string& where) {
  if (!Find(xml, "ListBucketResult")) {
    return Status::Unavailable(where + ": listing: the response is not a ListBucketResult");
  }
  ListPage page;
  size_t at = 0;
  while (std::optional<Element> contents = Find(xml, "Contents", at)) {
    at = contents->end;
    ObjectInfo info;
    std::optional<Element> key = Find(contents->text, "Key");
    if (!key) return Status::Unavailable(where + ": listing: an entry has no <Key>");
    info.key = XmlUnescape(key->text);
    const std::string size = Trim(Text(contents->text, "Size"));
    auto [p, ec] = std::from_chars(size.data(), size.data() + size.size(), info.size);
    if (size.empty() || ec != std::errc() || p != size.data() + size.size()) {
      return Status::Unavailable(where + ": listing: \"" + info.key + "\" has a bad <Size> \"" +
                                 size + "\"");
    }
    info.etag = Unquote(Trim(Text(contents->text, "ETag")));
    page.objects.push_back(std::move(info));
  }
  if (Trim(Text(xml, "IsTruncated")) == "true") {
    page.next_token = Text(xml, "NextContinuationToken");
    if (page.next_token.empty()) {
      return Status::Unavailable(where +
                                 ": listing: truncated, but no <NextContinuationToken> to go on");
    }
  }
  return page;
}

S3ErrorBody ParseS3Error(std::string_view xml) {
  S3ErrorBody out;
  std::optional<Element> error = Find(xml, "Error");
  if (!error) return out;
  out.code = Trim(Text(error->text, "Code"));
  out.message = Trim(Text(error->text, "Message"));
  return out;
}

Result<std::string> ParseInitiateMultipartUpload(std::string_view xml, const std::string& where) {
  std::optional<Element> result = Find(xml, "InitiateMultipartUploadResult");
  if (!result) {
    return Status::Unavailable(where +
                               ": starting a multipart upload: the response is not an "
                               "InitiateMultipartUploadResult");
  }
  std::string id = Trim(Text(result->text, "UploadId"));
  if (id.empty()) {
    return Status::Unavailable(where +
                               ": starting a multipart upload: the response has no UploadId");
  }
  return id;
}

Result<CompleteMultipartResult> ParseCompleteMultipartUpload(std::string_view xml,
                                                             const std::string& where) {
  CompleteMultipartResult out;
  if (std::optional<Element> result = Find(xml, "CompleteMultipartUploadResult")) {
    out.etag = Unquote(Trim(Text(result->text, "ETag")));
    return out;
  }
  out.error = ParseS3Error(xml);
  if (out.error.code.empty()) {
    return Status::Unavailable(where +
                               ": completing a multipart upload: the response is neither a "
                               "CompleteMultipartUploadResult nor an Error");
  }
  return out;
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

std::string CompleteMultipartUploadXml(const std::vector<UploadedPart>& parts) {
  std::string out = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  for (const UploadedPart& p : parts) {
    out += "<Part><PartNumber>" + std::to_string(p.number) + "</PartNumber><ETag>" +
           XmlEscape(p.etag) + "</ETag></Part>";
  }
  out += "</CompleteMultipartUpload>";
  return out;
}

}  // namespace dljob::storage
