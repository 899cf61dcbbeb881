// A Java client properties file (what Kafka's tools take as --command-config) as librdkafka
// properties: Java's Properties syntax, the JAAS text, the translation table and its refusals.

#include "processor/kafka/java_client_config.hpp"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kafka/config/jaas_config.hpp"
#include "kafka/config/java_properties.hpp"
#include "processor/error.hpp"

namespace {

using namespace processor;
using processor::kafka::java_client_config;
using processor::kafka::internal::parse_jaas_config;
using processor::kafka::internal::parse_java_properties;

std::map<std::string, std::string> entries(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const auto& p : parse_java_properties(text)) out.insert_or_assign(p.key, p.value);
  return out;
}

// The message of the StateError(InvalidArgument) that `call` throws ("" when it throws none).
template <class Call>
std::string refusal(Call&& call) {
  try {
    call();
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument) << error.what();
    return error.what();
  }
  return "";
}

// The librdkafka the library runs with has every SASL mechanism Kafka has (scripts/librdkafka.sh).
TEST(Librdkafka, HasEverySaslMechanismKafkaHas) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char features[512];
  std::size_t size = sizeof features;
  ASSERT_EQ(rd_kafka_conf_get(conf, "builtin.features", features, &size), RD_KAFKA_CONF_OK);
  rd_kafka_conf_destroy(conf);
  const std::string list = "," + std::string(features) + ",";
  for (const char* feature : {"ssl", "sasl_plain", "sasl_scram", "sasl_oauthbearer", "oidc", "sasl_gssapi"}) {
    EXPECT_NE(list.find("," + std::string(feature) + ","), std::string::npos)
        << feature << " not in " << features;
  }
}

TEST(JavaProperties, SeparatorsCommentsAndBlanksAsJavaReadsThem) {
  const auto got = entries(
      "# a comment\n"
      "! another\n"
      "   \n"
      "a=1\n"
      "b : 2\n"
      "c 3\n"
      "  d=\n"
      "e\n"
      "f==x\n"
      "g = value with trailing blank \n"
      "h:=:\n");
  EXPECT_EQ(got.at("a"), "1");
  EXPECT_EQ(got.at("b"), "2");
  EXPECT_EQ(got.at("c"), "3");
  EXPECT_EQ(got.at("d"), "");
  EXPECT_EQ(got.at("e"), "");
  EXPECT_EQ(got.at("f"), "=x");
  EXPECT_EQ(got.at("g"), "value with trailing blank ");
  EXPECT_EQ(got.at("h"), "=:");
  EXPECT_EQ(got.size(), 8u);
}

