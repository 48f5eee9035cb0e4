// From what the user typed to a parsed Btf with its base.
//
// A .ko's BTF is split on the vmlinux it was built with; with no --base we take the running kernel's,
// which is right only for a module of the running kernel. Its `.modinfo` says which kernel that is
// (vermagic=RELEASE ...): a module of another release is refused before its BTF is read, naming both
// releases. Whatever else is read on the wrong base is caught by Btf::parse's fit check.
#include "btfslim/archive.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/parallel.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>

namespace btfslim {
namespace {

std::atomic<bool> strict_inputs_only{false};

// Under --strict-input a shorthand for the running kernel's BTF is an error naming what was typed.
void refuse_if_strict(std::string_view arg, std::string_view means) {
  if (strict_inputs_only.load(std::memory_order_relaxed))
    fail(arg.empty() ? std::string("input") : std::string(arg), "{} (--strict-input takes files only)", means);
}

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
  bool whole = false;  // a linked image's (vmlinux) or the running vmlinux's BTF: never split on a base
  std::string_view release;  // a module's: the first word of .modinfo's vermagic, "" when none
  std::span<const std::uint8_t> ext;  // an ELF file's .BTF.ext, empty when none
};

std::string running_release() {
  struct utsname u {};
  return ::uname(&u) == 0 ? std::string(u.release) : std::string();
}

// The running vmlinux as the implicit base, parsed once while anything still holds it: `measure
// --modules` reads a thousand modules on it. Batches load on several threads.
std::shared_ptr<const Btf> running_base(std::string_view why) {
  static std::mutex mutex;
  static std::weak_ptr<const Btf> cached;
  const std::scoped_lock lock(mutex);
  if (auto base = cached.lock()) return base;
  auto base = load_btf_file(running_vmlinux(why), nullptr);
  cached = base;
  return base;
}

bool is_raw_btf(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 2 && ((bytes[0] == 0x9f && bytes[1] == 0xeb) || (bytes[0] == 0xeb && bytes[1] == 0x9f));
}

// An archive (btfhub's NAME.btf.tar.xz) that holds one kernel's BTF stands for it; one of several kernels
// is not chosen for the user.
BtfSource read_archive(const std::string& path) {
  std::shared_ptr<const std::vector<std::uint8_t>> found;
  std::size_t count = 0;
  for_each_archive_member(path, [&](const std::string&, std::shared_ptr<const std::vector<std::uint8_t>> bytes) {
    if (!is_raw_btf(*bytes)) return;
    if (++count == 1) found = std::move(bytes);
  });
  if (count == 0) fail(path, "archive holds no raw BTF files");
  if (count > 1) fail(path, "archive holds {} BTF files: check and minimize read each of them; extract one to read it here", count);
  const std::span<const std::uint8_t> bytes(*found);
  return {found, bytes, false, false, {}, {}};
}

BtfSource read_source(const std::string& path) {
  if (is_archive_path(path)) return read_archive(path);
  auto file = FileBytes::open(path);
  if (!ElfFile::has_elf_magic(file->bytes())) {
    file->prefetch(file->bytes());
    return {file, file->bytes(), false, path == kRunningVmlinux, {}, {}};
  }
  auto elf = std::make_shared<ElfFile>(file);
  auto btf = elf->section(".BTF");
  if (!btf) fail(path, "ELF file has no .BTF section (build it with BTF: clang -g for BPF, pahole -J, CONFIG_DEBUG_INFO_BTF)");
  if (btf->empty()) fail(path, "ELF section .BTF is empty");
  file->prefetch(*btf);
  const bool module = elf->is_kernel_module();
  const std::string_view release = module ? elf->module_release() : std::string_view();
  const auto ext = elf->section(".BTF.ext");
  return {elf, *btf, module, elf->is_linked_image(), release, ext.value_or(std::span<const std::uint8_t>())};
}

// A base given for what is never split (vmlinux): read on it, its types would be numbered after the
// base's and every reference would point into the base. Refused instead of read as nonsense.
void refuse_base_for_whole(const std::string& path, const BtfSource& src, const Btf& base) {
  if (src.whole)
    fail(path, "is a whole kernel's BTF (vmlinux), not split BTF: a base ({}) goes only with a module's (.ko, "
               "/sys/kernel/btf/MODULE)", esc(base.name()));
}

}  // namespace

