// BTF in an ELF object, laid out by libelf.
//
// libelf writes only to a file descriptor, so the object is built in an anonymous memory file
// (memfd) and read back: the caller then writes it atomically like any other output, or to stdout.
// The file holds a null section, `.BTF` and `.shstrtab`; no symbols and no program, so tools that list
// sections see exactly the BTF. The class matters beyond the header: libbpf's btf__parse_elf sets the
// BTF's pointer size from it (4 for ELFCLASS32), which CO-RE uses for the size of pointer fields.
#include "btfslim/elf_writer.h"

#include "btfslim/error.h"

#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace btfslim {
namespace {

constexpr char kSectionNames[] = "\0.BTF\0.shstrtab";  // offsets 1 and 6, and the final NUL
constexpr std::size_t kBtfName = 1;
constexpr std::size_t kShstrtabName = 6;

// libelf's message does not say why a write failed; errno does. The memory file the ELF is built in is a
// file to the kernel: a file-size limit (ulimit -f) applies to it as to the output, and is reported as the
// output's own write error would be.
[[noreturn]] void libelf_failed(const std::string& output, const char* what) {
  const int err = errno;
  if (err == EFBIG || err == ENOSPC || err == EIO)
    fail(output, "write error: {} (in the memory file the ELF is built in, which ulimit -f limits too)",
         std::strerror(err));
  fail(output, "{}: {}", what, elf_errmsg(-1));
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The first `size` bytes of memory file `fd`.
std::string read_back(const std::string& output, int fd, std::size_t size) {
  std::string out(size, '\0');
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(output, "cannot read the memory file back: {}", n < 0 ? std::strerror(errno) : "short read");
    done += static_cast<std::size_t>(n);
  }
  return out;
}

void add_section(const std::string& output, Elf* elf, std::string_view bytes, std::size_t name, std::uint32_t type,
                 std::size_t align) {
  Elf_Scn* scn = elf_newscn(elf);
  if (!scn) libelf_failed(output, "cannot add a section");
  Elf_Data* data = elf_newdata(scn);
  if (!data) libelf_failed(output, "cannot add section data");
  data->d_buf = const_cast<char*>(bytes.data());  // libelf only reads it
  data->d_size = bytes.size();
  data->d_type = ELF_T_BYTE;
  data->d_align = align;
  data->d_off = 0;
  data->d_version = EV_CURRENT;
  GElf_Shdr shdr;
  if (!gelf_getshdr(scn, &shdr)) libelf_failed(output, "cannot read a section header");
  shdr.sh_name = static_cast<GElf_Word>(name);
  shdr.sh_type = type;
  shdr.sh_flags = 0;
  shdr.sh_addralign = align;
  shdr.sh_entsize = 0;
  if (!gelf_update_shdr(scn, &shdr)) libelf_failed(output, "cannot write a section header");
}

}  // namespace

std::string btf_elf_object(std::string_view btf, const BtfElfOptions& options) {
  const std::string& output = options.output;
  static const bool initialized = elf_version(EV_CURRENT) != EV_NONE;
  if (!initialized) libelf_failed(output, "libelf is out of date");
  Fd file{::memfd_create("btfslim-elf", MFD_CLOEXEC)};
  if (file.fd < 0) fail(output, "cannot create a memory file: {}", std::strerror(errno));
  errno = 0;  // libelf_failed reads it

  std::unique_ptr<Elf, int (*)(Elf*)> elf(elf_begin(file.fd, ELF_C_WRITE, nullptr), elf_end);
  if (!elf) libelf_failed(output, "cannot start an ELF file");
  if (!gelf_newehdr(elf.get(), options.elf32 ? ELFCLASS32 : ELFCLASS64)) libelf_failed(output, "cannot add the ELF header");
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf.get(), &ehdr)) libelf_failed(output, "cannot read the ELF header");
  ehdr.e_ident[EI_DATA] = options.big_endian ? ELFDATA2MSB : ELFDATA2LSB;
  ehdr.e_ident[EI_OSABI] = ELFOSABI_NONE;
  ehdr.e_type = ET_REL;
  ehdr.e_machine = EM_BPF;
  ehdr.e_version = EV_CURRENT;

  add_section(output, elf.get(), btf, kBtfName, SHT_PROGBITS, 4);
  add_section(output, elf.get(), std::string_view(kSectionNames, sizeof kSectionNames), kShstrtabName, SHT_STRTAB, 1);
  ehdr.e_shstrndx = 2;
  if (!gelf_update_ehdr(elf.get(), &ehdr)) libelf_failed(output, "cannot write the ELF header");
  errno = 0;
  if (elf_update(elf.get(), ELF_C_WRITE) < 0) libelf_failed(output, "cannot lay out the ELF file");
  elf.reset();
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) fail(output, "cannot measure the memory file: {}", std::strerror(errno));
  return read_back(output, file.fd, static_cast<std::size_t>(st.st_size));
}

std::string elf_with_sections(std::span<const std::uint8_t> elf_bytes,
                              const std::vector<std::pair<std::string, std::string_view>>& contents,
                              const std::string& output) {
  static const bool initialized = elf_version(EV_CURRENT) != EV_NONE;
  if (!initialized) libelf_failed(output, "libelf is out of date");
  Fd file{::memfd_create("btfslim-elf", MFD_CLOEXEC)};
  if (file.fd < 0) fail(output, "cannot create a memory file: {}", std::strerror(errno));
  for (std::size_t done = 0; done < elf_bytes.size();) {
    const ssize_t n = ::write(file.fd, elf_bytes.data() + done, elf_bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) libelf_failed(output, "cannot copy the file into memory");
    done += static_cast<std::size_t>(n);
  }
  errno = 0;
  std::unique_ptr<Elf, int (*)(Elf*)> elf(elf_begin(file.fd, ELF_C_RDWR, nullptr), elf_end);
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) libelf_failed(output, "cannot read the ELF file");
  std::size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf.get(), &shstrndx) != 0) libelf_failed(output, "cannot read the section names");
  std::vector<bool> replaced(contents.size(), false);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) libelf_failed(output, "cannot read a section header");
    const char* name = elf_strptr(elf.get(), shstrndx, shdr.sh_name);
    for (std::size_t i = 0; name && i < contents.size(); ++i) {
      if (contents[i].first != name) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (!data) libelf_failed(output, "cannot read a section");
      data->d_buf = const_cast<char*>(contents[i].second.data());  // libelf only reads it
      data->d_size = contents[i].second.size();
      if (!elf_flagdata(data, ELF_C_SET, ELF_F_DIRTY)) libelf_failed(output, "cannot replace a section");
      replaced[i] = true;
    }
  }
  for (std::size_t i = 0; i < contents.size(); ++i)
    if (!replaced[i]) fail(output, "internal error: no section {} to replace", esc(contents[i].first));
  errno = 0;
  const off_t size = elf_update(elf.get(), ELF_C_WRITE);
  if (size < 0) libelf_failed(output, "cannot lay out the ELF file");
  elf.reset();
  // Only the ELF file: what followed its last byte (a module's appended signature) is left out.
  return read_back(output, file.fd, static_cast<std::size_t>(size));
}

}  // namespace btfslim