TEST(JavaProperties, EscapesContinuationsAndLineEndings) {
  const auto got = entries(
      "key\\ with\\=odd\\:chars = v\r\n"
      "multi = first, \\\r\n"
      "        second, \\\n"
      "        third\r"
      "tab=a\\tb\\nc\\\\d\n"
      "unicode=caf\\u00e9 \\uD83D\\uDE00\n"
      "even=ends with two \\\\\n"
      "next=1\n"
      "# a comment ending in a backslash does not continue \\\n"
      "after=comment");
  EXPECT_EQ(got.at("key with=odd:chars"), "v");
  EXPECT_EQ(got.at("multi"), "first, second, third");
  EXPECT_EQ(got.at("tab"), "a\tb\nc\\d");
  EXPECT_EQ(got.at("unicode"), "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(got.at("even"), "ends with two \\");
  EXPECT_EQ(got.at("next"), "1");
  EXPECT_EQ(got.at("after"), "comment");
}

TEST(JavaProperties, BytesAreLatin1AndTheLastOfAKeyWins) {
  // Java reads a properties stream as ISO-8859-1: the byte 0xE9 is U+00E9, sent as UTF-8.
  const auto got = entries("password=caf\xE9\npassword=second\n");
  EXPECT_EQ(got.at("password"), "second");
  EXPECT_EQ(entries("p=caf\xE9").at("p"), "caf\xC3\xA9");
}

TEST(JavaProperties, AMalformedUnicodeEscapeNamesTheLineNotTheValue) {
  const std::string message = refusal([] { parse_java_properties("a=1\n\nsecret=abc\\u12G4xyz\n"); });
  EXPECT_NE(message.find("line 3"), std::string::npos) << message;
  EXPECT_EQ(message.find("abc"), std::string::npos) << message;
}

TEST(JaasConfig, ReadsOneModuleWithQuotedAndBareValues) {
  const auto entry = parse_jaas_config(
      "org.apache.kafka.common.security.scram.ScramLoginModule required\n"
      "  username=\"alice\" /* a comment */ password='p\\\"w; = \\\\x' // another\n"
      "  mode=bare_word ;");
  EXPECT_EQ(entry.login_module, "org.apache.kafka.common.security.scram.ScramLoginModule");
  EXPECT_EQ(entry.flag, "required");
  EXPECT_EQ(entry.options.at("username"), "alice");
  EXPECT_EQ(entry.options.at("password"), "p\"w; = \\x");
  EXPECT_EQ(entry.options.at("mode"), "bare_word");
}

TEST(JaasConfig, RefusesAsKafkaDoesWithoutEchoingValues) {
  EXPECT_NE(refusal([] {
              parse_jaas_config("a.B required username=\"u\" password=\"hunter2\"");
            }).find("not terminated by semi-colon"),
            std::string::npos);
  const std::string no_value = refusal([] { parse_jaas_config("a.B required username=\"u\" password=;"); });
  EXPECT_NE(no_value.find("value not specified for key 'password'"), std::string::npos) << no_value;
  EXPECT_NE(refusal([] { parse_jaas_config("a.B mandatory x=\"1\";"); }).find("control flag"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_jaas_config("a.B required; c.D required;"); }).find("2 login modules"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_jaas_config("  "); }).find("0 login modules"), std::string::npos);
  // A path unquoted: '/' starts a comment, as in Java, so the value is missing.
  EXPECT_NE(
      refusal([] { parse_jaas_config("a.B required keyTab=/etc/k.keytab;"); }).find("value not specified"),
      std::string::npos);
  EXPECT_EQ(refusal([] { parse_jaas_config("a.B required password=\"hunter2\" x"); }).find("hunter2"),
            std::string::npos);
}

TEST(JaasConfig, AWordOfBrokenQuotingIsNamedByWhereItStartsNotQuoted) {
  // A quote inside the password: its rest reads as an option name with no value.
  const std::string fragment =
      refusal([] { parse_jaas_config("a.B required username=\"u\" password=\"Sec\"ret4Word\";"); });
  EXPECT_EQ(fragment.find("ret4Word"), std::string::npos) << fragment;
  EXPECT_NE(fragment.find("value not specified for key at character 41"), std::string::npos) << fragment;
  // A control flag is quoted when it misspells one, and only then.
  const std::string typo = refusal([] { parse_jaas_config("a.B requried x=\"1\";"); });
  EXPECT_NE(typo.find("control flag 'requried'"), std::string::npos) << typo;
  const std::string other = refusal([] { parse_jaas_config("a.B Hunter2Secret x=\"1\";"); });
  EXPECT_EQ(other.find("Hunter2Secret"), std::string::npos) << other;
  EXPECT_NE(other.find("control flag at character 5"), std::string::npos) << other;
}