void set_strict_inputs(bool strict) { strict_inputs_only.store(strict, std::memory_order_relaxed); }
bool strict_inputs() { return strict_inputs_only.load(std::memory_order_relaxed); }

ResolvedInput resolve_input(std::string_view arg) {
  if (arg.empty()) {
    refuse_if_strict(arg, "none given, which means the running kernel's BTF");
    return {running_vmlinux("no input was given"), true};
  }
  std::string path(arg);
  if (exists(path)) return {path, is_running_module_path(path) || path == kRunningVmlinux};
  if (arg == "vmlinux") {
    refuse_if_strict(arg, "no such file here");
    std::string running = running_vmlinux("there is no file 'vmlinux' here either");
    static std::once_flag noted;
    std::call_once(noted, [&] {
      std::fprintf(stderr, "btfslim: note: no file 'vmlinux' here: reading the running kernel's %s\n", running.c_str());
    });
    return {std::move(running), true};
  }
  if (arg.find('/') == std::string_view::npos) {
    std::string sys = std::string(kSysBtfDir) + "/" + path;
    if (exists(sys)) {
      refuse_if_strict(arg, fmt::format("no such file here (it would name the running kernel's {})", sys));
      return {sys, true};
    }
    // A bare name is as likely a module that is not loaded as a mistyped file: say both.
    if (exists(std::string(kSysBtfDir)))
      fail(path, "cannot open: no such file here, and no module of that name in {} (is it loaded?)", kSysBtfDir);
  }
  return {path, false};  // FileBytes::open reports what is wrong with it
}

bool is_whole_kernel_btf(const std::string& path) {
  if (path == kRunningVmlinux) return true;
  if (is_archive_path(path)) return false;
  auto file = FileBytes::open(path);
  return ElfFile::has_elf_magic(file->bytes()) && ElfFile(file).is_linked_image();
}

std::shared_ptr<const Btf> load_btf_file(const std::string& path, std::shared_ptr<const Btf> base,
                                         std::span<const std::uint8_t>* ext) {
  BtfSource src = read_source(path);
  if (ext) *ext = src.ext;
  if (base) refuse_base_for_whole(path, src, *base);
  return Btf::parse(path, std::move(src.owner), src.bytes, std::move(base));
}

std::shared_ptr<const Btf> load_btf(std::string_view arg, const LoadOptions& options) {
  const ResolvedInput input = resolve_input(arg);
  BtfSource src = read_source(input.path);
  if (options.ext) *options.ext = src.ext;
  std::shared_ptr<const Btf> base;
  if (!options.base.empty()) {
    base = load_btf_file(resolve_input(options.base).path, nullptr);
    refuse_base_for_whole(input.path, src, *base);
  } else if (is_running_module_path(input.path)) {
    base = running_base("needed as the base of a module's BTF");
  } else if (src.kernel_module) {
    if (!exists(std::string(kRunningVmlinux)))
      fail(input.path, "is a kernel module whose BTF is split on vmlinux; pass --base VMLINUX_BTF");
    if (const std::string running = running_release(); !src.release.empty() && src.release != running)
      fail(input.path, "split BTF built on another base (vermagic {}, running {}): pass that kernel's vmlinux with --base",
           esc(src.release), esc(running));
    base = running_base("needed as the base of a module's BTF");
  }
  return Btf::parse(input.path, std::move(src.owner), src.bytes, std::move(base), options.names);
}

std::vector<std::shared_ptr<const Btf>> load_module_btfs(const std::vector<std::string>& paths,
                                                         const std::shared_ptr<const Btf>& vmlinux) {
  // Read on every CPU: a distribution's tree is a thousand compressed files.
  std::vector<std::shared_ptr<const Btf>> modules(paths.size());
  parallel_for(paths.size(), available_cpus(), [&](std::size_t i) {
    const std::string& path = paths[i];
    auto file = FileBytes::open(path);
    if (!ElfFile::has_elf_magic(file->bytes())) fail(path, "not an ELF file: a kernel module (.ko) is wanted here");
    auto elf = std::make_shared<ElfFile>(file);
    if (!elf->is_kernel_module()) fail(path, "not a kernel module (no .modinfo)");
    const auto btf = elf->section(".BTF");
    if (!btf || btf->empty()) return;  // built without BTF: nothing of it can be looked up
    modules[i] = Btf::parse(path, elf, *btf, vmlinux);
  });
  std::erase(modules, nullptr);
  return modules;
}

}  // namespace btfslim
