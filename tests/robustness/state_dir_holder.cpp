// The other process of storage_fault_test.cpp's lock tests: it opens a RocksDB state directory
// and holds it.
//
//   state_dir_holder DIR
//
// Opens a RocksDbStateBackend on DIR, puts "owner" = "holder" (not synced: a process crash
// loses nothing), prints "opened" on stdout and then holds the directory until stdin reaches
// end of file, when it exits 0. The parent may instead SIGKILL it. Errors go to stdout as
// "error <message>" and exit 1.

#include <unistd.h>

#include <cstdio>
#include <exception>

#include "processor/state.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: state_dir_holder DIR\n");
    return 2;
  }
  try {
    processor::state::RocksDbStateBackend backend(argv[1]);
    backend.put("owner", "holder");
    std::printf("opened\n");
    std::fflush(stdout);
    char byte = 0;
    while (::read(STDIN_FILENO, &byte, 1) > 0) {
    }
  } catch (const std::exception& error) {
    std::printf("error %s\n", error.what());
    std::fflush(stdout);
    return 1;
  }
  return 0;
}
