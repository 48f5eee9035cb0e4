// Reading a BPF object: its local types (.BTF) and the CO-RE relocation records of .BTF.ext.
//
// A BPF object is an EM_BPF ELF file: a kernel module or a host compiler's object may carry .BTF too
// (pahole -J), and is refused as what it is rather than read as an object without relocations.
//
// .BTF.ext is read through BtfExtReader (btf_ext.h), which checks its layout as libbpf's btf_ext__new
// does; here we check what libbpf only finds out at load time: every section name, type id and access
// string exists, and every instruction offset lies on an instruction of that section. func_info and
// line_info are validated and counted; only core_relo records are kept. Either byte order is read in
// place.
#include "btfslim/btf_ext.h"
#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/memory.h"
#include "btfslim/spare.h"

#include <elf.h>

#include <algorithm>
#include <bit>
#include <unordered_map>

namespace btfslim {
namespace {

constexpr std::uint32_t kInsnSize = 8;

// An ELF header's e_machine as people name the architecture.
std::string machine_name(std::uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64 (EM_X86_64)";
    case EM_386: return "i386 (EM_386)";
    case EM_AARCH64: return "arm64 (EM_AARCH64)";
    case EM_ARM: return "arm (EM_ARM)";
    case EM_S390: return "s390 (EM_S390)";
    case EM_PPC64: return "powerpc64 (EM_PPC64)";
    case EM_RISCV: return "riscv (EM_RISCV)";
    case EM_NONE: return "no machine (EM_NONE)";
    default: return fmt::format("machine {}", machine);
  }
}

}  // namespace

std::unique_ptr<const BpfObject> BpfObject::open(const std::string& path, Reading reading) {
  auto file = FileBytes::open(path, reading == Reading::All ? FileBytes::Keep::Long : FileBytes::Keep::Briefly);
  if (!ElfFile::has_elf_magic(file->bytes()))
    fail(path, "not an ELF file: a BPF object (.bpf.o) is an ELF file with .BTF and .BTF.ext sections");
  auto elf = std::make_shared<ElfFile>(file);
  // A module's or a host compiler's ELF may carry .BTF too: its types are no program's to relocate.
  if (elf->is_kernel_module())
    fail(path, "is a kernel module, not a BPF object (.bpf.o): a module's BTF is a kernel's, to name with --btf or "
               "--modules");
  if (const std::uint16_t machine = elf->machine(); machine != EM_BPF)
    fail(path, "is an ELF file for {}, not a BPF object: a BPF object's ELF header says EM_BPF (clang -target bpf)",
         machine_name(machine));
  auto btf_bytes = elf->section(".BTF");
  if (!btf_bytes) fail(path, "ELF file has no .BTF section (compile BPF programs with clang -g)");
  if (btf_bytes->empty()) fail(path, "ELF section .BTF is empty");

  std::unique_ptr<BpfObject> obj(new BpfObject);
  obj->path_ = path;
  obj->elf_ = elf;
  obj->btf_ = Btf::parse(path, elf, *btf_bytes);
  if (auto ext = elf->section(".BTF.ext")) {
    obj->has_ext_ = true;
    obj->read_ext(*ext, *elf, reading);
    file->release(*ext);  // its records are copied: an agent's is megabytes of line info
    if (reading != Reading::Asked) obj->find_shared_insns(obj->number_questions());
  }
  return obj;
}

BpfObject::~BpfObject() { Spare<std::vector<CoreRelocation>>::give(std::move(relocations_)); }

bool BpfObject::number_questions() {
  struct Question {
    std::uint32_t local_type, access_off, kind;
    bool operator==(const Question&) const = default;
  };
  struct Hash {
    std::size_t operator()(const Question& q) const {
      return (std::uint64_t{q.local_type} << 32 | q.access_off) * 0x9e3779b97f4a7c15u ^ q.kind;
    }
  };
  std::unordered_map<Question, std::uint32_t, Hash> numbers;
  numbers.reserve(relocations_.size() / 8);  // an agent asks each question some tens of times
  // Records follow the code, each section's in rising order: only where one is at or before the last
  // of its section can two share an instruction. Each section's last, plus one (0: none yet).
  std::vector<std::uint32_t> after(sections_.size());
  bool rising = true;
  for (CoreRelocation& r : relocations_) {
    const auto [it, fresh] = numbers.try_emplace(Question{r.local_type, r.access_off, r.kind}, question_count_);
    if (fresh) ++question_count_;
    r.question = it->second;
    if (r.section >= after.size() || r.insn_off < after[r.section]) {
      rising = false;
    } else {
      after[r.section] = r.insn_off + 1;
    }
  }
  return rising;
}

