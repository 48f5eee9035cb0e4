// Reading a parsed BTF the way the commands do, for the fuzz targets.
#include "common.h"
#include "text.h"

#include "btfslim/dump.h"
#include "btfslim/error.h"
#include "btfslim/footprint.h"
#include "btfslim/input.h"
#include "btfslim/output.h"
#include "btfslim/report.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <gelf.h>
#include <libelf.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string_view>
#include <cstdlib>
#include <vector>
#include <stdexcept>

// UBSan reports are findings: stop at the first one instead of printing it and going on, also when a
// target runs by hand without UBSAN_OPTIONS.
extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }

namespace btfslim::fuzz {

TextSink::TextSink() : fd_(::memfd_create("fuzz-output", MFD_CLOEXEC)), out_(fd_, "fuzz-output") {
  if (fd_ < 0) std::abort();
}

TextSink::~TextSink() { ::close(fd_); }

std::string TextSink::take(const char* what) {
  out_.flush();
  const off_t size = ::lseek(fd_, 0, SEEK_CUR);
  std::string written(static_cast<std::size_t>(size), '\0');
  if (size > 0 && ::pread(fd_, written.data(), written.size(), 0) != size) std::abort();
  if (const std::string problem = test::not_text(written); !problem.empty()) {
    std::fprintf(stderr, "fuzz: %s printed what is not text: %s\n", what, problem.c_str());
    std::abort();
  }
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0) std::abort();
  return written;
}

ObjectTemplate read_template(const std::string& path, std::initializer_list<Region> order) {
  ObjectTemplate t;
  std::ifstream f(path, std::ios::binary);
  t.bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (t.bytes.empty() || elf_version(EV_CURRENT) == EV_NONE) std::abort();
  std::string copy = t.bytes;
  Elf* elf = elf_memory(copy.data(), copy.size());
  std::size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) std::abort();
  std::vector<std::pair<std::size_t, std::size_t>> of[4];  // by Region
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) std::abort();
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    const std::pair<std::size_t, std::size_t> place{shdr.sh_offset, shdr.sh_size};
    const std::string_view n = name ? name : "";
    if (shdr.sh_type == SHT_NOBITS || shdr.sh_size == 0) continue;
    if (shdr.sh_flags & SHF_EXECINSTR)
      of[static_cast<int>(Region::Code)].push_back(place);
    else if (shdr.sh_type == SHT_REL)
      of[static_cast<int>(Region::Rel)].push_back(place);
    else if (n == ".BTF.ext")
      of[static_cast<int>(Region::Ext)].push_back(place);
    else if (n == ".BTF")
      of[static_cast<int>(Region::Btf)].push_back(place);
  }
  elf_end(elf);
  for (const Region r : order) t.regions.insert(t.regions.end(), of[static_cast<int>(r)].begin(), of[static_cast<int>(r)].end());
  return t;
}

std::string ObjectTemplate::mutated(std::span<const std::uint8_t> mask) const {
  std::string out = bytes;
  std::size_t m = 0;
  for (const auto& [off, size] : regions)
    for (std::size_t i = 0; i < size && m < mask.size(); ++i) out[off + i] = static_cast<char>(out[off + i] ^ mask[m++]);
  return out;
}

void expect_error_line(const InputError& e) {
  const std::string line = e.what();
  const std::string problem = line.find('\n') != std::string::npos ? "a line break" : test::not_text(line);
  if (problem.empty()) return;
  std::fprintf(stderr, "fuzz: an error message is not one line of text (%s): ", problem.c_str());
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fputc('\n', stderr);
  std::abort();
}

