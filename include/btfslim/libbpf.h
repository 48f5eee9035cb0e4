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