void BpfObject::find_shared_insns(bool rising) {
  if (rising) return;
  std::unordered_map<std::uint64_t, std::uint32_t> records;
  for (const CoreRelocation& r : relocations_) ++records[std::uint64_t{r.section} << 32 | r.insn_off];
  for (const auto& [insn, n] : records)
    if (n > 1) shared_insns_.push_back(insn);
  std::sort(shared_insns_.begin(), shared_insns_.end());
}

bool BpfObject::shares_insn(const CoreRelocation& r) const {
  return !shared_insns_.empty() &&
         std::binary_search(shared_insns_.begin(), shared_insns_.end(), std::uint64_t{r.section} << 32 | r.insn_off);
}

void BpfObject::read_root_names(std::span<const TypeId> roots) {
  // The names in first-asked order, with their kinds; then copied into one block of our own.
  std::unordered_map<std::string_view, std::uint32_t> by_name;
  std::vector<RootName> names;
  std::size_t bytes = 0;
  for (const TypeId root : roots) {
    const TypeView t = btf_->type(root);
    if (t.name_off() == 0) continue;
    const std::string_view name = essential_name(btf_->str(t.name_off()));
    if (name.empty()) continue;
    const auto [it, fresh] = by_name.try_emplace(name, static_cast<std::uint32_t>(names.size()));
    if (fresh) {
      names.push_back({name, 0});
      bytes += name.size();
    }
    names[it->second].kinds |= 1u << static_cast<unsigned>(t.kind());
  }
  root_name_bytes_ = std::make_unique<char[]>(std::max<std::size_t>(bytes, 1));
  char* p = root_name_bytes_.get();
  for (RootName& n : names) {
    std::copy(n.name.begin(), n.name.end(), p);
    n.name = {p, n.name.size()};
    p += n.name.size();
  }
  root_names_ = std::move(names);
}

void BpfObject::release_pages() const {
  // libelf converts a file of the other byte order in place (the mapping is private): only a file in
  // the host's order reads back the same.
  release_pages(elf_->file().bytes());
}

void BpfObject::release_pages(std::span<const std::uint8_t> part) const {
  if (elf_->big_endian() != (std::endian::native == std::endian::big)) return;
  elf_->file().release(part);
}

