// The BPF instruction set as the code readers here decode it: instruction classes, operations, modes and
// the pseudo sources of calls and 64-bit loads (uapi linux/bpf_common.h, linux/bpf.h), and helper ids
// (uapi linux/bpf.h's ___BPF_FUNC_MAPPER numbering, which never changes once a helper is released).
#pragma once

#include "btfslim/reach.h"

#include <cstdint>

namespace btfslim::isa {

inline constexpr std::uint32_t kInsnSize = 8;
inline constexpr std::uint32_t kNoInsn = BpfCode::kNoInsn;

inline constexpr std::uint8_t kLd = 0x00, kLdx = 0x01, kSt = 0x02, kStx = 0x03, kAlu = 0x04, kJmp = 0x05,
                              kJmp32 = 0x06, kAlu64 = 0x07;
inline constexpr std::uint8_t kSrcX = 0x08;
inline constexpr std::uint8_t kLdImm64 = 0x18, kCall = 0x85;
inline constexpr std::uint8_t kModeMem = 0x60, kModeMemSx = 0x80, kModeAtomic = 0xc0;
inline constexpr std::uint8_t kJa = 0x00, kJeq = 0x10, kJgt = 0x20, kJge = 0x30, kJset = 0x40, kJne = 0x50,
                              kJsgt = 0x60, kJsge = 0x70, kCallOp = 0x80, kExit = 0x90, kJlt = 0xa0, kJle = 0xb0,
                              kJslt = 0xc0, kJsle = 0xd0, kJcond = 0xe0;
inline constexpr std::uint8_t kAdd = 0x00, kSub = 0x10, kMul = 0x20, kDiv = 0x30, kOr = 0x40, kAnd = 0x50,
                              kLsh = 0x60, kRsh = 0x70, kNeg = 0x80, kMod = 0x90, kXor = 0xa0, kMov = 0xb0,
                              kArsh = 0xc0, kEnd = 0xd0;
inline constexpr std::uint8_t kPseudoCall = 1, kPseudoKfuncCall = 2, kPseudoFunc = 4;

// The bytes a load or store of `code` moves (BPF_W, BPF_H, BPF_B, BPF_DW).
inline int access_size(std::uint8_t code) {
  static constexpr int kSizes[] = {4, 2, 1, 8};
  return kSizes[(code >> 3) & 0x03];
}

}  // namespace btfslim::isa
