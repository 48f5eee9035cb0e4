// Raw BTF: any bytes as a standalone BTF file, then every reader on what parses (common.h), `dump -f c`
// included.
//
// The input is parsed from a heap copy of exactly its size, so that under ASan a read one byte past
// what the header promises is a report.
#include "common.h"

#include "btfslim/btf.h"
#include "btfslim/error.h"

#include <cstdint>
#include <memory>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace btfslim;
  auto owner = std::make_shared<std::vector<std::uint8_t>>(data, data + size);
  try {
    const auto btf = Btf::parse("fuzz.btf", owner, std::span<const std::uint8_t>(*owner));
    fuzz::walk(*btf, true);
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  return 0;
}
