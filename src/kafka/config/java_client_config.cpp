#include "processor/kafka/java_client_config.hpp"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "kafka/config/jaas_config.hpp"
#include "kafka/config/java_properties.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "processor/error.hpp"

namespace processor::kafka {
namespace {

using internal::JaasEntry;

[[noreturn]] void refuse(const std::string& key, const std::string& why) {
  throw StateError(ErrorKind::InvalidArgument, key + ": " + why);
}

std::string uppercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::toupper(c)); });
  return text;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n\f");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n\f") - first + 1);
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Java client settings that librdkafka has no property for and that change nothing for a
// librdkafka client: JVM mechanics (serialisers, metrics reporters, TLS providers) and Java's own
// timeouts and buffers, whose librdkafka counterparts have defaults of their own.
const std::set<std::string, std::less<>>& java_only_properties() {
  static const std::set<std::string, std::less<>> names{
      "auto.include.jmx.reporter",
      "buffer.memory",
      "client.dns.lookup",
      "default.api.timeout.ms",
      "enable.metrics.push",
      "exclude.internal.topics",
      "interceptor.classes",
      "key.deserializer",
      "key.serializer",
      "max.block.ms",
      "max.poll.records",
      "max.request.size",
      "metadata.max.idle.ms",
      "metadata.recovery.rebootstrap.trigger.ms",
      "metadata.recovery.strategy",
      "metric.reporters",
      "metrics.num.samples",
      "metrics.recording.level",
      "metrics.sample.window.ms",
      "partitioner.adaptive.partitioning.enable",
      "partitioner.availability.timeout.ms",
      "partitioner.class",
      "partitioner.ignore.keys",
      "receive.buffer.bytes",
      "sasl.kerberos.kinit.cmd",
      "sasl.kerberos.ticket.renew.jitter",
      "sasl.kerberos.ticket.renew.window.factor",
      "sasl.login.connect.timeout.ms",
      "sasl.login.read.timeout.ms",
      "sasl.login.refresh.buffer.seconds",
      "sasl.login.refresh.min.period.seconds",
      "sasl.login.refresh.window.factor",
      "sasl.login.refresh.window.jitter",
      "sasl.login.retry.backoff.max.ms",
      "sasl.login.retry.backoff.ms",
      "sasl.oauthbearer.clock.skew.seconds",
      "sasl.oauthbearer.expected.audience",
      "sasl.oauthbearer.expected.issuer",
      "sasl.oauthbearer.header.urlencode",
      "sasl.oauthbearer.jwks.endpoint.refresh.ms",
      "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
      "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
      "sasl.oauthbearer.jwks.endpoint.url",
      "sasl.oauthbearer.scope.claim.name",
      "security.providers",
      "send.buffer.bytes",
      "ssl.keymanager.algorithm",
      "ssl.provider",
      "ssl.secure.random.implementation",
      "ssl.trustmanager.algorithm",
      "value.deserializer",
      "value.serializer",
  };
  return names;
}

// Java classes that decide how a client authenticates: librdkafka cannot load them.
const std::set<std::string, std::less<>>& java_class_properties() {
  static const std::set<std::string, std::less<>> names{"sasl.client.callback.handler.class",
                                                        "sasl.login.class", "ssl.engine.factory.class",
                                                        "sasl.oauthbearer.assertion.jwt.template.class"};
  return names;
}

constexpr std::string_view kOidcLoginHandler = "OAuthBearerLoginCallbackHandler";

// The translation of one file: takes entries out of `in` and writes librdkafka's into `out`.
class Translation {
 public:
  explicit Translation(std::map<std::string, std::string> in) : in_(std::move(in)) {}

  JavaClientConfig run() {
    security_protocol();
    if (auto mechanism = take("sasl.mechanism")) sasl_mechanism(*mechanism);
    const bool oidc = login_callback_handler();
    if (auto jaas = take("sasl.jaas.config")) login_module(internal::parse_jaas_config(*jaas), oidc);
    if (auto url = take("sasl.oauthbearer.token.endpoint.url")) token_endpoint(*url);
    trust_store();
    key_store();
    endpoint_identification();
    tls_protocols();
    if (auto suites = take("ssl.cipher.suites")) cipher_suites(*suites);
    if (auto retriever = take("sasl.oauthbearer.jwt.retriever.class")) jwt_retriever(*retriever);
    for (auto& [key, value] : in_) other(key, value);
    validate();
    return std::move(result_);
  }

 private:
  std::optional<std::string> take(const std::string& key) {
    const auto it = in_.find(key);
    if (it == in_.end()) return std::nullopt;
    std::string value = std::move(it->second);
    in_.erase(it);
    return value;
  }

