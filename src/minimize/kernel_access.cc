// What the verifier checks of a profile's programs, for the BTF a kernel carries.
//
// A program's loads through pointers the verifier types by the kernel's BTF are checked against the
// layout that BTF gives (btf_access.h): the members that cover the bytes must be there, and be the same
// members. CO-RE relocations keep the members a program names; a program that casts (a `struct sockaddr
// *` argument read as `struct sockaddr_in`, a `struct sock` as `tcp_sock`) or indexes an array past what
// it names reads others. So the slim BTF keeps, for each load the walk finds, every member the kernel's
// walk takes for it, and checks before writing that each load walks the slim BTF to the same members and
// ends the same way.
//
// The context comes from what the loader resolves: a program's attach target (fentry, fexit, fmod_ret:
// the FUNC; lsm: bpf_lsm_HOOK; iter: bpf_iter_TARGET; tp_btf: btf_trace_TP's prototype without its
// leading `void *`), and for a struct_ops program the member of the kernel's struct_ops type it is
// assigned to (bpf_tcp_ca types a `struct sock *` argument as tcp_sock, as its is_valid_access does).
#include "btfslim/escape.h"
#include "btfslim/input.h"
#include "btfslim/kernel_btf.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace btfslim {
namespace {

bool section_is(std::string_view section, std::string_view name) {
  if (section.starts_with('?')) section.remove_prefix(1);
  return section.substr(0, name.size()) == name &&
         (section.size() == name.size() || section[name.size()] == '/' || section[name.size()] == '.');
}

// An attach target's context: the FUNC's prototype, or a tp_btf typedef's (past its `void *__data`).
ProgramContext attach_context(const Btf& btf, TypeId target, std::string_view section) {
  ProgramContext ctx;
  if (target == 0) return ctx;
  const TypeView t = btf.type(target);
  if (t.kind() == Kind::Func) {
    ctx.proto = skip_modifiers(btf, t.ref());
  } else if (t.kind() == Kind::Typedef) {
    ctx.proto = pointee_function(btf, t.ref());
    ctx.skip = 1;
  }
  if (ctx.proto == 0 || btf.type(ctx.proto).kind() != Kind::FuncProto) return {};
  ctx.kind = ProgramContext::Kind::Args;
  ctx.retval = section_is(section, "fexit") || section_is(section, "fmod_ret") || section_is(section, "lsm") ||
               section_is(section, "lsm_cgroup");
  return ctx;
}

}  // namespace

std::vector<ProgramContext> program_contexts(const BpfObject& object, const BpfCode& code, std::span<const KernelRef> refs,
                                             std::span<const TypeId> ref_ids, const KernelTypeNames& kernel) {
  const Btf& btf = kernel.btf();
  std::vector<ProgramContext> out(code.programs().size());
  for (std::size_t p = 0; p < out.size(); ++p) {
    const BpfCode::Program& prog = code.programs()[p];
    if (section_is(prog.section, "netfilter")) {
      out[p].kind = ProgramContext::Kind::Netfilter;
      out[p].from = kernel.find("nf_hook_state", Kind::Struct);
      out[p].to = kernel.find("sk_buff", Kind::Struct);
      continue;
    }
    for (std::size_t r = 0; r < refs.size(); ++r) {
      const KernelRef& ref = refs[r];
      if (ref.kind == KernelRefKind::Attach && ref.owner == prog.name) {
        out[p] = attach_context(btf, ref_ids[r], prog.section);
        break;
      }
      if (ref.kind != KernelRefKind::StructOps || ref_ids[r] == 0) continue;
      // The struct_ops member this program is assigned to, found by name in the kernel's struct.
      const auto m = std::find(ref.member_programs.begin(), ref.member_programs.end(), prog.name);
      if (m == ref.member_programs.end()) continue;
      const auto local_member = static_cast<unsigned>(m - ref.member_programs.begin());
      const Btf& lb = object.btf();
      const std::string_view member = lb.str(lb.type(ref.local_type).member(local_member).name_off);
      const TypeView kt = btf.type(ref_ids[r]);
      ProgramContext ctx;
      for (unsigned i = 0; i < kt.vlen(); ++i) {
        if (btf.str(kt.member(i).name_off) != member) continue;
        ctx.proto = pointee_function(btf, kt.member(i).type);
        break;
      }
      if (ctx.proto == 0) continue;
      ctx.kind = ProgramContext::Kind::Args;
      if (ref.lookup == "tcp_congestion_ops") {
        ctx.from = kernel.find("sock", Kind::Struct);
        ctx.to = kernel.find("tcp_sock", Kind::Struct);
      }
      out[p] = ctx;
      break;
    }
  }
  return out;
}

