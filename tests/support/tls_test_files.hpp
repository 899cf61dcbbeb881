#pragma once
// Certificates and keys for the TLS tests, made at test time by the openssl command line in a
// temporary directory (removed with the object): a CA, a server certificate for 127.0.0.1, ::1 and
// localhost signed by it, a client certificate signed by it, a client certificate of another CA,
// and a key that belongs to no certificate. EC P-256 keys: made and used in milliseconds.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "command_output.hpp"

namespace processor::testing {

class TlsTestFiles {
 public:
  // The files, or nullptr (with `why` set) when openssl is missing or failed.
  static std::unique_ptr<TlsTestFiles> make(std::string& why) {
    std::unique_ptr<TlsTestFiles> files(new TlsTestFiles());
    if (files->dir_.empty()) {
      why = "mkdtemp failed";
      return nullptr;
    }
    if (!have_program("openssl")) {
      why = "openssl is not installed";
      return nullptr;
    }
    const std::string& d = files->dir_;
    std::ofstream(d + "/server.ext") << "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n"
                                     << "extendedKeyUsage=serverAuth\n";
    std::ofstream(d + "/client.ext") << "extendedKeyUsage=clientAuth\n";
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string commands[] = {
        "openssl req -x509" + ec + " -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca",
        "openssl req -x509" + ec + " -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=other-ca",
        signed_by("ca", "server", "localhost", "server.ext"),
        signed_by("ca", "client", "scraper", "client.ext"),
        signed_by("other-ca", "other-client", "intruder", "client.ext"),
        "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out stray.key",
    };
    for (const std::string& command : commands) {
      const CommandOutput made = run_command("(cd '" + d + "' && " + command + ") 2>&1");
      if (made.exit_code != 0) {
        why = command + ": " + made.output;
        return nullptr;
      }
    }
    return files;
  }

  ~TlsTestFiles() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  TlsTestFiles(const TlsTestFiles&) = delete;
  TlsTestFiles& operator=(const TlsTestFiles&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string ca_cert() const { return path("ca.crt"); }
  std::string server_cert() const { return path("server.crt"); }
  std::string server_key() const { return path("server.key"); }
  std::string client_cert() const { return path("client.crt"); }
  std::string client_key() const { return path("client.key"); }
  std::string other_client_cert() const { return path("other-client.crt"); }  // signed by another CA
  std::string other_client_key() const { return path("other-client.key"); }
  std::string stray_key() const { return path("stray.key"); }  // no certificate's key

 private:
  TlsTestFiles() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tls-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
  }

  static std::string signed_by(const std::string& ca, const std::string& name, const std::string& common_name,
                               const std::string& extensions) {
    return "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + name +
           ".key -out " + name + ".csr -subj /CN=" + common_name + " && openssl x509 -req -in " + name +
           ".csr -CA " + ca + ".crt -CAkey " + ca + ".key -CAcreateserial -days 2 -out " + name +
           ".crt -extfile " + extensions;
  }

  std::string dir_;
};

}  // namespace processor::testing
