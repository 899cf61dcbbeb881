// The MetricsServer's basic auth (src/monitor/http/basic_auth.hpp): bcrypt hashes checked with
// libxcrypt's crypt_r, the pairs that matched remembered, bad users refused at construction.

#include "monitor/http/basic_auth.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "bcrypt_hash.hpp"
#include "state_error_of.hpp"

namespace processor::monitor::http {
namespace {

using processor::testing::bcrypt_hash;

TEST(BcryptCheck, MatchesPublishedHashes) {
  // crypt_blowfish's test vectors (also OpenBSD's and PHP's).
  EXPECT_TRUE(bcrypt_matches("U*U", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"));
  EXPECT_TRUE(bcrypt_matches("U*U*", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK"));
  EXPECT_TRUE(bcrypt_matches("U*U*U", "$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a"));
  EXPECT_FALSE(bcrypt_matches("U*U*", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"));
  EXPECT_FALSE(bcrypt_matches("", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"));
}

TEST(BcryptCheck, AcceptsEachPrefixHtpasswdAndGoWrite) {
  const std::string hash = bcrypt_hash("correct horse");
  ASSERT_EQ(hash.rfind("$2b$04$", 0), 0u) << "libxcrypt has no bcrypt: " << hash;
  // For a password of ASCII characters the three variants hash alike; only the prefix differs.
  for (const char* prefix : {"$2a$", "$2b$", "$2y$"}) {
    const std::string variant = prefix + hash.substr(4);
    EXPECT_TRUE(bcrypt_matches("correct horse", variant)) << variant;
    EXPECT_FALSE(bcrypt_matches("correct horse ", variant)) << variant;
  }
}

TEST(BcryptCheck, RecognisesOnlyBcryptHashes) {
  const std::string hash = bcrypt_hash("x");
  EXPECT_TRUE(is_bcrypt_hash(hash));
  EXPECT_FALSE(is_bcrypt_hash(""));
  EXPECT_FALSE(is_bcrypt_hash(hash.substr(0, 59)));                          // cut short
  EXPECT_FALSE(is_bcrypt_hash("$2x$" + hash.substr(4)));                     // crypt_blowfish's buggy variant
  EXPECT_FALSE(is_bcrypt_hash("$2b$03$" + hash.substr(7)));                  // cost below 4
  EXPECT_FALSE(is_bcrypt_hash("$2b$32$" + hash.substr(7)));                  // cost above 31
  EXPECT_FALSE(is_bcrypt_hash(hash.substr(0, 20) + "!" + hash.substr(21)));  // not bcrypt's base64
  EXPECT_FALSE(is_bcrypt_hash("$1$saltsalt$qjXMvbEw8oaL.CzflDugX/"));        // md5crypt
  EXPECT_FALSE(is_bcrypt_hash("{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M="));         // htpasswd -s
  EXPECT_FALSE(bcrypt_matches("x", "$1$saltsalt$qjXMvbEw8oaL.CzflDugX/"));
}

TEST(BasicAuth, AllowsTheRightPasswordOfAKnownUserOnly) {
  BasicAuth auth({{"alice", bcrypt_hash("wonderland")}, {"bob", bcrypt_hash("builder")}});
  EXPECT_TRUE(auth.allows("alice", "wonderland"));
  EXPECT_TRUE(auth.allows("bob", "builder"));
  EXPECT_FALSE(auth.allows("alice", "builder"));
  EXPECT_FALSE(auth.allows("bob", "wonderland"));
  EXPECT_FALSE(auth.allows("Alice", "wonderland"));
  EXPECT_FALSE(auth.allows("carol", "wonderland"));
  EXPECT_FALSE(auth.allows("", ""));
}

TEST(BasicAuth, UnknownUserIsRefusedWhateverThePassword) {
  BasicAuth auth({{"alice", bcrypt_hash("wonderland")}});
  // An unknown user is checked against a hash of the server's own, so that refusing it takes as
  // long as refusing a known one; that hash's password must not let anyone in.
  EXPECT_FALSE(auth.allows("mallory", "secret"));
  EXPECT_FALSE(auth.allows("mallory", ""));
  EXPECT_EQ(auth.remembered(), 0u);
}

TEST(BasicAuth, RemembersMatchesNotFailures) {
  BasicAuth auth({{"alice", bcrypt_hash("wonderland")}});
  EXPECT_FALSE(auth.allows("alice", "rabbit"));
  EXPECT_EQ(auth.remembered(), 0u);
  EXPECT_TRUE(auth.allows("alice", "wonderland"));
  EXPECT_EQ(auth.remembered(), 1u);
  EXPECT_TRUE(auth.allows("alice", "wonderland"));
  EXPECT_FALSE(auth.allows("alice", "rabbit"));  // a remembered match lets no other password in
  EXPECT_EQ(auth.remembered(), 1u);
}

TEST(BasicAuth, ARememberedMatchCostsNoBcrypt) {
  // Cost 10, as htpasswd and exporter-toolkit's docs make them: about 50 ms each on this machine.
  BasicAuth auth({{"prometheus", bcrypt_hash("scrape", 10)}});
  ASSERT_TRUE(auth.allows("prometheus", "scrape"));
  const auto started = std::chrono::steady_clock::now();
  for (int scrape = 0; scrape < 100; ++scrape) ASSERT_TRUE(auth.allows("prometheus", "scrape"));
  // 100 bcrypts would take 5 s; 100 look-ups take microseconds. A wide margin for loaded machines.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1000));
}

TEST(BasicAuth, BadUsersAreRefusedNamingTheUserNeverTheHash) {
  const std::string md5crypt = "$1$saltsalt$qjXMvbEw8oaL.CzflDugX/";
  const StateError not_bcrypt = processor::testing::error_of([&] { BasicAuth({{"alice", md5crypt}}); });
  EXPECT_EQ(not_bcrypt.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(processor::testing::mentions(not_bcrypt, "'alice'"));
  EXPECT_TRUE(processor::testing::mentions(not_bcrypt, "bcrypt"));
  EXPECT_EQ(std::string(not_bcrypt.what()).find(md5crypt), std::string::npos) << not_bcrypt.what();

  const StateError colon = processor::testing::error_of([] { BasicAuth({{"al:ice", bcrypt_hash("x")}}); });
  EXPECT_EQ(colon.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(processor::testing::mentions(colon, "'al:ice'"));

  const StateError empty = processor::testing::error_of([] { BasicAuth({{"", bcrypt_hash("x")}}); });
  EXPECT_EQ(empty.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(processor::testing::mentions(empty, "empty"));
}

}  // namespace
}  // namespace processor::monitor::http
