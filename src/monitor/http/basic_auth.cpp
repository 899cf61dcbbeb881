#include "monitor/http/basic_auth.hpp"

#include <crypt.h>
#include <gnutls/crypto.h>
#include <string.h>

#include <memory>
#include <utility>

#include "processor/error.hpp"

namespace processor::monitor::http {

namespace {

constexpr std::size_t kBcryptLength = 60;

// A bcrypt hash of a password nobody has, checked for unknown users so that they cost as much as
// known ones; its result is never used.
const std::string kUnknownUserHash = "$2b$10$NAvIgEIwNTPJWv3BajeTY.ta742f6ylyGZaFgC.dj/lFF726yCoLC";

bool is_bcrypt_base64(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '/';
}

// Equal contents, in a time that depends on the lengths only (both are 60 for bcrypt).
bool equal_in_constant_time(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

// Overwrites a copy of a secret before its memory is freed.
void forget(std::string& secret) noexcept { ::explicit_bzero(secret.data(), secret.size()); }

}  // namespace

bool is_bcrypt_hash(std::string_view hash) noexcept {
  if (hash.size() != kBcryptLength) return false;
  const std::string_view prefix = hash.substr(0, 4);
  if (prefix != "$2a$" && prefix != "$2b$" && prefix != "$2y$") return false;
  if (hash[4] < '0' || hash[4] > '9' || hash[5] < '0' || hash[5] > '9' || hash[6] != '$') return false;
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) return false;
  for (const char c : hash.substr(7))
    if (!is_bcrypt_base64(c)) return false;
  return true;
}

bool bcrypt_matches(std::string_view password, const std::string& hash) {
  if (!is_bcrypt_hash(hash)) return false;
  std::string phrase(password);  // crypt_r wants it NUL-terminated
  // crypt_data is 32 KiB: on the heap, zeroed as crypt_r requires before its first use.
  const auto data = std::make_unique<crypt_data>();
  const char* computed = ::crypt_r(phrase.c_str(), hash.c_str(), data.get());
  forget(phrase);
  // On failure crypt_r returns null or a token starting with '*', which no bcrypt hash equals.
  const bool matches = computed != nullptr && equal_in_constant_time(computed, hash);
  ::explicit_bzero(data.get(), sizeof(crypt_data));
  return matches;
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users) : users_(users.begin(), users.end()) {
  for (const auto& [user, hash] : users_) {
    if (user.empty()) {
      throw StateError(ErrorKind::InvalidArgument, "metrics server basic_auth_users: a user name is empty");
    }
    if (user.find(':') != std::string::npos) {
      throw StateError(ErrorKind::InvalidArgument, "metrics server basic_auth_users: user name '" + user +
                                                       "' holds ':', which basic auth cannot carry");
    }
    if (!is_bcrypt_hash(hash)) {
      throw StateError(ErrorKind::InvalidArgument,
                       "metrics server basic_auth_users: the hash of user '" + user +
                           "' is not a bcrypt hash ($2a$, $2b$ or $2y$, a cost of 04 to 31, 60 characters)");
    }
  }
}

bool BasicAuth::allows(std::string_view user, std::string_view password) {
  const auto found = users_.find(user);
  const std::string& hash = found != users_.end() ? found->second : kUnknownUserHash;

  std::string pair;
  pair.reserve(user.size() + password.size() + hash.size() + 2);
  pair.append(user).push_back('\0');
  pair.append(password).push_back('\0');
  pair.append(hash);
  Digest digest{};
  const bool hashed = ::gnutls_hash_fast(GNUTLS_DIG_SHA256, pair.data(), pair.size(), digest.data()) == 0;
  forget(pair);

  if (hashed && found != users_.end()) {
    const detail::MutexLock lock(mutex_);
    if (matched_.count(digest) != 0) return true;
  }
  const bool matches = bcrypt_matches(password, hash) && found != users_.end();
  if (matches && hashed) {
    const detail::MutexLock lock(mutex_);
    if (matched_.size() >= kMaxRemembered) matched_.clear();
    matched_.insert(digest);
  }
  return matches;
}

std::size_t BasicAuth::remembered() const {
  const detail::MutexLock lock(mutex_);
  return matched_.size();
}

}  // namespace processor::monitor::http