  void set(const std::string& key, std::string value) {
    result_.properties.insert_or_assign(key, std::move(value));
  }

  void note(const std::string& key, const std::string& why) { result_.notes.push_back(key + ": " + why); }

  void security_protocol() {
    auto protocol = take("security.protocol");
    if (!protocol) return;
    const std::string name = uppercase(trimmed(*protocol));
    if (name != "PLAINTEXT" && name != "SSL" && name != "SASL_PLAINTEXT" && name != "SASL_SSL") {
      refuse("security.protocol",
             "'" + *protocol + "' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL");
    }
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    set("security.protocol", lower);
  }

  void sasl_mechanism(const std::string& value) {
    const std::string mechanism = uppercase(trimmed(value));
    static constexpr std::array<std::string_view, 5> kKnown{"GSSAPI", "PLAIN", "SCRAM-SHA-256",
                                                            "SCRAM-SHA-512", "OAUTHBEARER"};
    if (std::find(kKnown.begin(), kKnown.end(), mechanism) == kKnown.end()) {
      refuse("sasl.mechanism", "'" + value +
                                   "' is not a mechanism librdkafka has (GSSAPI, PLAIN, SCRAM-SHA-256, "
                                   "SCRAM-SHA-512, OAUTHBEARER)");
    }
    set("sasl.mechanisms", mechanism);
  }

  // sasl.login.callback.handler.class: Kafka's OIDC client-credentials handler is librdkafka's
  // sasl.oauthbearer.method=oidc; any other class cannot be loaded.
  bool login_callback_handler() {
    auto handler = take("sasl.login.callback.handler.class");
    if (!handler) return false;
    const std::string name = trimmed(*handler);
    if (!ends_with(name, kOidcLoginHandler)) {
      refuse("sasl.login.callback.handler.class",
             "the Java class '" + name + "' cannot be loaded by librdkafka; only Kafka's " +
                 std::string(kOidcLoginHandler) + " (OIDC client credentials) has a counterpart");
    }
    set("sasl.oauthbearer.method", "oidc");
    return true;
  }

  void login_module(const JaasEntry& entry, bool oidc) {
    const std::string& module = entry.login_module;
    const auto last_dot = module.rfind('.');
    const std::string simple = last_dot == std::string::npos ? module : module.substr(last_dot + 1);
    if (simple == "PlainLoginModule" || simple == "ScramLoginModule") {
      username_password(entry);
    } else if (simple == "OAuthBearerLoginModule") {
      oauthbearer(entry, oidc);
    } else if (simple == "Krb5LoginModule") {
      kerberos(entry);
    } else {
      // Quoted only when it is (or misspells) one of them or AWS MSK's IAM module: the value is a
      // secret, and a module name that is nothing like one can be a piece of something else.
      constexpr std::array<std::string_view, 5> kModules = {"PlainLoginModule", "ScramLoginModule",
                                                            "OAuthBearerLoginModule", "Krb5LoginModule",
                                                            "IAMLoginModule"};
      const std::string named =
          internal::close_to_one_of(simple, kModules, 3) ? "'" + simple + "'" : "at the start of the value";
      refuse("sasl.jaas.config", "the login module " + named +
                                     " has no librdkafka counterpart (PlainLoginModule, ScramLoginModule, "
                                     "OAuthBearerLoginModule and Krb5LoginModule have)");
    }
  }

