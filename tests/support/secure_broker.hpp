#pragma once
// The secured broker of scripts/kafka/broker.sh start --secure (KAFKA_SECURE_DIR): SASL_SSL with
// SCRAM-SHA-256/512 and PLAIN, an OAUTHBEARER listener (unsecured JWTs), a listener whose
// certificate names another host, TLS from a CA of its own, the StandardAuthorizer with
// allow.everyone.if.no.acl.found=false. Users admin (super user), alice and bob, each with a Java
// client properties file per mechanism in DIR/clients, as an operator hands them to Kafka's
// tools, and users a test creates; every password of the run in DIR/clients/secrets.txt.

#include <librdkafka/rdkafka.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "processor/kafka/java_client_config.hpp"
#include "processor/kafka/kafka_properties.hpp"

namespace processor::testing {

class SecureBroker {
 public:
  // The broker of KAFKA_SECURE_DIR, or nullopt when none was started.
  static std::optional<SecureBroker> from_env() {
    const char* dir = std::getenv("KAFKA_SECURE_DIR");
    if (dir == nullptr || *dir == '\0') return std::nullopt;
    SecureBroker broker;
    broker.dir_ = dir;
    std::ifstream env(broker.dir_ + "/broker.env");
    for (std::string line; std::getline(env, line);) {
      const auto equals = line.find('=');
      if (equals == std::string::npos) continue;
      const std::string key = line.substr(0, equals);
      std::string value = line.substr(equals + 1);
      if (key == "KAFKA_SASL_SSL_BOOTSTRAP") broker.sasl_ssl_ = value;
      if (key == "KAFKA_OAUTH_BOOTSTRAP") broker.oauth_ = value;
      if (key == "KAFKA_MISMATCH_BOOTSTRAP") broker.mismatch_ = value;
      if (key == "KAFKA_CA") broker.ca_ = value;
    }
    if (broker.sasl_ssl_.empty()) throw std::runtime_error("no KAFKA_SASL_SSL_BOOTSTRAP in " + broker.dir_);
    return broker;
  }

  // "scram-sha-256", "scram-sha-512", "plain", "oauthbearer".
  static const std::vector<std::string>& mechanisms() {
    static const std::vector<std::string> all{"scram-sha-256", "scram-sha-512", "plain", "oauthbearer"};
    return all;
  }

