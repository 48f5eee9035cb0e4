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

namespace btfslim {
namespace {

void print_to_buffer(void* ctx, const char* format, va_list args) {
  auto& out = *static_cast<OutputBuffer*>(ctx);
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
  std::unique_ptr<struct btf_dump, BtfDumpDeleter> d(btf_dump__new(lib.get(), print_to_buffer, &out, nullptr));
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