void walk(const Btf& btf, bool c) {
  static TextSink sink;
  OutputBuffer& out = sink.out();
  dump_raw(btf, {}, out);
  sink.check("dump (raw)");
  dump_json(btf, {}, out);
  sink.check("dump --format json");
  // Every name read (as it is in the BTF: not output, so not checked), every type summary (printed, so
  // checked).
  std::size_t name_bytes = 0;
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    for_each_name_ref(btf.type(id), [&](std::uint32_t off) { name_bytes += btf.str(off).size(); });
    out.write(type_summary(btf, id));
  }
  sink.check("type summaries");
  (void)name_bytes;
  (void)measure_file(btf);

  const Footprint fp(btf);
  // Each printer once (every type in the table and JSON, the top rows in CSV), and the prefix roll-up.
  for (const Format format : {Format::Table, Format::Csv, Format::Json}) {
    MeasureOptions o;
    o.format = format;
    o.all = format != Format::Csv;
    print_measure(btf, fp, o, out);
    sink.check(format == Format::Table ? "measure" : format == Format::Csv ? "measure --format csv"
                                                                            : "measure --format json");
  }
  MeasureOptions by_prefix;
  by_prefix.by = MeasureBy::Prefix;
  print_measure(btf, fp, by_prefix, out);
  sink.check("measure --by prefix");
  out.write(render_svg(btf, fp));
  sink.check("the SVG");

  if (c) {
    try {
      dump_c(btf, {}, out);
      sink.check("dump -f c");
    } catch (const InputError& e) {
      // Refused by check_c_printable (or by libbpf's own reading): the expected outcome.
      expect_error_line(e);
      sink.check("dump -f c, refused");
    }
  }
}

MemFile::MemFile(std::span<const std::uint8_t> bytes) {
  fd_ = ::memfd_create("fuzz-input", MFD_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("memfd_create failed");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n <= 0) throw std::runtime_error("writing the memfd failed");
    done += static_cast<std::size_t>(n);
  }
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemFile::~MemFile() { ::close(fd_); }

namespace {

int added(int id) {
  if (id < 0) {
    std::fprintf(stderr, "fuzz: btf__add_* failed: %d\n", id);
    std::abort();
  }
  return id;
}

}  // namespace

std::shared_ptr<const Btf> small_core_target() {
  std::unique_ptr<struct btf, void (*)(struct btf*)> b(btf__new_empty(), btf__free);
  struct btf* t = b.get();
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  const int u8 = added(btf__add_int(t, "unsigned char", 1, 0));
  const int task_ptr = added(btf__add_ptr(t, 4));  // to the struct that follows
  added(btf__add_struct(t, "task_struct", 64));   // 4
  added(btf__add_field(t, "state", i32, 0, 0));
  added(btf__add_field(t, "flags", u8, 32, 3));
  added(btf__add_field(t, "mode", u8, 35, 5));
  added(btf__add_field(t, "tgid", i32, 96, 0));
  added(btf__add_field(t, "pid", i32, 128, 0));
  added(btf__add_field(t, "parent", task_ptr, 192, 0));
  const int arr = added(btf__add_array(t, i32, i32, 4));
  const int un = added(btf__add_union(t, "nest_mix", 16));
  added(btf__add_field(t, "p", i32, 0, 0));
  added(btf__add_field(t, "q", arr, 0, 0));
  added(btf__add_typedef(t, "pid_t", i32));
  added(btf__add_enum(t, "prim_enum", 4));
  added(btf__add_enum_value(t, "PRIM_ONE", 1));
  added(btf__add_enum_value(t, "PRIM_ZERO", 0));
  added(btf__add_enum64(t, "e64", 8, false));
  added(btf__add_enum64_value(t, "BIG", 0x100000000ULL));
  added(btf__add_fwd(t, "flavored", BTF_FWD_STRUCT));
  (void)un;
  __u32 size = 0;
  const void* data = btf__raw_data(t, &size);
  if (!data) std::abort();
  auto owner = std::make_shared<std::vector<std::uint8_t>>(static_cast<const std::uint8_t*>(data),
                                                           static_cast<const std::uint8_t*>(data) + size);
  return Btf::parse("small-target.btf", owner, std::span<const std::uint8_t>(*owner));
}

std::vector<std::shared_ptr<const Btf>> core_targets() {
  return {small_core_target(), load_btf_file(BTFSLIM_FUZZ_MOVED_TARGET, nullptr)};
}

}  // namespace btfslim::fuzz
