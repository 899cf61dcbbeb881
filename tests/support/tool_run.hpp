#pragma once
// Running a command-line tool (ours or one of Kafka's) through the shell, with its stdout and
// stderr captured apart, for tests that compare two tools' output byte for byte.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "kafka_test_support.hpp"

namespace processor::testing {

struct ToolRun {
  std::string out;
  std::string err;
  int exit_code = -1;  // -1 when killed by a signal
};

inline std::string file_content(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

inline ToolRun run_tool(const std::string& command) {
  const std::string base = ::testing::TempDir() + unique_name("tool-run");
  const int status = std::system((command + " >'" + base + ".out' 2>'" + base + ".err'").c_str());
  ToolRun result{file_content(base + ".out"), file_content(base + ".err"),
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1};
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return result;
}

}  // namespace processor::testing