TEST(JavaClientConfig, ScramOverTlsWithAPemTrustStore) {
  const auto config = java_client_config(
      "security.protocol=SASL_SSL\n"
      "sasl.mechanism=SCRAM-SHA-512\n"
      "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
      "    username=\"alice\" password=\"alice-secret\";\n"
      "ssl.truststore.type=PEM\n"
      "ssl.truststore.location=/etc/kafka/ca.pem\n"
      "ssl.endpoint.identification.algorithm=\n"
      "client.id=billing-tools\n");
  const kafka::KafkaProperties expected{{"security.protocol", "sasl_ssl"},
                                        {"sasl.mechanisms", "SCRAM-SHA-512"},
                                        {"sasl.username", "alice"},
                                        {"sasl.password", "alice-secret"},
                                        {"ssl.ca.location", "/etc/kafka/ca.pem"},
                                        {"ssl.endpoint.identification.algorithm", "none"},
                                        {"client.id", "billing-tools"}};
  EXPECT_EQ(config.properties, expected);
  EXPECT_TRUE(config.notes.empty());
}

TEST(JavaClientConfig, PlainAndLibrdkafkaNamesAsTheyAre) {
  const auto config = java_client_config(
      "security.protocol=sasl_ssl\n"
      "sasl.mechanism=PLAIN\n"
      "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=bob "
      "password=\"b0b\";\n"
      "ssl.ca.location=/ca.pem\n"
      "socket.keepalive.enable=true\n");
  EXPECT_EQ(config.properties.at("sasl.username"), "bob");
  EXPECT_EQ(config.properties.at("sasl.password"), "b0b");
  EXPECT_EQ(config.properties.at("ssl.ca.location"), "/ca.pem");
  EXPECT_EQ(config.properties.at("socket.keepalive.enable"), "true");
}

TEST(JavaClientConfig, OauthbearerUnsecuredTokens) {
  const auto config = java_client_config(
      "security.protocol=SASL_SSL\n"
      "sasl.mechanism=OAUTHBEARER\n"
      "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
      "unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginListClaim_scope=\",read,write\" "
      "unsecuredLoginLifetimeSeconds=\"600\" unsecuredLoginExtension_traceId=\"abc\";\n");
  EXPECT_EQ(config.properties.at("sasl.mechanisms"), "OAUTHBEARER");
  EXPECT_EQ(config.properties.at("enable.sasl.oauthbearer.unsecure.jwt"), "true");
  EXPECT_EQ(config.properties.at("sasl.oauthbearer.config"),
            "principal=alice extension_traceId=abc lifeSeconds=600 scope=read,write");
}

TEST(JavaClientConfig, OauthbearerOidcClientCredentials) {
  const auto config = java_client_config(
      "security.protocol=SASL_SSL\n"
      "sasl.mechanism=OAUTHBEARER\n"
      "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer."
      "OAuthBearerLoginCallbackHandler\n"
      "sasl.oauthbearer.token.endpoint.url=https://idp.example/oauth2/token\n"
      "sasl.oauthbearer.scope.claim.name=scp\n"
      "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
      "clientId=\"tools\" clientSecret=\"s3cr3t\" scope=\"kafka\" extension_logicalCluster=\"lkc-1\";\n");
  EXPECT_EQ(config.properties.at("sasl.oauthbearer.method"), "oidc");
  EXPECT_EQ(config.properties.at("sasl.oauthbearer.client.id"), "tools");
  EXPECT_EQ(config.properties.at("sasl.oauthbearer.client.secret"), "s3cr3t");
  EXPECT_EQ(config.properties.at("sasl.oauthbearer.scope"), "kafka");
  EXPECT_EQ(config.properties.at("sasl.oauthbearer.extensions"), "logicalCluster=lkc-1");
  EXPECT_EQ(config.properties.at("sasl.oauthbearer.token.endpoint.url"), "https://idp.example/oauth2/token");
  ASSERT_EQ(config.notes.size(), 1u);
  EXPECT_NE(config.notes[0].find("sasl.oauthbearer.scope.claim.name"), std::string::npos);
}