AccessKeeps access_keeps(const Btf& kernel, const BtfAccesses& found, std::span<const ProgramContext> contexts) {
  AccessKeeps out;
  for (std::size_t a = 0; a < found.accesses.size(); ++a) {
    const BtfAccess& acc = found.accesses[a];
    if (acc.walk.result == StructAccess::Result::Error) continue;  // fails on the source: nothing to keep
    const auto index = static_cast<std::uint32_t>(a);
    for (const StructStep& s : acc.walk.path) {
      out.members.push_back({s.type, s.member, index});
      // A union of more than one member stays one: the kernel trusts what it reads through a union of one.
      const TypeView u = kernel.type(s.type);
      if (u.kind() == Kind::Union && u.vlen() > 1) out.members.push_back({s.type, s.member == 0 ? 1u : 0u, index});
    }
  }
  for (std::size_t u = 0; u < found.unfollowed.size(); ++u) {
    const UnfollowedAccess& un = found.unfollowed[u];
    const auto index = static_cast<std::uint32_t>(u);
    if (un.type != 0) {
      out.whole.push_back({un.type, index});
      continue;
    }
    // Not even the struct is known: every struct the program was seen reading, and its arguments'.
    std::set<TypeId> types;
    for (const BtfAccess& acc : found.accesses)
      if (acc.program == un.program) types.insert(acc.type);
    const ProgramContext& ctx = contexts[un.program];
    if (ctx.kind == ProgramContext::Kind::Args) {
      const TypeView proto = kernel.type(ctx.proto);
      for (unsigned i = ctx.skip; i < proto.vlen(); ++i)
        if (const TypeId t = pointee_struct(kernel, proto.param(i).type)) types.insert(t);
    }
    for (const TypeId t : types) out.whole.push_back({t, index});
  }
  return out;
}

std::string access_site(const BpfObject& object, const KernelAccesses& accesses, std::uint32_t program,
                        std::uint32_t insn) {
  const std::string_view prog = program < accesses.programs.size() ? accesses.programs[program].name : "";
  for (const BpfCode::Section& s : accesses.sections) {
    if (insn < s.base || insn >= s.base + s.count) continue;
    // The function holding it, as relocation_site() names one: its name and the instruction within it.
    const std::uint64_t byte = std::uint64_t{insn - s.base} * 8;
    for (const ElfFile::Function& f : object.elf().functions())
      if (f.section == s.name && byte >= f.offset && byte < f.offset + std::max<std::uint64_t>(f.size, 8))
        return fmt::format("{} insn #{}{}", esc(f.name), (byte - f.offset) / 8,
                           f.name == prog ? std::string() : fmt::format(" (program {})", esc(prog)));
    return fmt::format("{} {} insn #{}", esc(prog), esc(s.name), insn - s.base);
  }
  return fmt::format("{} insn #{}", esc(prog), insn);
}

std::string verify_accesses(const Btf& source, const Btf& slim, std::span<const TypeId> new_id, const BpfObject& object,
                            const KernelAccesses& accesses) {
  for (const BtfAccess& acc : accesses.found.accesses) {
    if (acc.walk.result == StructAccess::Result::Error) continue;
    const TypeView root = source.type(acc.type);
    auto differ = [&](std::string_view what) {
      return fmt::format("{} {}: a load of {} bytes at offset {} of {} '{}' {}", esc(object.path()),
                         access_site(object, accesses, acc.program, acc.insn), acc.size, acc.off,
                         root.kind() == Kind::Union ? "union" : "struct", esc(source.str(root.name_off())), what);
    };
    const TypeId id = new_id[acc.type];
    if (id == 0) return differ("reads a struct the slim BTF lacks");
    const StructAccess after = walk_struct(slim, id, acc.off, acc.size);
    const std::string before_path = describe_path(source, acc.walk.path);
    if (after.result == StructAccess::Result::Error)
      return differ(fmt::format("reads '{}' on the source and fails on the slim BTF: {}", before_path, after.error));
    const std::string after_path = describe_path(slim, after.path);
    bool same = after.result == acc.walk.result && after.untrusted == acc.walk.untrusted && after_path == before_path &&
                after.path.size() == acc.walk.path.size();
    for (std::size_t i = 0; same && i < after.path.size(); ++i) {
      const StructStep &a = acc.walk.path[i], &b = after.path[i];
      same = source.type(a.type).member_bit_offset(source.type(a.type).member(a.member)) ==
             slim.type(b.type).member_bit_offset(slim.type(b.type).member(b.member));
    }
    if (same && after.result == StructAccess::Result::Pointer)
      same = new_id[acc.walk.pointee] == after.pointee;
    if (!same)
      return differ(fmt::format("reads '{}' on the source and '{}' on the slim BTF", before_path, after_path));
  }
  return "";
}

}  // namespace btfslim
