#include "lag/web_config.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

#include "monitor/http/basic_auth.hpp"
#include "monitor/http/tls_credentials.hpp"
#include "processor/error.hpp"

namespace processor::offsetctl {

namespace {

constexpr std::string_view kTlsKeys = "cert_file, key_file, min_version, client_auth_type, client_ca_file";
// exporter-toolkit's keys that offsetctl does not implement: refused by name rather than ignored,
// so that a configuration never means less than it says.
const std::set<std::string, std::less<>> kUnsupportedTlsKeys = {"cert",
                                                                "key",
                                                                "client_ca",
                                                                "cipher_suites",
                                                                "curve_preferences",
                                                                "max_version",
                                                                "prefer_server_cipher_suites",
                                                                "client_allowed_sans"};
const std::set<std::string, std::less<>> kUnsupportedTopKeys = {"http_server_config", "rate_limit"};

std::string type_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a string";
    default:
      return "empty";
  }
}

class WebConfigParser {
 public:
  WebConfigParser(const std::filesystem::path& config_dir, const std::string& source)
      : config_dir_(config_dir), source_(source) {}

  WebConfig parse(std::string_view yaml) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(yaml));
    } catch (const YAML::Exception& error) {
      throw StateError(ErrorKind::InvalidArgument, "web config " + source_ + ": not YAML (line " +
                                                       std::to_string(error.mark.line + 1) +
                                                       "): " + error.msg);
    }
    WebConfig config;
    if (root.IsNull()) return config;  // an empty file: plain HTTP, no authentication
    if (!root.IsMap())
      refuse(root, "the file",
             "must be a map of tls_server_config and basic_auth_users, not " + type_of(root));
    for_each_entry(root, "", [&](const std::string& key, const YAML::Node& value) {
      if (key == "tls_server_config") {
        parse_tls(value, config.tls);
      } else if (key == "basic_auth_users") {
        parse_users(value, config.basic_auth_users);
      } else if (kUnsupportedTopKeys.count(key) != 0) {
        refuse(value, key,
               "not supported by offsetctl exporter (supported: tls_server_config, basic_auth_users)");
      } else {
        refuse(value, key, "unknown key (the file's keys are tls_server_config and basic_auth_users)");
      }
    });
    return config;
  }

 private:
  // A value as a refusal quotes it: not when it holds what looks like a bcrypt hash (a user's line
  // gone astray).
  static std::string shown(const std::string& value) {
    return value.find("$2") != std::string::npos ? std::string("the value") : "'" + value + "'";
  }

  [[noreturn]] void refuse(const YAML::Node& at, const std::string& key, const std::string& why) const {
    const std::string line = at.Mark().is_null() ? "" : " (line " + std::to_string(at.Mark().line + 1) + ")";
    // A key that holds what looks like a bcrypt hash (a user's line gone astray) is not quoted.
    const bool hash_like = key.find("$2") != std::string::npos;
    throw StateError(
        ErrorKind::InvalidArgument,
        "web config " + source_ + ": " + (hash_like ? std::string("a key") : key) + line + ": " + why);
  }

  // Calls `visit(key, value)` for each entry of the map `node` at `path`, refusing anything but a
  // map of string keys, each once.
  template <class Visit>
  void for_each_entry(const YAML::Node& node, const std::string& path, Visit visit) const {
    std::set<std::string> seen;
    for (auto entry = node.begin(); entry != node.end(); ++entry) {
      if (!entry->first.IsScalar())
        refuse(entry->first, path.empty() ? "a key" : path, "a key must be a string");
      const std::string key = entry->first.Scalar();
      const std::string named = path.empty() ? key : path + "." + key;
      if (!seen.insert(key).second) refuse(entry->first, named, "given twice");
      visit(key, entry->second);
    }
  }

  // A string value: a scalar, or nothing ("key:" alone) for "".
  std::string string_at(const YAML::Node& value, const std::string& key) const {
    if (value.IsNull()) return {};
    if (!value.IsScalar()) refuse(value, key, "must be a string, not " + type_of(value));
    return value.Scalar();
  }

  // A file path, resolved against the configuration's directory when relative.
  std::string path_at(const YAML::Node& value, const std::string& key) const {
    const std::string path = string_at(value, key);
    if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
    return (config_dir_ / path).lexically_normal().string();
  }

  void parse_tls(const YAML::Node& node, monitor::MetricsServerTlsOptions& tls) const {
    if (node.IsNull()) return;
    if (!node.IsMap())
      refuse(node, "tls_server_config",
             "must be a map (" + std::string(kTlsKeys) + "), not " + type_of(node));
    for_each_entry(node, "tls_server_config", [&](const std::string& key, const YAML::Node& value) {
      const std::string named = "tls_server_config." + key;
      if (key == "cert_file") {
        tls.cert_file = path_at(value, named);
      } else if (key == "key_file") {
        tls.key_file = path_at(value, named);
      } else if (key == "client_ca_file") {
        tls.client_ca_file = path_at(value, named);
      } else if (key == "min_version") {
        tls.min_version = string_at(value, named);
        if (!monitor::http::tls_priorities_for(tls.min_version))
          refuse(value, named,
                 shown(tls.min_version) + " is not one of " + std::string(monitor::http::kTlsVersionNames));
      } else if (key == "client_auth_type") {
        tls.client_auth_type = string_at(value, named);
        if (!monitor::http::client_auth_named(tls.client_auth_type)) {
          refuse(
              value, named,
              shown(tls.client_auth_type) + " is not one of " + std::string(monitor::http::kClientAuthNames));
        }
      } else if (kUnsupportedTlsKeys.count(key) != 0) {
        refuse(value, named,
               "not supported by offsetctl exporter (supported: " + std::string(kTlsKeys) + ")");
      } else {
        refuse(value, named, "unknown key (tls_server_config's are " + std::string(kTlsKeys) + ")");
      }
    });
  }

  void parse_users(const YAML::Node& node, std::map<std::string, std::string>& users) const {
    if (node.IsNull()) return;
    if (!node.IsMap())
      refuse(node, "basic_auth_users", "must be a map of user name to bcrypt hash, not " + type_of(node));
    for_each_entry(node, "basic_auth_users", [&](const std::string& user, const YAML::Node& value) {
      const std::string named = "basic_auth_users." + user;
      if (user.empty()) refuse(value, "basic_auth_users", "a user name is empty");
      if (user.find(':') != std::string::npos)
        refuse(value, named, "a user name cannot hold ':' in basic auth");
      if (!value.IsScalar()) refuse(value, named, "must be the user's bcrypt hash, not " + type_of(value));
      if (!monitor::http::is_bcrypt_hash(value.Scalar())) {
        // The hash itself is never repeated: a log of the refusal must not carry it.
        refuse(value, named, "not a bcrypt hash ($2a$, $2b$ or $2y$, a cost of 04 to 31, 60 characters)");
      }
      users.emplace(user, value.Scalar());
    });
  }

  const std::filesystem::path config_dir_;
  const std::string source_;
};

}  // namespace

WebConfig parse_web_config(std::string_view yaml, const std::filesystem::path& config_dir,
                           const std::string& source) {
  return WebConfigParser(config_dir, source).parse(yaml);
}

WebConfig load_web_config(const std::filesystem::path& file) {
  const auto unreadable = [&file](int error) {
    return StateError(ErrorKind::InvalidArgument,
                      "web config " + file.string() + ": cannot read it (" + std::strerror(error) + ")");
  };
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!in) throw unreadable(errno);
  std::string text;
  char chunk[8192];
  std::size_t read = 0;
  while ((read = std::fread(chunk, 1, sizeof chunk, in.get())) > 0) text.append(chunk, read);
  if (std::ferror(in.get()) != 0) throw unreadable(errno);
  return parse_web_config(text, std::filesystem::absolute(file).parent_path(), file.string());
}

void apply_web_config(const WebConfig& config, monitor::MetricsServerOptions& options) {
  options.tls = config.tls;
  options.basic_auth_users = config.basic_auth_users;
}

}  // namespace processor::offsetctl
