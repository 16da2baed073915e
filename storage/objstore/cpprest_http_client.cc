// The cpprestsdk implementation of HttpClient (http_client.h). cpprestsdk's exceptions stop here:
// each becomes a kUnavailable Status naming the request.
#include <cpprest/http_client.h>
#include <strings.h>

#include "storage/objstore/http_client.h"

namespace dljob::storage {
namespace {

namespace http = web::http;

class CpprestHttpClient : public HttpClient {
 public:
  CpprestHttpClient(std::string base_url, const http::client::http_client_config& config)
      : base_url_(std::move(base_url)), client_(web::uri(base_url_), config) {}

  Result<HttpResponse> Send(const HttpRequest& r) override {
    const std::string what = r.method + " " + base_url_ + r.target;
    try {
      http::http_request req(r.method);
      req.set_request_uri(web::uri(r.target));
      for (const auto& [name, value] : r.headers) req.headers().add(name, value);
      if (!r.body.empty() || r.method == "PUT" || r.method == "POST") {
        req.set_body(std::vector<unsigned char>(r.body.begin(), r.body.end()));
      }
      http::http_response resp = client_.request(req).get();
      HttpResponse out;
      out.status = resp.status_code();
      for (const auto& [name, value] : resp.headers()) out.headers.emplace_back(name, value);
      if (r.method != "HEAD") {
        std::vector<unsigned char> body = resp.extract_vector().get();
        out.body.assign(body.begin(), body.end());
      }
      return out;
    } catch (const std::exception& e) {
      return Status::Unavailable(what + ": " + e.what());
    }
  }

 private:
  std::string base_url_;
  http::client::http_client client_;
};

}  // namespace

std::string HttpResponse::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n.size() == name.size() && strncasecmp(n.data(), name.data(), n.size()) == 0) return v;
  }
  return "";
}

Result<HttpClientPtr> MakeCpprestHttpClient(const std::string& base_url,
                                            std::chrono::milliseconds timeout) {
  try {
    web::uri uri(base_url);
    if (uri.host().empty()) return Status::InvalidArgument("\"" + base_url + "\": no host");
    http::client::http_client_config config;
    config.set_timeout(timeout);
    config.set_max_redirects(0);
    return HttpClientPtr(new CpprestHttpClient(base_url, config));
  } catch (const std::exception& e) {
    return Status::InvalidArgument("\"" + base_url + "\" is not a valid URL: " + e.what());
  }
}

}  // namespace dljob::storage
