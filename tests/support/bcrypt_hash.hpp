#pragma once
// bcrypt hashes for the basic auth tests, made at test time with libxcrypt (link
// PkgConfig::LIBCRYPT), as `htpasswd -nB` makes them.

#include <crypt.h>

#include <memory>
#include <string>

namespace processor::testing {

// A "$2b$" hash of `password` at `cost` (4, the least bcrypt allows, keeps tests fast), with a
// fresh salt; "" when libxcrypt has no bcrypt.
inline std::string bcrypt_hash(const std::string& password, unsigned long cost = 4) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (::crypt_gensalt_rn("$2b$", cost, nullptr, 0, salt, sizeof salt) == nullptr) return {};
  const auto data = std::make_unique<crypt_data>();
  const char* hash = ::crypt_r(password.c_str(), salt, data.get());
  return hash != nullptr && hash[0] == '$' ? std::string(hash) : std::string();
}

}  // namespace processor::testing