  void username_password(const JaasEntry& entry) {
    const auto option = [&](const char* name) -> std::optional<std::string> {
      const auto it = entry.options.find(name);
      return it == entry.options.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    const auto username = option("username");
    const auto password = option("password");
    if (!username || !password) {
      refuse("sasl.jaas.config", entry.login_module.substr(entry.login_module.rfind('.') + 1) +
                                     " needs the options username and password");
    }
    if (const auto tokenauth = option("tokenauth"); tokenauth && uppercase(*tokenauth) == "TRUE") {
      refuse("sasl.jaas.config", "tokenauth=true (delegation tokens) is not supported by librdkafka");
    }
    set("sasl.username", *username);
    set("sasl.password", *password);
  }

  void oauthbearer(const JaasEntry& entry, bool oidc) {
    std::vector<std::string> unsecured;  // librdkafka's sasl.oauthbearer.config words
    std::vector<std::string> extensions;
    std::string principal_claim = "sub";
    std::string scope_claim = "scope";
    if (const auto it = entry.options.find("unsecuredLoginPrincipalClaimName"); it != entry.options.end()) {
      principal_claim = it->second;
    }
    if (const auto it = entry.options.find("unsecuredLoginScopeClaimName"); it != entry.options.end()) {
      scope_claim = it->second;
    }
    bool any_unsecured = false;
    for (const auto& option : entry.options) {
      const std::string& name = option.first;  // not a structured binding: the lambda captures them
      const std::string& value = option.second;
      const auto word = [&](const std::string& librdkafka_name) {
        if (value.find_first_of(" \t\r\n") != std::string::npos) {
          refuse("sasl.jaas.config", "the option " + name +
                                         " holds a blank, which librdkafka's "
                                         "sasl.oauthbearer.config cannot carry");
        }
        unsecured.push_back(librdkafka_name + "=" + value);
      };
      if (name.rfind("unsecuredLogin", 0) == 0) any_unsecured = true;
      if (name == "unsecuredLoginStringClaim_" + principal_claim) {
        word("principal");
      } else if (name == "unsecuredLoginListClaim_" + scope_claim) {
        // Java's list claim: the first character is the delimiter of the rest.
        std::string scopes;
        if (!value.empty()) {
          std::stringstream rest(value.substr(1));
          for (std::string scope; std::getline(rest, scope, value[0]);) {
            if (!scope.empty()) scopes += (scopes.empty() ? "" : ",") + scope;
          }
        }
        if (!scopes.empty()) unsecured.push_back("scope=" + scopes);
      } else if (name == "unsecuredLoginLifetimeSeconds") {
        word("lifeSeconds");
      } else if (name == "unsecuredLoginPrincipalClaimName") {
        word("principalClaimName");
      } else if (name == "unsecuredLoginScopeClaimName") {
        word("scopeClaimName");
      } else if (name.rfind("unsecuredLoginExtension_", 0) == 0) {
        word("extension_" + name.substr(std::string_view("unsecuredLoginExtension_").size()));
      } else if (name.rfind("unsecuredLogin", 0) == 0) {
        refuse("sasl.jaas.config", "the option " + name +
                                       " has no counterpart in librdkafka's unsecured tokens (principal, "
                                       "scope, lifetime, claim names and extensions have)");
      } else if (name == "clientId") {
        set("sasl.oauthbearer.client.id", value);
      } else if (name == "clientSecret") {
        set("sasl.oauthbearer.client.secret", value);
      } else if (name == "scope") {
        set("sasl.oauthbearer.scope", value);
      } else if (name.rfind("extension_", 0) == 0) {
        extensions.push_back(name.substr(std::string_view("extension_").size()) + "=" + value);
      }
    }
    if (any_unsecured) {
      if (oidc) {
        refuse("sasl.jaas.config",
               "unsecuredLogin options and an OIDC sasl.login.callback.handler.class "
               "cannot be used together");
      }
      if (std::none_of(unsecured.begin(), unsecured.end(),
                       [](const std::string& w) { return w.rfind("principal=", 0) == 0; })) {
        refuse("sasl.jaas.config",
               "unsecured tokens need the option unsecuredLoginStringClaim_" + principal_claim);
      }
      std::stable_partition(unsecured.begin(), unsecured.end(),
                            [](const std::string& w) { return w.rfind("principal=", 0) == 0; });
      std::string config;
      for (const auto& w : unsecured) config += (config.empty() ? "" : " ") + w;
      set("enable.sasl.oauthbearer.unsecure.jwt", "true");
      set("sasl.oauthbearer.config", config);
    } else if (!oidc && !in_.count("sasl.oauthbearer.token.endpoint.url") &&
               !result_.properties.count("sasl.oauthbearer.client.id")) {
      refuse("sasl.jaas.config",
             "OAuthBearerLoginModule needs unsecuredLoginStringClaim_sub (unsecured "
             "tokens) or clientId and clientSecret with sasl.oauthbearer.token.endpoint.url "
             "(OIDC)");
    }
    if (!extensions.empty()) {
      std::string joined;
      for (const auto& e : extensions) joined += (joined.empty() ? "" : ",") + e;
      set("sasl.oauthbearer.extensions", joined);
    }
  }

  void kerberos(const JaasEntry& entry) {
    const auto option = [&](const char* name) -> std::string {
      const auto it = entry.options.find(name);
      return it == entry.options.end() ? std::string() : it->second;
    };
    if (!option("principal").empty()) set("sasl.kerberos.principal", option("principal"));
    const bool keytab = !option("keyTab").empty() && uppercase(option("useKeyTab")) != "FALSE";
    if (keytab) {
      set("sasl.kerberos.keytab", option("keyTab"));
    } else if (uppercase(option("useTicketCache")) == "TRUE") {
      // The ticket cache someone else keeps fresh (kinit): librdkafka never runs kinit itself.
      set("sasl.kerberos.min.time.before.relogin", "0");
    } else {
      refuse("sasl.jaas.config", "Krb5LoginModule needs useKeyTab=true with keyTab, or useTicketCache=true");
    }
    if (!option("serviceName").empty()) set("sasl.kerberos.service.name", option("serviceName"));
  }

  void token_endpoint(const std::string& url) {
    if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) {
      refuse("sasl.oauthbearer.token.endpoint.url",
             "librdkafka takes an http:// or https:// token endpoint, not a file of tokens");
    }
    set("sasl.oauthbearer.token.endpoint.url", url);
    set("sasl.oauthbearer.method", "oidc");
  }