TEST(JavaClientConfig, KerberosKeytabAndTicketCache) {
  const auto keytab = java_client_config(
      "security.protocol=SASL_PLAINTEXT\n"
      "sasl.kerberos.service.name=kafka\n"
      "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
      "keyTab=\"/etc/security/tools.keytab\" principal=\"tools@EXAMPLE.COM\";\n");
  EXPECT_EQ(keytab.properties.at("sasl.kerberos.keytab"), "/etc/security/tools.keytab");
  EXPECT_EQ(keytab.properties.at("sasl.kerberos.principal"), "tools@EXAMPLE.COM");
  EXPECT_EQ(keytab.properties.at("sasl.kerberos.service.name"), "kafka");
  const auto cache = java_client_config(
      "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true "
      "serviceName=\"kafka-prod\";\n");
  EXPECT_EQ(cache.properties.at("sasl.kerberos.min.time.before.relogin"), "0");
  EXPECT_EQ(cache.properties.at("sasl.kerberos.service.name"), "kafka-prod");
}

TEST(JavaClientConfig, Pkcs12AndPemKeyStores) {
  const auto pkcs12 = java_client_config(
      "security.protocol=SSL\nssl.keystore.type=PKCS12\nssl.keystore.location=/c.p12\n"
      "ssl.keystore.password=pw\nssl.key.password=pw\nssl.truststore.type=PEM\nssl.truststore.location=/"
      "ca.pem\n");
  EXPECT_EQ(pkcs12.properties.at("ssl.keystore.location"), "/c.p12");
  EXPECT_EQ(pkcs12.properties.at("ssl.keystore.password"), "pw");
  const auto pem = java_client_config(
      "security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location=/"
      "client.pem\nssl.key.password=kp\n");
  EXPECT_EQ(pem.properties.at("ssl.certificate.location"), "/client.pem");
  EXPECT_EQ(pem.properties.at("ssl.key.location"), "/client.pem");
  EXPECT_EQ(pem.properties.at("ssl.key.password"), "kp");
  const auto inline_pem = java_client_config(
      "ssl.keystore.type=PEM\nssl.keystore.key=-----BEGIN PRIVATE KEY-----\\nX\\n-----END PRIVATE KEY-----\n"
      "ssl.keystore.certificate.chain=-----BEGIN CERTIFICATE-----\\nY\\n-----END CERTIFICATE-----\n"
      "ssl.truststore.type=PEM\nssl.truststore.certificates=-----BEGIN CERTIFICATE-----\\nZ\\n"
      "-----END CERTIFICATE-----\n");
  EXPECT_EQ(inline_pem.properties.at("ssl.key.pem"),
            "-----BEGIN PRIVATE KEY-----\nX\n-----END PRIVATE KEY-----");
  EXPECT_NE(inline_pem.properties.at("ssl.certificate.pem").find("\nY\n"), std::string::npos);
  EXPECT_NE(inline_pem.properties.at("ssl.ca.pem").find("\nZ\n"), std::string::npos);
}

