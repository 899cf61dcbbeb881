#pragma once
// Parses a Prometheus text exposition with Prometheus' own Python parser (prometheus_client's
// text_string_to_metric_families), so that tests judge a scrape as a scraper would.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

namespace processor::testing {

// What the parser read: each sample as `name{label="value",...}` with labels sorted by name,
// mapped to its value; and each family's type by name. Throws std::runtime_error with the
// parser's complaint when the exposition does not parse.
struct ParsedExposition {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
};

inline ParsedExposition parse_with_prometheus_client(const std::string& exposition) {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("processor-exposition-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(file) << exposition;
  const std::string script =
      "import sys\n"
      "from prometheus_client.parser import text_string_to_metric_families\n"
      "for family in text_string_to_metric_families(open(sys.argv[1]).read()):\n"
      "    print('T', family.name, family.type)\n"
      "    for s in family.samples:\n"
      "        labels = ','.join('%s=\"%s\"' % (k, v) for k, v in sorted(s.labels.items()))\n"
      "        print('S', s.name + '{' + labels + '}', repr(float(s.value)))\n";
  const fs::path script_file = file.string() + ".py";
  std::ofstream(script_file) << script;
  const std::string command = "python3 " + script_file.string() + " " + file.string() + " 2>&1";
  std::string output;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    std::size_t read = 0;
    while ((read = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, read);
    const int status = ::pclose(pipe);
    fs::remove(file);
    fs::remove(script_file);
    if (status != 0) throw std::runtime_error("prometheus_client refused the exposition:\n" + output);
  } else {
    throw std::runtime_error("cannot run python3");
  }
  ParsedExposition parsed;
  std::istringstream lines(output);
  std::string kind, name, value;
  while (lines >> kind >> name >> value) {
    if (kind == "T") parsed.types[name] = value;
    else parsed.samples[name] = std::stod(value);
  }
  return parsed;
}

}  // namespace processor::testing
