// A main() for the fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput() once on every
// file under the directories (or files) given, so that the committed corpus and regressions are
// replayed by ctest with any compiler and under any sanitizer. A contract violation aborts.
//
// Usage: <target>_replay <dir or file>...   Fails when nothing was replayed.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

// Inputs of a directory, sorted, without dot files and READMEs.
std::vector<fs::path> inputs_under(const fs::path& path) {
  if (!fs::is_directory(path)) return {path};
  std::vector<fs::path> inputs;
  for (const auto& entry : fs::recursive_directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.front() != '.' && name.rfind("README", 0) != 0)
      inputs.push_back(entry.path());
  }
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    if (!fs::exists(argv[i])) {
      std::fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      return 2;
    }
    for (const fs::path& input : inputs_under(argv[i])) {
      std::ifstream file(input, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
      if (!file.good() && !file.eof()) {
        std::fprintf(stderr, "replay: cannot read %s\n", input.c_str());
        return 2;
      }
      // Named before running, so that a crash says which input it was.
      std::fprintf(stderr, "replay: %s (%zu bytes)\n", input.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  std::printf("replay: %zu inputs, no contract violation\n", replayed);
  return replayed > 0 ? 0 : 1;
}
