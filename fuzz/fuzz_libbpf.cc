// Differential: btfslim's reader and dedup against libbpf 1.1.2's, on the same bytes.
//
// Each input is read twice by each side: as standalone BTF (Btf::parse; btf__new) and as split BTF on the
// fixtures' base in the input's byte order (Btf::parse with the base; btf__parse_raw_split of the same
// bytes as a file, libbpf 1.1.2 exporting no btf__new_split). For each reading:
//
// - Both accept: they must see the same types (count, and each type's kind, vlen and name), and dedup
//   must agree: btfslim's (src/dedup/dedup.cc, `btfslim dedup`) writes byte for byte what btf__dedup
//   and btf__raw_data write, or both fail.
// - Only one accepts: the difference must be one of the known ones (differential.h), each with its
//   reason; anything else is a finding. libbpf's reason is its own debug message, caught through
//   libbpf_set_print.
//
// fuzz/README.md lists the known differences; tests/unit/test_libbpf_differences.cc has one input each.
#include "common.h"
#include "differential.h"
#include "fixtures.h"

#include "btfslim/btf.h"
#include "btfslim/dedup.h"
#include "btfslim/error.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace {

using namespace btfslim;

struct Free {
  void operator()(struct btf* b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<struct btf, Free>;

struct Base {
  std::shared_ptr<const Btf> ours;
  BtfPtr theirs;
};
Base g_base[2];  // little-endian, big-endian

std::string g_libbpf_said;  // libbpf's last message
std::uint64_t g_readings_compared = 0, g_dedups_compared = 0;
std::map<std::string_view, std::uint64_t> g_known;  // per known difference (its message): inputs that showed it

int capture(enum libbpf_print_level, const char* format, va_list args) {
  char line[512];
  std::vsnprintf(line, sizeof line, format, args);
  g_libbpf_said = line;
  while (!g_libbpf_said.empty() && g_libbpf_said.back() == '\n') g_libbpf_said.pop_back();
  return 0;
}

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_libbpf: %s\n", what.c_str());
  std::abort();
}

Base make_base(bool big_endian) {
  auto owner = std::make_shared<std::string>(test::split_btf(big_endian).base);
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size());
  Base b;
  b.ours = Btf::parse(big_endian ? "base-be.btf" : "base.btf", owner, bytes);
  b.theirs.reset(btf__new(owner->data(), static_cast<__u32>(owner->size())));
  if (!b.theirs) finding("libbpf cannot read the fixtures' base");
  return b;
}

// The same types, read by both: count, and each one's kind, vlen and name.
void compare_types(const Btf& ours, const struct btf* theirs, const char* how) {
  const std::uint32_t count = btf__type_cnt(theirs);
  if (count != ours.end_id())
    finding(std::string(how) + ": btfslim reads " + std::to_string(ours.end_id()) + " type ids, libbpf " +
            std::to_string(count));
  for (TypeId id = ours.first_id(); id < ours.end_id(); ++id) {
    const TypeView a = ours.type(id);
    // libbpf's records sit where the header says, which need not be a multiple of 4 (a header of 25
    // bytes, say): read a copy, not through the pointer.
    struct btf_type record;
    std::memcpy(&record, btf__type_by_id(theirs, id), sizeof record);
    const struct btf_type* b = &record;
    if (static_cast<unsigned>(a.kind()) != btf_kind(b) || a.vlen() != btf_vlen(b))
      finding(std::string(how) + ": type [" + std::to_string(id) + "] has another kind or vlen in libbpf");
    const char* name = btf__name_by_offset(theirs, b->name_off);
    if (!name || ours.str(a.name_off()) != std::string_view(name))
      finding(std::string(how) + ": type [" + std::to_string(id) + "] has another name in libbpf");
  }
}

