// Opening what the user names: files mapped once, ELF sections found with libelf, the shorthands
// `vmlinux` and bare module names, and the base a split BTF continues.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/compression.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace btfslim {

inline constexpr std::string_view kSysBtfDir = "/sys/kernel/btf";
inline constexpr std::string_view kRunningVmlinux = "/sys/kernel/btf/vmlinux";

// A whole file, mapped read-only (or read once where the file cannot be mapped, e.g. a pipe). A file
// compressed with xz, zstd or gzip is inflated into memory: bytes() are its contents.
class FileBytes {
 public:
  // How long the caller keeps the file: for a while (mapped, its pages given back as they are done
  // with), or briefly (read and dropped, one file after another: a small one is then read whole into a
  // buffer the next one reuses, which costs neither page faults nor unmapping).
  enum class Keep { Long, Briefly };
  // Throws InputError for a missing file, a directory, permission denied, an empty file.
  static std::shared_ptr<const FileBytes> open(const std::string& path, Keep keep = Keep::Long);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  const std::string& path() const { return path_; }
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  // How the file on disk is compressed (None: bytes() are the file).
  Compression compression() const { return compression_; }
  // Reads the pages of `range` (a part of bytes()) in one go, before a pass that touches all of them.
  void prefetch(std::span<const std::uint8_t> range) const;
  // Gives back the memory of the pages wholly inside `range` (a part of bytes() that is read and done
  // with): a mapped file's pages are read again from the page cache if touched later. Only for parts
  // nothing writes to (libelf converts some sections of the other byte order in place: never those).
  void release(std::span<const std::uint8_t> range) const;
  // A pass over a large part reads it a stretch at a time, giving each back behind it; a part smaller
  // than kWorthReleasing is kept whole (its few pages cost less than the calls).
  static constexpr std::size_t kStretch = 256 * 1024;
  static constexpr std::size_t kWorthReleasing = 4 * kStretch;
  // Whether `range` is a part of bytes() (not memory of its own, as a decompressed section is).
  bool holds(std::span<const std::uint8_t> range) const {
    const auto at = reinterpret_cast<std::uintptr_t>(range.data()), begin = reinterpret_cast<std::uintptr_t>(data_);
    return at >= begin && at + range.size() <= begin + size_;
  }

 private:
  FileBytes() = default;
  // Replaces the file's bytes with what they inflate to, where they are a compressed stream.
  void inflate_if_compressed();
  void free_bytes();
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
  bool read_whole_ = false;  // read into the buffer small files share (file.cc)
  Compression compression_ = Compression::None;
};

// The sections of an ELF file that btfslim reads, as spans of the mapped file (zero copy; a
// compressed section is inflated once and owned here).
class ElfFile {
 public:
  static bool has_elf_magic(std::span<const std::uint8_t> bytes);
  // Throws InputError when the file is not a readable ELF.
  explicit ElfFile(std::shared_ptr<const FileBytes> file);
  ~ElfFile();
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  const std::string& path() const { return file_->path(); }
  const FileBytes& file() const { return *file_; }
  // The contents of the named section, or nullopt when there is none.
  std::optional<std::span<const std::uint8_t>> section(std::string_view name) const;
  // The same for each of `names` (the first section of each name), in one walk of the section table.
  std::vector<std::optional<std::span<const std::uint8_t>>> sections_named(std::span<const std::string_view> names) const;
  // A kernel module (.ko): its BTF is split on vmlinux.
  bool is_kernel_module() const;
  // The release a module was built for: the first word of .modinfo's vermagic ("" when none).
  std::string_view module_release() const;
  // Whether the file's data is big-endian (EI_DATA).
  bool big_endian() const;
  // The architecture its header names (e_machine): EM_BPF for a BPF object, EM_X86_64 for a vmlinux.
  std::uint16_t machine() const;
  // A linked image (ET_EXEC, ET_DYN) such as vmlinux: its BTF is whole, never split on a base.
  bool is_linked_image() const;

  // The function symbols (STT_FUNC) of the symbol table, with the name of the section each is in.
  // The names point into the mapped file.
  struct Function {
    std::string_view name;
    std::string_view section;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
  };
  std::vector<Function> functions() const;
  void for_each_function(const std::function<void(const Function&)>& fn) const;  // the same, one at a time

