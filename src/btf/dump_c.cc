// C output through libbpf's btf_dump, framed like `bpftool btf dump ... format c` so that the result
// is a drop-in vmlinux.h (CO-RE programs include it with preserve_access_index on every record).
#include "btfslim/dump.h"
#include "btfslim/error.h"
#include "btfslim/libbpf.h"

#include <bpf/btf.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <utility>

namespace btfslim {
namespace {

// Where btf_dump prints to. libbpf 1.1.2 writes a prototype without parameters as `()` (a function of
// unspecified arguments to C before C23: -Wstrict-prototypes warns); bpftool's libbpf, and libbpf from
// 1.2 on, write `(void)`. btf_dump prints a parameter list's "(" and ")" each as a call of its own, so a
// ")" right after "(" is an empty list, the only place C output has nothing between two parentheses:
// `void` goes between them.
struct CPrinter {
  OutputBuffer& out;
  bool after_open = false;  // the last call printed "(" alone
};

void print_to_buffer(void* ctx, const char* format, va_list args) {
  auto& printer = *static_cast<CPrinter*>(ctx);
  auto& out = printer.out;
  const bool after_open = std::exchange(printer.after_open, std::strcmp(format, "(") == 0);
  if (after_open && std::strcmp(format, ")") == 0) out.write("void");
  char small[256];
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(small, sizeof small, format, copy);
  va_end(copy);
  if (n < 0) return;
  if (static_cast<std::size_t>(n) < sizeof small) {
    out.write(std::string_view(small, static_cast<std::size_t>(n)));
    return;
  }
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  std::vsnprintf(big.data(), big.size(), format, args);
  big.pop_back();
  out.write(big);
}

struct BtfDumpDeleter {
  void operator()(struct btf_dump* d) const { btf_dump__free(d); }
};

}  // namespace

void dump_c(const Btf& btf, const TypeSelection& selection, OutputBuffer& out) {
  std::vector<TypeId> roots;
  if (selection.selects_all()) {
    // As bpftool does: every type, the base's too, so that a split BTF gives a complete header.
    roots.reserve(btf.end_id());
    for (TypeId id = 1; id < btf.end_id(); ++id) roots.push_back(id);
  } else {
    roots = selection.resolve(btf);
  }
  check_c_printable(btf, roots);  // before anything is printed
  const LibbpfBtf lib(btf);
  CPrinter printer{out};
  std::unique_ptr<struct btf_dump, BtfDumpDeleter> d(btf_dump__new(lib.get(), print_to_buffer, &printer, nullptr));
  if (!d) fail(btf.name(), "libbpf cannot set up a C dump: {}", std::strerror(errno));

  out.write(
      "#ifndef __VMLINUX_H__\n"
      "#define __VMLINUX_H__\n"
      "\n"
      "#ifndef BPF_NO_PRESERVE_ACCESS_INDEX\n"
      "#pragma clang attribute push (__attribute__((preserve_access_index)), apply_to = record)\n"
      "#endif\n\n");
  auto dump = [&](TypeId id) {
    if (const int err = btf_dump__dump_type(d.get(), id); err < 0)
      fail(btf.name(), "libbpf cannot write type [{}] as C: {}", id, std::strerror(-err));
  };
  for (const TypeId id : roots) dump(id);
  out.write(
      "#ifndef BPF_NO_PRESERVE_ACCESS_INDEX\n"
      "#pragma clang attribute pop\n"
      "#endif\n"
      "\n"
      "#endif /* __VMLINUX_H__ */\n");
}

}  // namespace btfslim
