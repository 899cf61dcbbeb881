#pragma once
// A Prometheus text exposition as Prometheus' own Python parser reads it
// (tests/support/prometheus_parse.py, prometheus_client's text_string_to_metric_families), in a
// map that tests can look samples up in. REQUIRES: the test target defines
// PROCESSOR_TEST_SUPPORT_DIR (the tests/support directory).

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "command_output.hpp"

namespace processor::testing {

// What the parser read: each sample as `name{label="value",...}`, labels sorted by name, mapped
// to its value; each family's type by the parser's family name (a counter's without _total).
struct ParsedExposition {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
};

// Throws std::runtime_error with the parser's complaint when the exposition does not parse.
// Label values must not contain ',' '=' or spaces (the script's output format).
inline ParsedExposition parse_with_prometheus_client(const std::string& exposition) {
  namespace fs = std::filesystem;
  const fs::path file =
      fs::temp_directory_path() / ("processor-exposition-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(file) << exposition;
  const CommandOutput run =
      run_command("python3 " PROCESSOR_TEST_SUPPORT_DIR "/prometheus_parse.py " + file.string() + " 2>&1");
  fs::remove(file);
  if (run.exit_code != 0)
    throw std::runtime_error("prometheus_client refused the exposition:\n" + run.output);
  ParsedExposition parsed;
  std::istringstream lines(run.output);
  std::string line;
  while (std::getline(lines, line)) {
    // "FAMILY <name> <type>" or "SAMPLE <name> <k=v,k=v> <value>" (the labels may be empty).
    const auto first = line.find(' ');
    const auto second = line.find(' ', first + 1);
    const auto last = line.rfind(' ');
    if (line.starts_with("FAMILY ")) {
      parsed.types[line.substr(first + 1, second - first - 1)] = line.substr(second + 1);
      continue;
    }
    std::string key = line.substr(first + 1, second - first - 1) + "{";
    std::istringstream labels(line.substr(second + 1, last - second - 1));
    std::string label;
    bool first_label = true;
    while (std::getline(labels, label, ',')) {
      const auto equals = label.find('=');
      key += (first_label ? "" : ",") + label.substr(0, equals) + "=\"" + label.substr(equals + 1) + "\"";
      first_label = false;
    }
    parsed.samples[key + "}"] = std::stod(line.substr(last + 1));
  }
  return parsed;
}

}  // namespace processor::testing