  // Every symbol of the symbol table but the null one, in table order: what a loader reads besides the
  // functions (externs: undefined and global or weak; programs' binding). `section` is "" for an
  // undefined symbol and for one in a special section (absolute, common).
  struct Symbol {
    std::string_view name;
    std::string_view section;
    std::uint64_t value = 0;
    std::uint64_t size = 0;
    std::uint8_t binding = 0;  // STB_LOCAL, STB_GLOBAL, STB_WEAK
    std::uint8_t type = 0;     // STT_NOTYPE, STT_FUNC, ...
    bool undefined = false;    // SHN_UNDEF
    bool executable = false;   // its section is SHF_EXECINSTR
  };
  std::vector<Symbol> symbols() const;
  // The same symbols handed to `fn` one at a time, with no list of them: for a reader that keeps a few.
  void for_each_symbol(const std::function<void(const Symbol&)>& fn) const;
  // What a BPF loader reads besides .BTF: every section, the symbol table and the relocations
  // (SHT_REL) that patch code. Names point into the mapped file; contents are bounds-checked spans.
  struct Section {
    std::string_view name;
    std::uint32_t type = 0;   // SHT_*
    std::uint64_t flags = 0;  // SHF_*
    std::uint32_t info = 0;   // for SHT_REL: the index of the section it patches
    std::uint64_t addr = 0;   // where it is loaded (sh_addr)
    std::uint64_t offset = 0;  // where it is in the file (sh_offset)
    std::span<const std::uint8_t> bytes;  // empty for SHT_NOBITS
  };
  std::vector<Section> sections() const;  // by section index; [0] is the null section
  void sections(std::vector<Section>& into) const;  // the same into `into`'s memory
  // The symbol table as it is, by index (relocations name symbols by index).
  struct TableSymbol {
    std::string_view name;
    std::uint64_t value = 0, size = 0;
    std::uint32_t section = 0;  // SHN_UNDEF (0) for an extern
    std::uint8_t type = 0, bind = 0, visibility = 0;  // STT_*, STB_*, STV_*
  };
  std::vector<TableSymbol> symbol_table() const;  // by symbol index; [0] is the null symbol
  void symbol_table(std::vector<TableSymbol>& into) const;
  struct Relocation {
    std::uint64_t offset = 0;  // into the section it patches
    std::uint32_t symbol = 0;
    std::uint32_t type = 0;
  };
  // The records of SHT_REL section `index` (nothing for another kind of section).
  std::vector<Relocation> relocations(std::uint32_t index) const;
  void relocations(std::uint32_t index, std::vector<Relocation>& into) const;
  // The records (SHT_REL or SHT_RELA) that patch section `name`: where, and which symbol.
  std::vector<Relocation> relocations_of(std::string_view name) const;

 private:
  // Calls fn(index, symbol, name) for every entry of the symbol table, the null symbol first (a name
  // that is no string of the table is null); nothing without a symbol table. elf.cc.
  template <typename Fn>
  void for_each_table_symbol(Fn&& fn) const;
  // How many symbols the symbol table holds (0 without one): what a list of them reserves.
  std::size_t table_symbol_count() const;
  // The section a symbol is defined in: its name (null for none or an invalid one), and whether it is code.
  struct SymbolSection {
    const char* name = nullptr;
    bool executable = false;
  };
  SymbolSection symbol_section(std::uint16_t shndx) const;

  std::shared_ptr<const FileBytes> file_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What the user typed, resolved: a path and whether it names the running kernel's BTF files.
struct ResolvedInput {
  std::string path;
  bool from_sysfs = false;  // /sys/kernel/btf/...: a module there is split on the running vmlinux
};

// "" (no argument): the running kernel's BTF; "vmlinux" when there is no such file here: the same, with
// a note on stderr (once) saying so; a bare name with no such file here that exists under
// /sys/kernel/btf: that module. Anything else is a path. Throws InputError when the running kernel's BTF
// is needed and missing, and, under strict inputs, for each of the three shorthands.
ResolvedInput resolve_input(std::string_view arg);

// --strict-input: every input must be a file named on the command line. In CI, after a kernel build
// that failed to write its vmlinux, `btfslim measure vmlinux` must not quietly measure the host.
void set_strict_inputs(bool strict);
bool strict_inputs();

// Whether `path` is a BPF object as a compiler writes it: an EM_BPF ELF file with a symbol table or a
// .BTF.ext (minimize's BTF-only ELF, made for libbpf's btf_custom_path, has neither). Reads the ELF
// header alone first, so that asking it of a 600 MB vmlinux costs one read of 20 bytes.
bool is_bpf_object_file(const std::string& path);

// Whether `path` holds a whole kernel's BTF, which is never split on a base: a linked ELF image (vmlinux)
// or the running kernel's /sys/kernel/btf/vmlinux.
bool is_whole_kernel_btf(const std::string& path);

struct LoadOptions {
  std::string base{};           // --base: the BTF a split input continues ("" = none, or automatic)
  RecordNames* names = nullptr;  // where given, the input's names (not its base's), collected while indexing
  // Where given, set to the ELF input's .BTF.ext section (empty when it has none), which lives as long
  // as the Btf returned.
  std::span<const std::uint8_t>* ext = nullptr;
};

// Loads the BTF in a raw BTF file or an ELF file's .BTF section, with its base where it is split. A
// .ko with no --base is read on the running vmlinux, and refused when its .modinfo names another
// release; split BTF that does not fit its base is refused (Btf::parse).
std::shared_ptr<const Btf> load_btf(std::string_view arg, const LoadOptions& options = {});

// Loads BTF from a resolved path with an explicit base (nullptr for none); `ext` as in LoadOptions.
std::shared_ptr<const Btf> load_btf_file(const std::string& path, std::shared_ptr<const Btf> base,
                                         std::span<const std::uint8_t>* ext = nullptr);

// The BTF of each kernel module at `paths` (.ko, or compressed), split on `vmlinux`, in order; a module
// built without BTF is passed over. Throws InputError for a file that is not a module, and for a module
// whose BTF does not fit `vmlinux` (a module of another kernel).
std::vector<std::shared_ptr<const Btf>> load_module_btfs(const std::vector<std::string>& paths,
                                                         const std::shared_ptr<const Btf>& vmlinux);

}  // namespace btfslim
