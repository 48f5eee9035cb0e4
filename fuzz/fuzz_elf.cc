// ELF: any bytes as a file on disk, opened as `dump` opens its input (load_btf_file: raw BTF, or the
// .BTF section of an ELF through libelf, compressed or not) and as `check` opens an object
// (BpfObject::open: ELF, .BTF, .BTF.ext, the sections and function symbols its records name).
//
// What parses gets a light walk (the raw dump and the file footprint): the deep walk of the model is
// fuzz_raw's job, this target's is the ELF around it.
#include "common.h"

#include "btfslim/core.h"
#include "btfslim/dump.h"
#include "btfslim/error.h"
#include "btfslim/footprint.h"
#include "btfslim/input.h"
#include "btfslim/output.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace btfslim;
  const fuzz::MemFile file({data, size});
  static fuzz::TextSink sink;
  try {
    const auto btf = load_btf_file(file.path(), nullptr);
    dump_raw(*btf, {}, sink.out());
    sink.check("dump");
    (void)measure_file(*btf);
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  try {
    const auto object = BpfObject::open(file.path());
    for (const CoreRelocation& r : object->relocations()) {
      (void)object->access(r);
      (void)object->function_of(r);
    }
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  return 0;
}