TEST(JavaClientConfig, RefusesWhatCannotBeHonouredNamingTheKey) {
  const auto refused = [](const std::string& text, const std::string& key, const std::string& words) {
    const std::string message = refusal([&] { java_client_config(text); });
    EXPECT_EQ(message.rfind(key + ":", 0), 0u) << text << " -> " << message;
    EXPECT_NE(message.find(words), std::string::npos) << text << " -> " << message;
  };
  // Java's default trust store type is JKS.
  refused("ssl.truststore.location=/ts.jks\n", "ssl.truststore.location", "keytool -importkeystore");
  refused("ssl.truststore.type=JKS\nssl.truststore.location=/ts.jks\n", "ssl.truststore.location",
          "openssl pkcs12");
  refused("ssl.truststore.type=PKCS12\nssl.truststore.location=/ts.p12\n", "ssl.truststore.location",
          "-nokeys");
  refused("ssl.keystore.location=/ks.jks\nssl.keystore.password=x\n", "ssl.keystore.location", "PKCS12");
  refused(
      "ssl.keystore.type=PKCS12\nssl.keystore.location=/k.p12\nssl.keystore.password=a\nssl.key.password=b\n",
      "ssl.key.password", "one password");
  refused("sasl.mechanism=AWS_MSK_IAM\n", "sasl.mechanism", "not a mechanism librdkafka has");
  refused("security.protocol=SASL_TLS\n", "security.protocol", "not one of");
  refused("sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required;\n", "sasl.jaas.config",
          "the login module 'IAMLoginModule' has no librdkafka counterpart");
  refused("sasl.jaas.config=org.Plain1LoginModul required;\n", "sasl.jaas.config",
          "the login module 'Plain1LoginModul' has no librdkafka counterpart");
  // A module named like none of them can be a piece of a secret: named by its place.
  refused("sasl.jaas.config=com.example.Hunter2Secret required;\n", "sasl.jaas.config",
          "the login module at the start of the value has no librdkafka counterpart");
  refused(
      "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\";\n",
      "sasl.jaas.config", "needs the options username and password");
  refused("sasl.client.callback.handler.class=com.example.Handler\n", "sasl.client.callback.handler.class",
          "Java class");
  refused("sasl.login.callback.handler.class=com.example.Login\n", "sasl.login.callback.handler.class",
          "Java class");
  refused("ssl.enabled.protocols=TLSv1.2,TLSv1.1\n", "ssl.enabled.protocols", "TLSv1.1");
  refused("ssl.cipher.suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n", "ssl.cipher.suites", "OpenSSL");
  refused("ssl.endpoint.identification.algorithm=ldap\n", "ssl.endpoint.identification.algorithm", "neither");
  refused("sasl.oauthbearer.token.endpoint.url=file:///tmp/token\n", "sasl.oauthbearer.token.endpoint.url",
          "file");
  refused("no.such.property=1\n", "no.such.property", "neither a Java client property");
  refused("session.timeout.ms=soon\n", "session.timeout.ms", "");
  refused("sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;\n",
          "sasl.jaas.config", "unsecuredLoginStringClaim_sub");
}

TEST(JavaClientConfig, NoSecretInAnyRefusal) {
  for (const std::string text : {
           "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
           "username=\"u\" password=\"hunter2\"\n",
           "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule bogus "
           "password=\"hunter2\";\n",
           "sasl.jaas.config=x.Y required password=\"hunter2\";\n",
           "sasl.password=hunter2\nssl.key.password=hunter2\nno.such=1\n",
           "ssl.keystore.password=hunter2\nssl.keystore.type=PKCS12\nssl.keystore.location=/k\n"
           "ssl.key.password=other\n",
           "sasl.oauthbearer.client.secret=hunter2\\u00\n",
       }) {
    const std::string message = refusal([&] { java_client_config(text); });
    EXPECT_FALSE(message.empty()) << text;
    EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
  }
}

TEST(JavaClientConfig, JavaOnlySettingsAreLeftOutWithANote) {
  const auto config = java_client_config(
      "ssl.protocol=TLSv1.3\nssl.enabled.protocols=TLSv1.2,TLSv1.3\nclient.dns.lookup=use_all_dns_ips\n"
      "default.api.timeout.ms=60000\nssl.keymanager.algorithm=SunX509\n");
  EXPECT_TRUE(config.properties.empty());
  EXPECT_EQ(config.notes.size(), 5u);
}

TEST(JavaClientConfig, AFileThatCannotBeReadIsNotFoundAndNamed) {
  try {
    kafka::load_java_client_config("/nonexistent/client.properties");
    FAIL() << "no error";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::NotFound);
    EXPECT_NE(std::string(error.what()).find("/nonexistent/client.properties"), std::string::npos);
  }
  const auto path = std::filesystem::temp_directory_path() / "java_client_config_test.properties";
  std::ofstream(path) << "no.such.property=1\n";
  const std::string message = refusal([&] { kafka::load_java_client_config(path); });
  EXPECT_EQ(message.rfind(path.string() + ": no.such.property:", 0), 0u) << message;
  std::filesystem::remove(path);
}

}  // namespace
