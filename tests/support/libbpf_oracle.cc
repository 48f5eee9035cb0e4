#include "libbpf_oracle.h"

#include "fixtures.h"
#include "process.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>

namespace btfslim::test {

BtfPtr parse_btf(const std::string& path, struct btf* base) {
  errno = 0;
  BtfPtr b(btf__parse_split(path.c_str(), base));
  INFO("libbpf's btf__parse_split(" << path << "): " << std::strerror(errno));
  REQUIRE(b != nullptr);
  return b;
}

std::string write_btf(const TempDir& dir, const std::string& name, const std::function<void(struct btf*)>& build) {
  BtfPtr b(btf__new_empty());
  build(b.get());
  const std::string path = dir.file(name);
  write_file(path, raw_bytes(b.get()));
  return path;
}

const LibbpfRelocation& libbpf_relocate(const std::string& object, const std::string& target_btf,
                                        const std::vector<std::string>& only_programs) {
  static std::map<std::tuple<std::string, std::string, std::vector<std::string>>, LibbpfRelocation> cache;
  const auto key = std::make_tuple(object, target_btf, only_programs);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  LibbpfRelocation result = run_libbpf_relocation(object, target_btf, only_programs);
  if (result.available && !result.opened)
    throw std::runtime_error("libbpf cannot open " + object + " (" + std::strerror(result.open_error) + "):\n" +
                             result.log);
  return cache[key] = std::move(result);
}

std::vector<std::string> core_corpus_objects(bool big_endian) {
  std::vector<std::string> out;
  for (const char* name : {"core_fields", "core_bitfields", "core_types", "core_enums", "core_errors"})
    out.push_back(build_data_dir() + "/" + name + (big_endian ? ".bpfeb.o" : ".bpf.o"));
  return out;
}

std::vector<std::string> core_corpus_targets() {
  std::vector<std::string> out;
  for (const char* name : {"moved", "missing", "errors", "moved.clang"})
    out.push_back(build_data_dir() + "/core_target_" + name + ".o");
  return out;
}

std::vector<std::string> trace_objects() {
  std::vector<std::string> out;
  const char* names = std::getenv("BTFSLIM_TEST_TRACE_OBJECTS");
  std::istringstream in(names ? names : "");
  std::string name;
  while (std::getline(in, name, ':'))
    if (!name.empty()) out.push_back(build_data_dir() + "/" + name + ".bpf.o");
  return out;
}

}  // namespace btfslim::test
