// Split BTF: any bytes as a module's BTF on a fixed base (the base of tests/support/fixtures.cc, built
// with libbpf's btf__add_*), then every reader on what parses, `dump -f c` included.
//
// The base is picked by the input's byte order, so that both orders reach the readers. `dump -f c` of
// split BTF has libbpf read the split part again from its path, so the input is also a memfd whose path
// names the model.
#include "common.h"

#include "fixtures.h"

#include "btfslim/btf.h"
#include "btfslim/error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace {

std::shared_ptr<const btfslim::Btf> g_base[2];  // little-endian, big-endian

std::shared_ptr<const btfslim::Btf> parse_base(bool big_endian) {
  auto owner = std::make_shared<std::string>(btfslim::test::split_btf(big_endian).base);
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size());
  return btfslim::Btf::parse(big_endian ? "base-be.btf" : "base.btf", owner, bytes);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_base[0] = parse_base(false);
  g_base[1] = parse_base(true);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace btfslim;
  // The same test as Btf::parse: 0xeb9f stored big-endian.
  const bool big_endian = size >= 2 && data[0] == 0xeb && data[1] == 0x9f;
  const fuzz::MemFile file({data, size});
  auto owner = std::make_shared<std::vector<std::uint8_t>>(data, data + size);
  try {
    const auto btf = Btf::parse(file.path(), owner, std::span<const std::uint8_t>(*owner), g_base[big_endian]);
    fuzz::walk(*btf, true);
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  return 0;
}