void BpfObject::read_ext(std::span<const std::uint8_t> ext, const ElfFile& elf, Reading reading) {
  const bool keep = reading != Reading::Asked;
  using Subsection = BtfExtReader::Subsection;
  const BtfExtReader reader(*btf_, ext, path_ + ": .BTF.ext");
  const std::string& where = reader.where();
  const ByteOrder order = reader.byte_order();
  // Calls fn(section name offset, record count, first record, record size) for each block.
  auto walk = [&](Subsection s, auto&& fn) {
    reader.for_each_block(s, [&](std::uint32_t at, std::uint32_t name_off, std::uint32_t count,
                                 const std::uint8_t* records, std::uint32_t record_size) {
      if (!btf_->valid_str(name_off) || btf_->str(name_off).empty())
        fail(where, "{} block at byte {} has an invalid section name offset {}", BtfExtReader::name(s), at, name_off);
      fn(name_off, count, records, record_size);
    });
  };

  walk(Subsection::FuncInfo, [&](std::uint32_t, std::uint32_t count, const std::uint8_t*, std::uint32_t) {
    func_info_count_ += count;
  });
  walk(Subsection::LineInfo, [&](std::uint32_t, std::uint32_t count, const std::uint8_t*, std::uint32_t) {
    line_info_count_ += count;
  });
  if (!reader.has(Subsection::CoreRelo)) return;

  // The sections the records point into, in the order first named, with their functions: found in
  // one walk of the section table and one of the symbols (an object may have hundreds of each).
  std::unordered_map<std::string_view, std::uint32_t> named;  // name -> its place in `names`
  std::vector<std::string_view> names;
  walk(Subsection::CoreRelo, [&](std::uint32_t name_off, std::uint32_t, const std::uint8_t*, std::uint32_t) {
    if (named.try_emplace(btf_->str(name_off), static_cast<std::uint32_t>(names.size())).second)
      names.push_back(btf_->str(name_off));
  });
  const auto found = elf.sections_named(names);
  std::vector<std::vector<BpfFunction>> functions(names.size());
  if (keep)
    elf.for_each_function([&](const ElfFile::Function& f) {
      if (const auto it = named.find(f.section); it != named.end()) functions[it->second].push_back({f.name, f.offset, f.size});
    });
  // sections_ is filled in the same order, when a block first names one: a missing section is refused
  // only after the records before it are read, as they would be one section at a time.
  auto section_index = [&](std::string_view name) -> std::uint32_t {
    const std::uint32_t at = named.at(name);
    if (at < sections_.size()) return at;
    if (!found[at]) fail(where, "CO-RE relocations name section '{}', which the object does not have", esc(name));
    ProgramSection s{name, *found[at], std::move(functions[at])};
    std::sort(s.functions.begin(), s.functions.end(),
              [](const BpfFunction& a, const BpfFunction& b) { return a.offset < b.offset; });
    sections_.push_back(std::move(s));
    return at;
  };

  // At most one record per 16 bytes of the subsection (checked against the section's size): one allocation.
  if (keep) {
    relocations_ = Spare<std::vector<CoreRelocation>>::take();  // the last object's memory
    relocations_.reserve(reader.most_records(Subsection::CoreRelo));
    populate_for_write(relocations_.data(), relocations_.capacity() * sizeof(CoreRelocation));
  }
  // The local types candidates are asked for (all but local_type_id's), each once, in first-asked order.
  std::vector<TypeId> roots = Spare<std::vector<TypeId>>::take();
  std::vector<bool> seen = Spare<std::vector<bool>>::take();
  seen.assign(btf_->end_id(), false);
  std::uint32_t checked_access = UINT32_MAX;
  walk(Subsection::CoreRelo, [&](std::uint32_t name_off, std::uint32_t count, const std::uint8_t* rec,
                                  std::uint32_t record_size) {
    const std::uint32_t section = section_index(btf_->str(name_off));
    const ProgramSection& s = sections_[section];
    for (std::uint32_t i = 0; i < count; ++i, rec += record_size) {
      CoreRelocation r;
      r.section = section;
      r.index = i;
      r.insn_off = order.u32(rec);
      r.local_type = order.u32(rec + 4);
      r.access_off = order.u32(rec + 8);
      r.kind = order.u32(rec + 12);
      const auto at = [&] { return fmt::format("CO-RE relocation #{} of section '{}'", i, esc(s.name)); };
      if (r.insn_off % kInsnSize != 0 || std::uint64_t{r.insn_off} + kInsnSize > s.insns.size())
        fail(where, "{}: instruction offset {} is not an instruction of the section ({} bytes)", at(), r.insn_off,
             s.insns.size());
      if (r.local_type != 0 && !btf_->valid_id(r.local_type))
        fail(where, "{}: type id {} is out of range (the object has {} types)", at(), r.local_type,
             btf_->end_id() - 1);
      // An agent's records ask the same few hundred questions: a string checked for the record before is
      // not looked at again (its bytes are anywhere in a large string table: a cache miss each).
      if (r.access_off != checked_access && (!btf_->valid_str(r.access_off) || *btf_->c_str(r.access_off) == '\0'))
        fail(where, "{}: invalid access string offset {}", at(), r.access_off);
      checked_access = r.access_off;
      if (r.local_type != 0 && r.kind != static_cast<std::uint32_t>(RelocKind::TypeIdLocal) && !seen[r.local_type]) {
        seen[r.local_type] = true;
        roots.push_back(r.local_type);
      }
      ++relocation_count_;
      if (keep) relocations_.push_back(r);
    }
  });
  if (reading != Reading::Once) read_root_names(roots);
  Spare<std::vector<TypeId>>::give(std::move(roots));
  Spare<std::vector<bool>>::give(std::move(seen));
}

const BpfFunction* BpfObject::function_of(const CoreRelocation& r) const {
  const auto& fns = sections_[r.section].functions;
  // The last function starting at or before the instruction.
  auto it = std::upper_bound(fns.begin(), fns.end(), std::uint64_t{r.insn_off},
                             [](std::uint64_t off, const BpfFunction& f) { return off < f.offset; });
  if (it == fns.begin()) return nullptr;
  --it;
  return r.insn_off < it->offset + std::max<std::uint64_t>(it->size, kInsnSize) ? &*it : nullptr;
}

}  // namespace btfslim
