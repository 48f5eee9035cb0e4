// Reading a BPF object: its local types (.BTF) and the CO-RE relocation records of .BTF.ext.
//
// .BTF.ext is a header, then three subsections (func_info, line_info, core_relo), each a record size
// followed by blocks { section name, record count, records }. We check it as libbpf's btf_ext__new does
// (alignment, bounds, record sizes, empty blocks), with 64-bit arithmetic so that no count can wrap, and
// then check what libbpf only finds out at load time: every section name, type id and access string
// exists, and every instruction offset lies on an instruction of that section. func_info and line_info
// are validated and counted; only core_relo records are kept. Either byte order is read in place.
#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/memory.h"

#include <algorithm>
#include <bit>
#include <unordered_map>

namespace btfslim {
namespace {

constexpr std::uint32_t kExtMinHeader = 8;        // magic, version, flags, hdr_len
constexpr std::uint32_t kExtHeaderWithLines = 24;  // + func_info and line_info off/len
constexpr std::uint32_t kExtHeaderWithCore = 32;   // + core_relo off/len
constexpr std::uint32_t kInsnSize = 8;

struct SubsectionSpec {
  const char* name;
  std::uint32_t min_record_size;
};

}  // namespace

std::unique_ptr<const BpfObject> BpfObject::open(const std::string& path) {
  auto file = FileBytes::open(path);
  if (!ElfFile::has_elf_magic(file->bytes()))
    fail(path, "not an ELF file: a BPF object (.bpf.o) is an ELF file with .BTF and .BTF.ext sections");
  auto elf = std::make_shared<ElfFile>(file);
  auto btf_bytes = elf->section(".BTF");
  if (!btf_bytes) fail(path, "ELF file has no .BTF section (compile BPF programs with clang -g)");
  if (btf_bytes->empty()) fail(path, "ELF section .BTF is empty");

  std::unique_ptr<BpfObject> obj(new BpfObject);
  obj->path_ = path;
  obj->elf_ = elf;
  obj->btf_ = Btf::parse(path, elf, *btf_bytes);
  if (auto ext = elf->section(".BTF.ext")) {
    obj->has_ext_ = true;
    obj->read_ext(*ext, *elf);
    file->release(*ext);  // its records are copied: an agent's is megabytes of line info
    obj->read_root_names();
    obj->number_questions();
  }
  return obj;
}

BpfObject::~BpfObject() = default;

void BpfObject::number_questions() {
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
  for (CoreRelocation& r : relocations_) {
    const auto [it, fresh] = numbers.try_emplace(Question{r.local_type, r.access_off, r.kind}, question_count_);
    if (fresh) ++question_count_;
    r.question = it->second;
  }
}

void BpfObject::read_root_names() {
  // The names in first-asked order, with their kinds; then copied into one block of our own.
  // Each local type is looked at once: an agent's thousands of relocations have a few hundred roots.
  std::unordered_map<std::string_view, std::uint32_t> by_name;
  std::vector<RootName> names;
  std::vector<bool> seen(btf_->end_id(), false);
  std::size_t bytes = 0;
  for (const CoreRelocation& r : relocations_) {
    if (r.local_type == 0 || r.kind == static_cast<std::uint32_t>(RelocKind::TypeIdLocal)) continue;
    if (seen[r.local_type]) continue;  // valid: read_ext checked it
    seen[r.local_type] = true;
    const TypeView t = btf_->type(r.local_type);
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

void BpfObject::read_ext(std::span<const std::uint8_t> ext, const ElfFile& elf) {
  const std::string where = path_ + ": .BTF.ext";
  if (ext.size() < kExtMinHeader) fail(where, "truncated: {} bytes, too short for its header", ext.size());
  // The magic is read in the byte order of .BTF; a .BTF.ext of the other order is an error, as in libbpf.
  const ByteOrder order = btf_->byte_order();
  const std::uint16_t magic = order.u16(ext.data());
  if (magic != kBtfMagic) {
    if (magic == __builtin_bswap16(kBtfMagic)) fail(where, "byte order differs from the object's .BTF");
    fail(where, "bad magic {:#06x} (expected {:#06x})", magic, kBtfMagic);
  }
  if (ext[2] != 1) fail(where, "unsupported version {}", ext[2]);
  if (ext[3] != 0) fail(where, "unsupported flags {:#x}", ext[3]);
  const std::uint32_t hdr_len = order.u32(ext.data() + 4);
  if (hdr_len < kExtHeaderWithLines) fail(where, "header length {} is too short (at least {})", hdr_len, kExtHeaderWithLines);
  if (hdr_len > ext.size()) fail(where, "header length {} exceeds the section's {} bytes", hdr_len, ext.size());
  if (hdr_len == ext.size()) fail(where, "has a header and no data");

  // Calls fn(section name offset, record count, first record, record size) for each block of a
  // subsection, after checking the subsection as libbpf does.
  auto walk = [&](std::uint32_t header_field, const SubsectionSpec& spec, auto&& fn) {
    const std::uint32_t off = order.u32(ext.data() + header_field);
    const std::uint32_t len = order.u32(ext.data() + header_field + 4);
    if (len == 0) return;
    if (off % 4 != 0) fail(where, "{} subsection offset {} is not 4-byte aligned", spec.name, off);
    const std::uint64_t start = std::uint64_t{hdr_len} + off;
    if (start + len > ext.size())
      fail(where, "{} subsection [{}, +{}) lies past the end of the section ({} bytes)", spec.name, start, len,
           ext.size());
    const std::uint8_t* p = ext.data() + start;
    std::uint64_t left = len;
    if (left < 4) fail(where, "{} subsection has no record size", spec.name);
    const std::uint32_t record_size = order.u32(p);
    if (record_size < spec.min_record_size || record_size % 4 != 0)
      fail(where, "{} record size {} is invalid (at least {}, a multiple of 4)", spec.name, record_size,
           spec.min_record_size);
    p += 4;
    left -= 4;
    if (left == 0) fail(where, "{} subsection has no records", spec.name);
    while (left != 0) {
      if (left < 8) fail(where, "{} subsection ends inside a block header", spec.name);
      const std::uint32_t name_off = order.u32(p);
      const std::uint32_t count = order.u32(p + 4);
      const std::uint64_t block = 8 + std::uint64_t{count} * record_size;
      if (count == 0 || block > left)
        fail(where, "{} block at byte {} has an invalid record count {}", spec.name, p - ext.data(), count);
      if (!btf_->valid_str(name_off) || btf_->str(name_off).empty())
        fail(where, "{} block at byte {} has an invalid section name offset {}", spec.name, p - ext.data(), name_off);
      fn(name_off, count, p + 8, record_size);
      p += block;
      left -= block;
    }
  };

  walk(8, {"func_info", 8}, [&](std::uint32_t, std::uint32_t count, const std::uint8_t*, std::uint32_t) {
    func_info_count_ += count;
  });
  walk(16, {"line_info", 16}, [&](std::uint32_t, std::uint32_t count, const std::uint8_t*, std::uint32_t) {
    line_info_count_ += count;
  });
  if (hdr_len < kExtHeaderWithCore) return;

  // Sections by name, with their functions: what the records point into.
  const std::vector<ElfFile::Function> functions = elf.functions();
  auto section_index = [&](std::string_view name) -> std::uint32_t {
    for (std::uint32_t i = 0; i < sections_.size(); ++i)
      if (sections_[i].name == name) return i;
    auto insns = elf.section(name);
    if (!insns) fail(where, "CO-RE relocations name section '{}', which the object does not have", esc(name));
    ProgramSection s{name, *insns, {}};
    for (const auto& f : functions)
      if (f.section == name) s.functions.push_back({f.name, f.offset, f.size});
    std::sort(s.functions.begin(), s.functions.end(),
              [](const BpfFunction& a, const BpfFunction& b) { return a.offset < b.offset; });
    sections_.push_back(std::move(s));
    return static_cast<std::uint32_t>(sections_.size() - 1);
  };

  // At most one record per 16 bytes of the subsection (checked against the section's size): one allocation.
  relocations_.reserve(std::min<std::uint64_t>(order.u32(ext.data() + 28), ext.size()) / 16);
  populate_for_write(relocations_.data(), relocations_.capacity() * sizeof(CoreRelocation));
  walk(24, {"core_relo", 16}, [&](std::uint32_t name_off, std::uint32_t count, const std::uint8_t* rec,
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
      if (!btf_->valid_str(r.access_off) || btf_->str(r.access_off).empty())
        fail(where, "{}: invalid access string offset {}", at(), r.access_off);
      relocations_.push_back(r);
    }
  });
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
