// diff of two BTFs: any bytes as two raw BTF files, `btfslim diff OLD NEW` on what parses.
//
// The first four bytes (little-endian, modulo what follows) say where the old file ends and the new one
// begins, so that a mutation of either, or of the boundary, is one input. Both parsed standalone; then
// diff_btf with every part and every printer: the three views as a table (with member details, cut to
// a width and folded past a few rows), CSV, and JSON with both parts.
#include "common.h"

#include "btfslim/diff.h"
#include "btfslim/error.h"
#include "btfslim/output.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {

using namespace btfslim;

std::shared_ptr<const Btf> parsed(const char* name, std::span<const std::uint8_t> bytes) {
  auto owner = std::make_shared<std::vector<std::uint8_t>>(bytes.begin(), bytes.end());
  return Btf::parse(name, owner, std::span<const std::uint8_t>(*owner));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  std::uint32_t cut = 0;
  std::memcpy(&cut, data, 4);
  const std::span<const std::uint8_t> rest(data + 4, size - 4);
  cut %= static_cast<std::uint32_t>(rest.size() + 1);
  try {
    const auto old_btf = parsed("old.btf", rest.first(cut));
    const auto new_btf = parsed("new.btf", rest.subspan(cut));
    static fuzz::TextSink sink;
    const BtfDiff diff = diff_btf(*old_btf, *new_btf);
    for (const DiffView view : {DiffView::Type, DiffView::Kind, DiffView::Member})
      for (const Format format : {Format::Table, Format::Csv}) {
        DiffPrintOptions o;
        o.format = format;
        o.view = view;
        o.details = true;
        o.old_name = "old.btf";
        o.new_name = "new.btf";
        print_diff(diff, o, sink.out());
        o.top = 3;
        o.columns = 60;
        print_diff(diff, o, sink.out());
      }
    DiffPrintOptions json;
    json.format = Format::Json;
    print_diff(diff, json, sink.out());
    sink.check("diff");
    // Each part alone, as a view that needs only one asks for it.
    (void)diff_btf(*old_btf, *new_btf, {true, false});
    (void)diff_btf(*new_btf, *old_btf, {false, true});
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  return 0;
}
