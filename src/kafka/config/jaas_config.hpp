#pragma once
// The text of a sasl.jaas.config property: one JAAS login module entry, as Kafka's JaasConfig
// reads it (java.io.StreamTokenizer: words, "quoted" or 'quoted' values with backslash escapes,
// // and /* */ comments). Internal: java_client_config() is the public entry.

#include <map>
#include <span>
#include <string>
#include <string_view>

namespace processor::kafka::internal {

struct JaasEntry {
  std::string login_module;                    // e.g. org.apache.kafka.common.security.plain.PlainLoginModule
  std::string flag;                            // required, requisite, sufficient or optional (lower case)
  std::map<std::string, std::string> options;  // e.g. username -> alice
};

// The one login module entry of `text` ("<module> <flag> key=value ... ;").
// Throws StateError(InvalidArgument) naming what is wrong, as Kafka's messages do ("JAAS config
// entry not terminated by semi-colon", "Value not specified for key 'password' in JAAS config",
// "JAAS config property contains 2 login modules, should be 1 module"), and never a value: a
// word is quoted only when it is an option name or a misspelt control flag, any other word is
// named by its position (with broken quoting, a word can be a piece of the password).
JaasEntry parse_jaas_config(std::string_view text);

// Whether `word` is one of `names` or at most `max_edits` single-character edits away from one
// (Levenshtein): a refusal quotes a word of the secret text only when it is a name misspelt.
bool close_to_one_of(std::string_view word, std::span<const std::string_view> names, std::size_t max_edits);

}  // namespace processor::kafka::internal