// btfslim's dedup of `ours` against btf__dedup of libbpf's own reading (`theirs`, consumed). Ours first:
// where it refuses what libbpf would misread (kDedupRefused), libbpf's dedup is not run, as it would crash.
void compare_dedup(const std::shared_ptr<const Btf>& ours, BtfPtr theirs, struct btf* base, const char* how) {
  std::optional<DedupResult> got;
  std::string refused;
  try {
    got.emplace(dedup({ours}));
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
    refused = e.what();
    if (const auto* d = fuzz::known_difference(fuzz::kDedupRefused, refused)) {
      ++g_known[d->message];
      return;
    }
  }
  g_libbpf_said.clear();
  const int err = btf__dedup(theirs.get(), nullptr);
  if (err != 0) {
    if (got) finding(std::string(how) + ": btfslim dedup succeeds where btf__dedup fails (" + g_libbpf_said + ")");
    return;
  }
  __u32 size = 0;
  const void* data = btf__raw_data(theirs.get(), &size);
  if (!data) finding(std::string(how) + ": btf__raw_data failed after btf__dedup");
  if (!got) {
    // btfslim reads libbpf's output back before it writes it: where libbpf cannot read it either, libbpf
    // wrote what is not BTF, and refusing it is right.
    const fuzz::MemFile out({static_cast<const std::uint8_t*>(data), size});
    const BtfPtr again(base ? btf__parse_raw_split(out.path().c_str(), base) : btf__new(data, size));
    if (!again && refused.find("(deduplicated)") != std::string::npos) {
      ++g_known["dedup output libbpf cannot read back"];
      return;
    }
    finding(std::string(how) + ": btfslim dedup fails where btf__dedup succeeds: " + refused);
  }
  const auto bytes = got->output->raw();
  if (size != bytes.size() || std::memcmp(data, bytes.data(), size) != 0)
    finding(std::string(how) + ": btfslim dedup writes " + std::to_string(bytes.size()) + " bytes, not btf__dedup's " +
            std::to_string(size));
  ++g_dedups_compared;
}

void one_reading(std::span<const std::uint8_t> data, const fuzz::MemFile& file, const Base* base) {
  const char* how = base ? "split" : "standalone";
  auto owner = std::make_shared<std::vector<std::uint8_t>>(data.begin(), data.end());
  std::shared_ptr<const Btf> ours;
  std::string refused;
  try {
    ours = Btf::parse(file.path(), owner, std::span<const std::uint8_t>(*owner), base ? base->ours : nullptr);
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
    refused = e.what();
  }
  g_libbpf_said.clear();
  errno = 0;
  BtfPtr theirs(base ? btf__parse_raw_split(file.path().c_str(), base->theirs.get())
                     : btf__new(data.data(), static_cast<__u32>(data.size())));
  if (ours && theirs) {
    ++g_readings_compared;
    compare_types(*ours, theirs.get(), how);
    compare_dedup(ours, std::move(theirs), base ? base->theirs.get() : nullptr, how);
    return;
  }
  if (!ours && !theirs) return;
  if (!ours) {
    const auto* d = fuzz::known_difference(fuzz::kStricter, refused);
    if (!d) finding(std::string(how) + ": btfslim refuses what libbpf reads: " + refused);
    ++g_known[d->message];
    return;
  }
  const auto* d = fuzz::known_difference(fuzz::kLaxer, g_libbpf_said);
  if (d) ++g_known[d->message];
  if (!d)
    finding(std::string(how) + ": btfslim reads what libbpf refuses (errno " + std::to_string(errno) + "): " +
            (g_libbpf_said.empty() ? "libbpf said nothing" : g_libbpf_said));
}

// At exit (libFuzzer exits when its time is up): what was compared, for bench/fuzz's report.
void report() {
  std::fprintf(stderr, "fuzz_libbpf: compared %llu readings and %llu dedups byte for byte\n",
               static_cast<unsigned long long>(g_readings_compared), static_cast<unsigned long long>(g_dedups_compared));
  for (const auto& [message, n] : g_known)
    std::fprintf(stderr, "fuzz_libbpf: known difference \"%.*s\": %llu inputs\n", static_cast<int>(message.size()),
                 message.data(), static_cast<unsigned long long>(n));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::atexit(report);
  libbpf_set_print(capture);
  g_base[0] = make_base(false);
  g_base[1] = make_base(true);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::MemFile file({data, size});
  const std::span<const std::uint8_t> bytes(data, size);
  one_reading(bytes, file, nullptr);
  // The base in the input's byte order, as fuzz_split picks it.
  const bool big_endian = size >= 2 && data[0] == 0xeb && data[1] == 0x9f;
  one_reading(bytes, file, &g_base[big_endian]);
  return 0;
}
