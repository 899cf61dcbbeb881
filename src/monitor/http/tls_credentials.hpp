#pragma once
// Internal to the MetricsServer: the TLS of exporter-toolkit's web configuration
// (MetricsServerTlsOptions), checked and loaded for libmicrohttpd, whose TLS is GnuTLS.

#include <optional>
#include <string>
#include <string_view>

#include "processor/monitor/metrics_server.hpp"

namespace processor::monitor::http {

// exporter-toolkit's client_auth_type, which are Go's tls.ClientAuthType.
enum class ClientAuth {
  NoClientCert,
  RequestClientCert,
  RequireAnyClientCert,
  VerifyClientCertIfGiven,
  RequireAndVerifyClientCert
};

// The client auth type named `name` (exactly as exporter-toolkit spells it); nullopt for any other.
std::optional<ClientAuth> client_auth_named(std::string_view name) noexcept;
// The names client_auth_named() knows, for messages: "NoClientCert, RequestClientCert, ...".
inline constexpr std::string_view kClientAuthNames =
    "NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, "
    "RequireAndVerifyClientCert";

// GnuTLS' priority string for the oldest version `min_version` ("TLS12" or "TLS13"); nullopt for
// any other.
std::optional<std::string> tls_priorities_for(std::string_view min_version);
inline constexpr std::string_view kTlsVersionNames = "TLS12, TLS13";

// Whether `tls` asks for TLS: any field off its default.
bool tls_configured(const MetricsServerTlsOptions& tls);

// What libmicrohttpd is given: the files' PEM text, GnuTLS' priorities and the client auth.
struct TlsCredentials {
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;  // empty without client_ca_file
  std::string priorities;
  ClientAuth client_auth = ClientAuth::NoClientCert;
};

// Reads `tls`'s files and checks them with GnuTLS: the certificate parses, the key parses and
// matches it, the CA file holds certificates.
// REQUIRES: tls_configured(tls).
// Throws StateError(InvalidArgument) naming the field and its file (or value) when a file is
// missing, unreadable or holds no PEM of its kind, when the key does not match the certificate,
// when min_version or client_auth_type is unknown, when a Verify type has no client_ca_file, or
// when client_ca_file is given with NoClientCert.
TlsCredentials load_tls_credentials(const MetricsServerTlsOptions& tls);

// Sets up a new connection's TLS session (a gnutls_session_t) to ask for, require and verify the
// client's certificate as `client_auth` says; called as the connection starts, before its
// handshake. The trust list of the verification is the credentials' client_ca_pem.
void apply_client_auth(void* tls_session, ClientAuth client_auth) noexcept;

}  // namespace processor::monitor::http
