#include "monitor/http/tls_credentials.hpp"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "processor/error.hpp"

namespace processor::monitor::http {

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw StateError(ErrorKind::InvalidArgument, "metrics server tls." + what);
}

// The whole of `path`, named in errors as tls.<field> '<path>'.
std::string read_pem_file(const std::string& field, const std::string& path) {
  const auto named = field + " '" + path + "'";
  if (path.empty()) refuse(field + " is needed: TLS needs a certificate and its key");
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) refuse(named + ": cannot read it (" + std::strerror(errno) + ")");
  std::string text;
  char chunk[8192];
  std::size_t read = 0;
  while ((read = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) text.append(chunk, read);
  if (std::ferror(file.get()) != 0) refuse(named + ": cannot read it (" + std::strerror(errno) + ")");
  return text;
}

gnutls_datum_t datum_of(const std::string& text) {
  return {reinterpret_cast<unsigned char*>(const_cast<char*>(text.data())),
          static_cast<unsigned int>(text.size())};
}

std::string gnutls_reason(int code) { return std::string(" (") + ::gnutls_strerror(code) + ")"; }

void check_certificates(const std::string& field, const std::string& path, const std::string& pem) {
  gnutls_x509_crt_t* certificates = nullptr;
  unsigned int count = 0;
  const gnutls_datum_t data = datum_of(pem);
  const int imported = ::gnutls_x509_crt_list_import2(&certificates, &count, &data, GNUTLS_X509_FMT_PEM, 0);
  for (unsigned int i = 0; i < count; ++i) ::gnutls_x509_crt_deinit(certificates[i]);
  ::gnutls_free(certificates);
  if (imported < 0 || count == 0)
    refuse(field + " '" + path + "': holds no PEM certificate" + gnutls_reason(imported));
}

void check_private_key(const std::string& path, const std::string& pem) {
  gnutls_x509_privkey_t key = nullptr;
  if (::gnutls_x509_privkey_init(&key) < 0) refuse("key_file '" + path + "': out of memory");
  const gnutls_datum_t data = datum_of(pem);
  const int imported = ::gnutls_x509_privkey_import2(key, &data, GNUTLS_X509_FMT_PEM, nullptr, 0);
  ::gnutls_x509_privkey_deinit(key);
  if (imported < 0)
    refuse("key_file '" + path + "': holds no unencrypted PEM private key" + gnutls_reason(imported));
}

struct CredentialsDeleter {
  void operator()(gnutls_certificate_credentials_t credentials) const noexcept {
    ::gnutls_certificate_free_credentials(credentials);
  }
};
using Credentials =
    std::unique_ptr<std::remove_pointer_t<gnutls_certificate_credentials_t>, CredentialsDeleter>;

Credentials allocate_credentials() {
  gnutls_certificate_credentials_t credentials = nullptr;
  if (::gnutls_certificate_allocate_credentials(&credentials) < 0) refuse("credentials: out of memory");
  return Credentials(credentials);
}

// The handshake's check of a client certificate (gnutls_session_set_verify_function): signed by
// the trust list (client_ca_file) and valid now. Without a certificate, `required` decides.
int verify_client_certificate(gnutls_session_t session, bool required) noexcept {
  unsigned int count = 0;
  if (::gnutls_certificate_get_peers(session, &count) == nullptr || count == 0)
    return required ? GNUTLS_E_NO_CERTIFICATE_FOUND : 0;
  unsigned int status = 0;
  if (::gnutls_certificate_verify_peers2(session, &status) < 0 || status != 0)
    return GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR;
  return 0;
}

int verify_given_client_certificate(gnutls_session_t session) {
  return verify_client_certificate(session, false);
}

int verify_required_client_certificate(gnutls_session_t session) {
  return verify_client_certificate(session, true);
}

}  // namespace

std::optional<ClientAuth> client_auth_named(std::string_view name) noexcept {
  if (name == "NoClientCert") return ClientAuth::NoClientCert;
  if (name == "RequestClientCert") return ClientAuth::RequestClientCert;
  if (name == "RequireAnyClientCert") return ClientAuth::RequireAnyClientCert;
  if (name == "VerifyClientCertIfGiven") return ClientAuth::VerifyClientCertIfGiven;
  if (name == "RequireAndVerifyClientCert") return ClientAuth::RequireAndVerifyClientCert;
  return std::nullopt;
}

