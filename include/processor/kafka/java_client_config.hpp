#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "processor/kafka/kafka_properties.hpp"

namespace processor::kafka {

// A Java Kafka client's properties file as librdkafka properties: what Kafka's tools take as
// --command-config and Java applications hand to their clients, so that the same file connects
// offsetctl and a ConsumerSetup to a secured cluster.
//
// What is translated (README "Secured clusters" has the table):
// - security.protocol, sasl.kerberos.service.name, sasl.oauthbearer.token.endpoint.url and every
//   name librdkafka knows are taken as they are;
// - sasl.mechanism becomes sasl.mechanisms;
// - sasl.jaas.config: PlainLoginModule and ScramLoginModule (username, password),
//   OAuthBearerLoginModule (unsecured JWTs: unsecuredLogin* options; OIDC client credentials:
//   clientId, clientSecret, scope, with sasl.oauthbearer.token.endpoint.url), Krb5LoginModule
//   (principal, keyTab, useTicketCache, serviceName);
// - trust and key stores of type PEM (a file or inline) and key stores of type PKCS12;
// - ssl.endpoint.identification.algorithm ("" turns host-name verification off).
// What cannot be honoured is refused, naming the key: a JKS store (with the commands that convert
// it), a PKCS12 trust store, a Java class (callback handlers), a login module librdkafka has no
// counterpart for, a property that neither Java's clients nor librdkafka know. Java-only settings
// that change nothing for a librdkafka client (JVM TLS providers, Java's own timeouts) are left out
// and named in notes.
//
// No value of a secret (a password, a client secret, the JAAS text) appears in an error message
// or a note.
struct JavaClientConfig {
  KafkaProperties properties;      // librdkafka's names and shapes
  std::vector<std::string> notes;  // one sentence per Java-only property left out
};

// Translates the text of a Java properties file (java.util.Properties' syntax: key=value,
// key: value or key value; # and ! comments; backslash escapes, \uXXXX and line continuations;
// bytes read as ISO-8859-1, as Java reads such a file).
// Throws StateError(InvalidArgument) naming the key (or the line) that cannot be honoured.
JavaClientConfig java_client_config(std::string_view text);

// Reads `file` and translates it as above.
// Throws StateError(NotFound) when the file cannot be read, naming it, and as above.
JavaClientConfig load_java_client_config(const std::filesystem::path& file);

}  // namespace processor::kafka
