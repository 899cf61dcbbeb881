#pragma once
// An HTTP(S) client for the tests of the MetricsServer and of `offsetctl exporter`: libcurl's easy
// interface (link CURL::libcurl). HttpSession keeps its connection alive between requests, as
// Prometheus does; http_get() makes one request on a connection of its own.

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace processor::testing {

struct HttpRequestOptions {
  // Basic auth credentials, when set.
  std::optional<std::pair<std::string, std::string>> basic_auth;
  // HTTPS: the CA that signed the server's certificate (the server is verified against it, host
  // name included).
  std::string ca_file;
  // HTTPS: the client's certificate and key, for mutual TLS.
  std::string client_cert_file;
  std::string client_key_file;
  // HTTPS: offer TLS 1.2 and nothing newer.
  bool tls12_only = false;
  // "GET" or "HEAD".
  std::string method = "GET";
  long timeout_ms = 10000;
};

struct HttpResponse {
  long status = 0;  // 0: no HTTP response (see error)
  std::string body;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string error;                           // libcurl's message when the request failed
  long connections_opened = 0;                 // 0 when the request reused a kept-alive connection

  explicit operator bool() const { return status != 0 && error.empty(); }
  // The header's value, "" when absent; `name` in any case.
  std::string header(std::string name) const {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto found = headers.find(name);
    return found == headers.end() ? std::string() : found->second;
  }
};

// One libcurl easy handle. Not safe for concurrent use: one per thread.
class HttpSession {
 public:
  HttpSession() : curl_(start()) {}
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  HttpResponse get(const std::string& url, const HttpRequestOptions& options = {}) {
    HttpResponse response;
    CURL* curl = curl_.get();
    ::curl_easy_reset(curl);
    char error[CURL_ERROR_SIZE] = {};
    ::curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    ::curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    ::curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    ::curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, options.timeout_ms);
    ::curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &append_body);
    ::curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
    ::curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &add_header);
    ::curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response);
    if (options.method == "HEAD") ::curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    if (options.basic_auth) {
      ::curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
      ::curl_easy_setopt(curl, CURLOPT_USERNAME, options.basic_auth->first.c_str());
      ::curl_easy_setopt(curl, CURLOPT_PASSWORD, options.basic_auth->second.c_str());
    }
    if (!options.ca_file.empty()) ::curl_easy_setopt(curl, CURLOPT_CAINFO, options.ca_file.c_str());
    if (options.tls12_only)
      ::curl_easy_setopt(
          curl, CURLOPT_SSLVERSION,
          static_cast<long>(CURL_SSLVERSION_TLSv1_2) | static_cast<long>(CURL_SSLVERSION_MAX_TLSv1_2));
    if (!options.client_cert_file.empty()) {
      ::curl_easy_setopt(curl, CURLOPT_SSLCERT, options.client_cert_file.c_str());
      ::curl_easy_setopt(curl, CURLOPT_SSLKEY, options.client_key_file.c_str());
    }
    const CURLcode result = ::curl_easy_perform(curl);
    if (result != CURLE_OK) {
      response.status = 0;
      response.error = error[0] != '\0' ? error : ::curl_easy_strerror(result);
      return response;
    }
    ::curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    ::curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &response.connections_opened);
    return response;
  }

 private:
  struct Deleter {
    void operator()(CURL* curl) const noexcept { ::curl_easy_cleanup(curl); }
  };

  static CURL* start() {
    // Once, before any thread makes a handle: curl_global_init is not safe to race.
    static const bool initialized = ::curl_global_init(CURL_GLOBAL_ALL) == CURLE_OK;
    (void)initialized;
    return ::curl_easy_init();
  }

  static std::size_t append_body(char* data, std::size_t size, std::size_t count, void* response) {
    static_cast<HttpResponse*>(response)->body.append(data, size * count);
    return size * count;
  }

  static std::size_t add_header(char* data, std::size_t size, std::size_t count, void* response) {
    const std::string line(data, size * count);
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      value.erase(value.find_last_not_of(" \t\r\n") + 1);
      static_cast<HttpResponse*>(response)->headers[name] = value;
    }
    return size * count;
  }

  std::unique_ptr<CURL, Deleter> curl_;
};

// One request on a connection of its own.
inline HttpResponse http_get(const std::string& url, const HttpRequestOptions& options = {}) {
  HttpSession session;
  return session.get(url, options);
}

}  // namespace processor::testing
