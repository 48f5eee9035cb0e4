// From what the user typed to a parsed Btf with its base.
#include "btfslim/error.h"
#include "btfslim/input.h"

#include <sys/stat.h>
#include <unistd.h>

namespace btfslim {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string running_vmlinux(std::string_view why) {
  std::string path(kRunningVmlinux);
  if (!exists(path))
    fail(path, "the running kernel has no BTF ({}); pass a BTF file, a vmlinux image or a .ko instead", why);
  return path;
}

bool is_running_module_path(const std::string& path) {
  const std::string dir = std::string(kSysBtfDir) + "/";
  return path.starts_with(dir) && path != kRunningVmlinux && path.find('/', dir.size()) == std::string::npos;
}

// The BTF bytes inside a file, and whether the file says its BTF is split on vmlinux.
struct BtfSource {
  std::shared_ptr<const void> owner;
  std::span<const std::uint8_t> bytes;
  bool kernel_module = false;
};

BtfSource read_source(const std::string& path) {
  auto file = FileBytes::open(path);
  if (!ElfFile::has_elf_magic(file->bytes())) {
    file->prefetch(file->bytes());
    return {file, file->bytes(), false};
  }
  auto elf = std::make_shared<ElfFile>(file);
  auto btf = elf->section(".BTF");
  if (!btf) fail(path, "ELF file has no .BTF section (build it with BTF: clang -g for BPF, pahole -J, CONFIG_DEBUG_INFO_BTF)");
  if (btf->empty()) fail(path, "ELF section .BTF is empty");
  file->prefetch(*btf);
  const bool module = elf->is_kernel_module();
  return {elf, *btf, module};
}

}  // namespace

ResolvedInput resolve_input(std::string_view arg) {
  if (arg.empty()) return {running_vmlinux("no input was given"), true};
  std::string path(arg);
  if (exists(path)) return {path, is_running_module_path(path) || path == kRunningVmlinux};
  if (arg == "vmlinux") return {running_vmlinux("there is no file 'vmlinux' here either"), true};
  if (arg.find('/') == std::string_view::npos) {
    std::string sys = std::string(kSysBtfDir) + "/" + path;
    if (exists(sys)) return {sys, true};
    // A bare name is as likely a module that is not loaded as a mistyped file: say both.
    if (exists(std::string(kSysBtfDir)))
      fail(path, "cannot open: no such file here, and no module of that name in {} (is it loaded?)", kSysBtfDir);
  }
  return {path, false};  // FileBytes::open reports what is wrong with it
}

std::shared_ptr<const Btf> load_btf_file(const std::string& path, std::shared_ptr<const Btf> base) {
  BtfSource src = read_source(path);
  return Btf::parse(path, std::move(src.owner), src.bytes, std::move(base));
}

std::shared_ptr<const Btf> load_btf(std::string_view arg, const LoadOptions& options) {
  const ResolvedInput input = resolve_input(arg);
  BtfSource src = read_source(input.path);
  std::shared_ptr<const Btf> base;
  if (!options.base.empty()) {
    base = load_btf_file(resolve_input(options.base).path, nullptr);
  } else if (is_running_module_path(input.path)) {
    base = load_btf_file(running_vmlinux("needed as the base of a module's BTF"), nullptr);
  } else if (src.kernel_module) {
    if (!exists(std::string(kRunningVmlinux)))
      fail(input.path, "is a kernel module whose BTF is split on vmlinux; pass --base VMLINUX_BTF");
    base = load_btf_file(std::string(kRunningVmlinux), nullptr);
  }
  return Btf::parse(input.path, std::move(src.owner), src.bytes, std::move(base), options.names);
}

}  // namespace btfslim