  void jwt_retriever(const std::string& value) {
    const std::string name = trimmed(value);
    if (ends_with(name, "ClientCredentialsJwtRetriever")) {
      set("sasl.oauthbearer.method", "oidc");
    } else if (ends_with(name, "JwtBearerJwtRetriever")) {
      set("sasl.oauthbearer.method", "oidc");
      set("sasl.oauthbearer.grant.type", "urn:ietf:params:oauth:grant-type:jwt-bearer");
    } else if (!ends_with(name, "DefaultJwtRetriever")) {
      refuse("sasl.oauthbearer.jwt.retriever.class",
             "the Java class '" + name + "' cannot be loaded by librdkafka");
    }
  }

  // ssl.truststore.*: a PEM file or PEM text; Java's default type, JKS, and PKCS12 are refused
  // with the commands that make a PEM file of them.
  void trust_store() {
    const auto type = take("ssl.truststore.type");
    const auto location = take("ssl.truststore.location");
    const auto certificates = take("ssl.truststore.certificates");
    const auto password = take("ssl.truststore.password");
    const std::string kind = type ? uppercase(trimmed(*type)) : std::string("JKS");
    if (location) {
      if (kind == "PEM") {
        set("ssl.ca.location", *location);
      } else if (kind == "JKS") {
        refuse("ssl.truststore.location",
               "the JKS trust store '" + *location +
                   "' cannot be read by librdkafka: convert it with `keytool -importkeystore -srckeystore " +
                   *location +
                   " -destkeystore truststore.p12 -deststoretype PKCS12` and `openssl pkcs12 -in " +
                   "truststore.p12 -nokeys -out ca.pem`, then set ssl.truststore.type=PEM and "
                   "ssl.truststore.location=ca.pem");
      } else if (kind == "PKCS12") {
        refuse("ssl.truststore.location",
               "librdkafka reads trusted certificates as PEM, not from the PKCS12 store '" + *location +
                   "': `openssl pkcs12 -in " + *location +
                   " -nokeys -out ca.pem`, then set ssl.truststore.type=PEM and "
                   "ssl.truststore.location=ca.pem");
      } else {
        refuse("ssl.truststore.type", "'" + *type + "' is not a store type librdkafka reads (PEM)");
      }
    }
    if (certificates) {
      if (kind != "PEM") refuse("ssl.truststore.certificates", "needs ssl.truststore.type=PEM");
      set("ssl.ca.pem", *certificates);
    }
    if (password && (location || certificates) && kind == "PEM") {
      note("ssl.truststore.password", "left out: a PEM trust store has no password");
    }
  }

  // ssl.keystore.*: PKCS12 and PEM (a file of the key and its chain, or PEM text); JKS is refused
  // with the command that converts it.
  void key_store() {
    const auto type = take("ssl.keystore.type");
    const auto location = take("ssl.keystore.location");
    const auto store_password = take("ssl.keystore.password");
    const auto key_password = take("ssl.key.password");
    const auto key = take("ssl.keystore.key");
    const auto chain = take("ssl.keystore.certificate.chain");
    const std::string kind = type ? uppercase(trimmed(*type)) : std::string("JKS");
    if (location) {
      if (kind == "PKCS12") {
        if (key_password && store_password && *key_password != *store_password) {
          refuse("ssl.key.password",
                 "librdkafka opens a PKCS12 key store and its key with one password, ssl.keystore.password: "
                 "make the two the same (`openssl pkcs12` re-exports it)");
        }
        set("ssl.keystore.location", *location);
        if (store_password) set("ssl.keystore.password", *store_password);
      } else if (kind == "PEM") {
        set("ssl.certificate.location", *location);
        set("ssl.key.location", *location);
        if (key_password) set("ssl.key.password", *key_password);
      } else if (kind == "JKS") {
        refuse("ssl.keystore.location",
               "the JKS key store '" + *location +
                   "' cannot be read by librdkafka: convert it with `keytool -importkeystore -srckeystore " +
                   *location + " -destkeystore keystore.p12 -deststoretype PKCS12`, then set " +
                   "ssl.keystore.type=PKCS12 and ssl.keystore.location=keystore.p12");
      } else {
        refuse("ssl.keystore.type", "'" + *type + "' is not a store type librdkafka reads (PKCS12, PEM)");
      }
    }
    if (key || chain) {
      if (kind != "PEM")
        refuse(key ? "ssl.keystore.key" : "ssl.keystore.certificate.chain", "needs ssl.keystore.type=PEM");
      if (!key || !chain) {
        refuse(key ? "ssl.keystore.key" : "ssl.keystore.certificate.chain",
               "needs both ssl.keystore.key and ssl.keystore.certificate.chain");
      }
      set("ssl.key.pem", *key);
      set("ssl.certificate.pem", *chain);
      if (key_password) set("ssl.key.password", *key_password);
    }
  }