  const std::string& dir() const { return dir_; }
  const std::string& ca() const { return ca_; }
  const std::string& mismatch_bootstrap() const { return mismatch_; }
  // The listener a mechanism's clients connect to.
  const std::string& bootstrap(const std::string& mechanism) const {
    return mechanism == "oauthbearer" ? oauth_ : sasl_ssl_;
  }
  // The Java client properties file of `user` for `mechanism`.
  std::string client_file(const std::string& user, const std::string& mechanism) const {
    return dir_ + "/clients/" + user + "-" + mechanism + ".properties";
  }
  // The same as librdkafka properties (the library's own translation), with bootstrap.servers.
  kafka::KafkaProperties properties(const std::string& user, const std::string& mechanism) const {
    auto properties = kafka::load_java_client_config(client_file(user, mechanism)).properties;
    properties["bootstrap.servers"] = bootstrap(mechanism);
    return properties;
  }
  // Every password of this run.
  std::vector<std::string> secrets() const {
    std::vector<std::string> all;
    std::ifstream in(dir_ + "/clients/secrets.txt");
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) all.push_back(line);
    }
    return all;
  }

  // alice may do anything with groups, topics and transactional ids; bob nothing until a test
  // grants it.
  void grant_alice_everything() const {
    for (const auto type :
         {RD_KAFKA_RESOURCE_GROUP, RD_KAFKA_RESOURCE_TOPIC, RD_KAFKA_RESOURCE_TRANSACTIONAL_ID}) {
      grant("User:alice", type, "*", RD_KAFKA_ACL_OPERATION_ALL);
    }
  }

  // Grants `principal` ("User:alice") `operation` on a resource, as the super user (CreateAcls).
  // A literal resource name, or "*" for all of that type.
  void grant(const std::string& principal, rd_kafka_ResourceType_t type, const std::string& name,
             rd_kafka_AclOperation_t operation,
             rd_kafka_ResourcePatternType_t pattern = RD_KAFKA_RESOURCE_PATTERN_LITERAL) const {
    char error[512];
    rd_kafka_AclBinding_t* binding =
        rd_kafka_AclBinding_new(type, name.c_str(), pattern, principal.c_str(), "*", operation,
                                RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW, error, sizeof error);
    if (binding == nullptr) throw std::runtime_error(error);
    as_admin(
        "granting " + principal,
        [&](rd_kafka_t* rk, rd_kafka_queue_t* queue) {
          rd_kafka_CreateAcls(rk, &binding, 1, nullptr, queue);
        },
        [](rd_kafka_event_t* event) -> std::string {
          std::size_t count = 0;
          const rd_kafka_acl_result_t** results =
              rd_kafka_CreateAcls_result_acls(rd_kafka_event_CreateAcls_result(event), &count);
          for (std::size_t i = 0; i < count; ++i) {
            if (const rd_kafka_error_t* e = rd_kafka_acl_result_error(results[i]))
              return rd_kafka_error_string(e);
          }
          return {};
        });
    rd_kafka_AclBinding_destroy(binding);
  }

  // A SCRAM-SHA-256 user of the test's own, with no ACL at all (bob collects the grants of every
  // test that ran before on this broker); its librdkafka properties. Its password joins secrets().
  kafka::KafkaProperties new_user(const std::string& name) const {
    const std::string password = "Pw-" + name + "-" + std::to_string(std::random_device{}());
    const std::string salt = "salt-of-" + name;
    rd_kafka_UserScramCredentialAlteration_t* upsert = rd_kafka_UserScramCredentialUpsertion_new(
        name.c_str(), RD_KAFKA_SCRAM_MECHANISM_SHA_256, 4096,
        reinterpret_cast<const unsigned char*>(password.data()), password.size(),
        reinterpret_cast<const unsigned char*>(salt.data()), salt.size());
    as_admin(
        "creating user " + name,
        [&](rd_kafka_t* rk, rd_kafka_queue_t* queue) {
          rd_kafka_AlterUserScramCredentials(rk, &upsert, 1, nullptr, queue);
        },
        [](rd_kafka_event_t* event) -> std::string {
          std::size_t count = 0;
          const rd_kafka_AlterUserScramCredentials_result_response_t** responses =
              rd_kafka_AlterUserScramCredentials_result_responses(
                  rd_kafka_event_AlterUserScramCredentials_result(event), &count);
          for (std::size_t i = 0; i < count; ++i) {
            const rd_kafka_error_t* e =
                rd_kafka_AlterUserScramCredentials_result_response_error(responses[i]);
            if (e != nullptr && rd_kafka_error_code(e) != RD_KAFKA_RESP_ERR_NO_ERROR)
              return rd_kafka_error_string(e);
          }
          return {};
        });
    rd_kafka_UserScramCredentialAlteration_destroy(upsert);
    std::ofstream(dir_ + "/clients/secrets.txt", std::ios::app) << password << "\n";
    kafka::KafkaProperties user = properties("bob", "scram-sha-256");
    user["sasl.username"] = name;
    user["sasl.password"] = password;
    return user;
  }

 private:
  // Sends one admin request as the super user (`send` on a client and a queue of its own) and
  // waits for its result; throws with what `failure` reads from the result event.
  void as_admin(const std::string& what, const std::function<void(rd_kafka_t*, rd_kafka_queue_t*)>& send,
                const std::function<std::string(rd_kafka_event_t*)>& failure_of) const {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char error[512];
    for (const auto& [key, value] : properties("admin", "scram-sha-256")) {
      if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        throw std::runtime_error(error);
      }
    }
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (rk == nullptr) throw std::runtime_error(error);
    rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
    send(rk, queue);
    rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30'000);
    std::string failure = event == nullptr ? "the request timed out" : "";
    if (event != nullptr) {
      failure = rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR ? rd_kafka_event_error_string(event)
                                                                          : failure_of(event);
      rd_kafka_event_destroy(event);
    }
    rd_kafka_queue_destroy(queue);
    rd_kafka_destroy(rk);
    if (!failure.empty()) throw std::runtime_error(what + " failed: " + failure);
  }

  std::string dir_;
  std::string sasl_ssl_;
  std::string oauth_;
  std::string mismatch_;
  std::string ca_;
};

}  // namespace processor::testing
