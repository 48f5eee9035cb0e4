// libbpf copies of our BTF.
//
// libbpf 1.1.2 declares btf__new_split() but does not export it, so a split BTF is given to libbpf by
// path (btf__parse_split reads raw files and ELF .BTF sections alike); a base or standalone BTF is
// handed over from memory.
#include "btfslim/libbpf.h"

#include "btfslim/error.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

namespace btfslim {
namespace {

LibbpfBtfPtr from_memory(const Btf& btf) {
  check_libbpf_reads(btf);
  const auto raw = btf.raw();
  struct btf* b = btf__new(raw.data(), static_cast<__u32>(raw.size()));
  if (!b) fail(btf.name(), "libbpf cannot read this BTF: {}", std::strerror(errno));
  return LibbpfBtfPtr(b);
}

}  // namespace

void check_libbpf_reads(const Btf& btf) {
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    if (t.kind() == Kind::Fwd && t.size() != 0)
      fail(btf.name(), "type [{}] FWD holds {} in its type field, which must be 0 (the kernel refuses it, and "
           "libbpf would read it as a type id)", id, t.size());
  }
}

void LibbpfBtfDeleter::operator()(struct btf* b) const { btf__free(b); }

LibbpfBtf::LibbpfBtf(const Btf& btf) {
  if (!btf.is_split()) {
    btf_ = from_memory(btf);
    return;
  }
  base_ = from_memory(*btf.base());
  check_libbpf_reads(btf);
  struct btf* b = btf__parse_split(btf.name().c_str(), base_.get());
  if (!b) fail(btf.name(), "libbpf cannot read this split BTF: {}", std::strerror(errno));
  btf_.reset(b);
}

}  // namespace btfslim