std::optional<std::string> tls_priorities_for(std::string_view min_version) {
  if (min_version == "TLS12") return "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
  if (min_version == "TLS13") return "NORMAL:-VERS-ALL:+VERS-TLS1.3";
  return std::nullopt;
}

bool tls_configured(const MetricsServerTlsOptions& tls) {
  const MetricsServerTlsOptions defaults;
  return tls.cert_file != defaults.cert_file || tls.key_file != defaults.key_file ||
         tls.min_version != defaults.min_version || tls.client_auth_type != defaults.client_auth_type ||
         tls.client_ca_file != defaults.client_ca_file;
}

TlsCredentials load_tls_credentials(const MetricsServerTlsOptions& tls) {
  TlsCredentials loaded;
  const std::optional<std::string> priorities = tls_priorities_for(tls.min_version);
  if (!priorities)
    refuse("min_version '" + tls.min_version + "': not one of " + std::string(kTlsVersionNames));
  loaded.priorities = *priorities;
  const std::optional<ClientAuth> client_auth = client_auth_named(tls.client_auth_type);
  if (!client_auth) {
    refuse("client_auth_type '" + tls.client_auth_type + "': not one of " + std::string(kClientAuthNames));
  }
  loaded.client_auth = *client_auth;
  const bool verifies = loaded.client_auth == ClientAuth::VerifyClientCertIfGiven ||
                        loaded.client_auth == ClientAuth::RequireAndVerifyClientCert;
  if (verifies && tls.client_ca_file.empty())
    refuse("client_auth_type " + tls.client_auth_type + " needs tls.client_ca_file, the CAs to verify with");
  if (loaded.client_auth == ClientAuth::NoClientCert && !tls.client_ca_file.empty())
    refuse("client_ca_file is given with client_auth_type NoClientCert, which would ignore it");

  loaded.cert_pem = read_pem_file("cert_file", tls.cert_file);
  loaded.key_pem = read_pem_file("key_file", tls.key_file);
  check_certificates("cert_file", tls.cert_file, loaded.cert_pem);
  check_private_key(tls.key_file, loaded.key_pem);
  const Credentials credentials = allocate_credentials();
  const gnutls_datum_t cert = datum_of(loaded.cert_pem);
  const gnutls_datum_t key = datum_of(loaded.key_pem);
  const int paired =
      ::gnutls_certificate_set_x509_key_mem2(credentials.get(), &cert, &key, GNUTLS_X509_FMT_PEM, nullptr, 0);
  if (paired == GNUTLS_E_CERTIFICATE_KEY_MISMATCH)
    refuse("key_file '" + tls.key_file + "' is not the key of tls.cert_file '" + tls.cert_file + "'");
  if (paired < 0) {
    refuse("cert_file '" + tls.cert_file + "' and key_file '" + tls.key_file + "' cannot be used together" +
           gnutls_reason(paired));
  }
  if (!tls.client_ca_file.empty()) {
    loaded.client_ca_pem = read_pem_file("client_ca_file", tls.client_ca_file);
    const gnutls_datum_t ca = datum_of(loaded.client_ca_pem);
    const int trusted = ::gnutls_certificate_set_x509_trust_mem(credentials.get(), &ca, GNUTLS_X509_FMT_PEM);
    if (trusted <= 0) {
      refuse("client_ca_file '" + tls.client_ca_file + "': holds no PEM certificate" +
             (trusted < 0 ? gnutls_reason(trusted) : std::string()));
    }
  }
  return loaded;
}

void apply_client_auth(void* tls_session, ClientAuth client_auth) noexcept {
  const auto session = static_cast<gnutls_session_t>(tls_session);
  switch (client_auth) {
    case ClientAuth::NoClientCert:
      ::gnutls_certificate_server_set_request(session, GNUTLS_CERT_IGNORE);
      break;
    case ClientAuth::RequestClientCert:
      ::gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
      break;
    case ClientAuth::RequireAnyClientCert:
      ::gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE);
      break;
    case ClientAuth::VerifyClientCertIfGiven:
      ::gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
      ::gnutls_session_set_verify_function(session, &verify_given_client_certificate);
      break;
    case ClientAuth::RequireAndVerifyClientCert:
      ::gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE);
      ::gnutls_session_set_verify_function(session, &verify_required_client_certificate);
      break;
  }
}

}  // namespace processor::monitor::http
