#pragma once
// Internal to the MetricsServer: HTTP basic auth against bcrypt hashes (exporter-toolkit's
// basic_auth_users), verified with libxcrypt's crypt_r.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "processor/detail/mutex.hpp"
#include "processor/detail/thread_annotations.hpp"

namespace processor::monitor::http {

// Whether `hash` has the form of a bcrypt hash: "$2a$", "$2b$" or "$2y$", a two-digit cost from 04
// to 31, '$', then 53 characters of bcrypt's base64 (60 in all).
bool is_bcrypt_hash(std::string_view hash) noexcept;

// Whether `password` hashes to `hash` with bcrypt (crypt_r), the two compared in constant time.
// False when `hash` is not bcrypt. Slow on purpose: tens of milliseconds at cost 10.
bool bcrypt_matches(std::string_view password, const std::string& hash);

// BasicAuth checks credentials against user names -> bcrypt hashes. It remembers the pairs that
// matched, by a SHA-256 of user, password and hash (never the password itself), so that a
// scraper's every request does not cost a bcrypt; a wrong pair costs one each time, and an unknown
// user costs as much as a known one (no timing tells which names exist).
//
// Safe for concurrent use by multiple threads.
class BasicAuth {
 public:
  // Throws StateError(InvalidArgument) naming the user when a name is empty or holds ':' (which
  // basic auth cannot carry), or when its hash is not bcrypt; the message never holds the hash.
  explicit BasicAuth(std::map<std::string, std::string> users);

  // Whether `user` is one of the users and `password` its password.
  bool allows(std::string_view user, std::string_view password);

  // How many matching pairs are remembered.
  std::size_t remembered() const;

  // Remembered pairs are forgotten all at once past this many (a bound on memory, which only a
  // changing set of valid passwords can reach).
  static constexpr std::size_t kMaxRemembered = 1024;

 private:
  using Digest = std::array<std::uint8_t, 32>;

  const std::map<std::string, std::string, std::less<>> users_;
  mutable detail::Mutex mutex_;
  std::set<Digest> matched_ PROCESSOR_GUARDED_BY(mutex_);
};

}  // namespace processor::monitor::http