  void endpoint_identification() {
    const auto algorithm = take("ssl.endpoint.identification.algorithm");
    if (!algorithm) return;
    const std::string name = uppercase(trimmed(*algorithm));
    if (name.empty()) {
      set("ssl.endpoint.identification.algorithm", "none");
    } else if (name == "HTTPS") {
      set("ssl.endpoint.identification.algorithm", "https");
    } else {
      refuse("ssl.endpoint.identification.algorithm",
             "'" + *algorithm + "' is neither https nor empty (off)");
    }
  }

  // ssl.protocol and ssl.enabled.protocols: librdkafka (OpenSSL) negotiates TLS 1.2 or 1.3 by
  // itself, which is what a Java client of Kafka 4 allows; an older protocol cannot be honoured.
  void tls_protocols() {
    for (const char* key : {"ssl.protocol", "ssl.enabled.protocols"}) {
      const auto value = take(key);
      if (!value) continue;
      std::stringstream list(*value);
      for (std::string item; std::getline(list, item, ',');) {
        const std::string name = uppercase(trimmed(item));
        if (name != "TLS" && name != "TLSV1.2" && name != "TLSV1.3") {
          refuse(key, "'" + trimmed(item) + "' cannot be honoured: librdkafka negotiates TLS 1.2 or 1.3");
        }
      }
      note(key, "left out: librdkafka negotiates TLS 1.2 or 1.3 itself");
    }
  }

  void cipher_suites(const std::string& suites) {
    if (suites.find("_WITH_") != std::string::npos) {
      refuse("ssl.cipher.suites",
             "Java's cipher suite names (TLS_..._WITH_...) are not OpenSSL's: give "
             "OpenSSL's names (e.g. ECDHE-RSA-AES128-GCM-SHA256)");
    }
    set("ssl.cipher.suites", suites);
  }

  void other(const std::string& key, const std::string& value) {
    if (java_class_properties().count(key)) {
      refuse(key, "a Java class cannot be loaded by librdkafka");
    }
    if (java_only_properties().count(key)) {
      note(key, "left out: a Java client setting librdkafka has no counterpart for");
      return;
    }
    if (!internal::is_librdkafka_property(key)) {
      refuse(key, "neither a Java client property offsetctl knows nor a librdkafka one");
    }
    set(key, value);
  }

  // Every property librdkafka takes as it will at connection, so that a bad value is refused
  // now, naming its key (and a secret's value never).
  void validate() const {
    internal::RdPtr<rd_kafka_conf_t> conf(rd_kafka_conf_new());
    char error[512];
    for (const auto& [name, value] : result_.properties) {
      if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), error, sizeof error) !=
          RD_KAFKA_CONF_OK) {
        refuse(name, internal::is_secret_property(name) ? std::string("librdkafka refuses its value")
                                                        : std::string(error));
      }
    }
  }

  std::map<std::string, std::string> in_;
  JavaClientConfig result_;
};

}  // namespace

JavaClientConfig java_client_config(std::string_view text) {
  std::map<std::string, std::string> entries;  // a java.util.Properties: the last of a key wins
  for (auto& property : internal::parse_java_properties(text)) {
    entries.insert_or_assign(std::move(property.key), std::move(property.value));
  }
  return Translation(std::move(entries)).run();
}

JavaClientConfig load_java_client_config(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw StateError(ErrorKind::NotFound, "cannot read the client properties file " + file.string());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    throw StateError(ErrorKind::NotFound, "cannot read the client properties file " + file.string());
  try {
    return java_client_config(text);
  } catch (const StateError& error) {
    throw StateError(error.kind(), file.string() + ": " + error.what());
  }
}

}  // namespace processor::kafka
