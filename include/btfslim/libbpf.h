// Handing our BTF to libbpf, for the jobs libbpf does well: writing C (btf_dump), dedup, building BTF.
#pragma once

#include "btfslim/btf.h"

#include <memory>

struct btf;

namespace btfslim {

struct LibbpfBtfDeleter {
  void operator()(struct btf* b) const;
};
using LibbpfBtfPtr = std::unique_ptr<struct btf, LibbpfBtfDeleter>;

// Throws InputError where `btf` holds what libbpf 1.1.2 misreads although our reader takes it: a FWD
// whose type field is not 0. libbpf walks a FWD's type field as a type id (btf_type_visit_type_ids), so
// its dedup, merge and btf_dump index their arrays with it (fuzz_libbpf found btf__dedup crash on one);
// the kernel refuses such a FWD ("type != 0"). Called on `btf` (and its base) before libbpf sees it.
void check_libbpf_reads(const Btf& btf);

// libbpf's copy of `btf` and, when split, of its base (kept alive with it). Throws InputError when
// libbpf refuses it.
class LibbpfBtf {
 public:
  explicit LibbpfBtf(const Btf& btf);
  struct btf* get() const { return btf_.get(); }

 private:
  LibbpfBtfPtr base_;
  LibbpfBtfPtr btf_;
};

}  // namespace btfslim
