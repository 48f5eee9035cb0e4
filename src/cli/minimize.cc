// `btfslim minimize`: a BTF with only what a set of BPF objects relocates against, verified to give
// every relocation the same result as the source before it is written.
//
// One source (a file, or the running kernel) gives one output file. Several --btf, a directory tree
// (btfhub-archive) or an archive (.btf.tar.xz) make a batch: the objects are read once, each kernel goes
// through the same minimize_source() as a single source, and its output is written under -o DIR where the
// source is in its tree. A batch runs on --jobs threads, a source file or archive each at a time, and
// reports in input order, so that what is written and printed does not depend on the number of jobs.
#include "btfslim/archive.h"
#include "btfslim/check.h"
#include "btfslim/cli.h"
#include "btfslim/elf_writer.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/minimize.h"
#include "btfslim/output.h"
#include "btfslim/parallel.h"
#include "btfslim/progress.h"
#include "btfslim/targets.h"
#include "btfslim/terminal.h"

#include "minimize_kernel.h"

#include <bpf/btf.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

namespace btfslim::cli {

bool same_file(const std::string& output, const std::string& input) {
  if (output.empty() || output == "-") return false;
  struct stat out_st {}, in_st {};
  return ::stat(output.c_str(), &out_st) == 0 && ::stat(input.c_str(), &in_st) == 0 &&
         out_st.st_dev == in_st.st_dev && out_st.st_ino == in_st.st_ino;
}

std::string relocation_site(const BpfObject& obj, const CoreRelocation& r) {
  const BpfFunction* f = obj.function_of(r);
  const std::uint64_t insn = (r.insn_off - (f ? f->offset : 0)) / 8;
  return fmt::format("{} {} insn #{}: {} {} ({})", esc(obj.path()), esc(f ? f->name : obj.sections()[r.section].name),
                     insn, reloc_kind_name(r.kind), describe_access(obj, r), esc(obj.access(r)));
}

namespace {

namespace fs = std::filesystem;

struct MinimizeArgs {
  std::vector<std::string> objects;
  std::vector<std::string> sources;
  std::string output;
  std::string source_base;  // -B, --base: what split sources continue
  std::string split_base;   // --split-base: write split BTF on it
  std::vector<std::string> keep;
  std::vector<std::string> explain;
  bool no_verify = false;
  bool elf = false;
  bool skip_poisoned = false;
  unsigned jobs = 0;  // 0: as many as the CPUs this process may run on
  std::string shard;
  bool sharded = false;  // --shard given (even empty)
};

// The objects, read and parsed once for every source.
struct ObjectSet {
  std::vector<std::string> paths;
  std::vector<bool> big_endian;  // each object's byte order, which must be its source's
  RootNames roots;  // what every object asks for, gathered when they were first read
  // Held objects (a batch's, which every source reuses, or for --explain, which names them at the
  // end); none when they are streamed: read again one at a time for each pass, and dropped after it.
  std::vector<std::unique_ptr<const BpfObject>> owned;
  std::vector<const BpfObject*> objects;
  // Each held object's code, for what its programs reach: read the first time a source poisons one of
  // its relocations (reach.h), by whichever thread gets there first.
  mutable std::mutex code_mutex;
  mutable std::vector<std::unique_ptr<const BpfCode>> code;

  // One source: an object's code and pages are given back as soon as they are done with (a batch keeps
  // them for the next source).
  bool one_source = false;

  bool streamed() const { return objects.empty(); }

  // Calls each(o, object) for every object in order: the held ones (their pages given back after each
  // with `release`), or each read and dropped in turn.
  template <typename Each>
  void for_each(Each&& each, bool release) const {
    for (std::size_t o = 0; o < paths.size(); ++o) {
      if (streamed()) {
        const auto object = BpfObject::open(paths[o], BpfObject::Reading::Once);
        each(o, *object);
        continue;
      }
      each(o, *objects[o]);
      if (release) objects[o]->release_pages();
    }
  }

  // The code of object `o` (`object`, when streamed: read for the caller alone).
  std::shared_ptr<const BpfCode> code_of(std::size_t o, const BpfObject& object) const {
    if (streamed()) return std::make_shared<const BpfCode>(object);
    const std::scoped_lock lock(code_mutex);
    if (!code[o]) code[o] = std::make_unique<const BpfCode>(*objects[o]);
    return std::shared_ptr<const BpfCode>(std::shared_ptr<const BpfCode>{}, code[o].get());
  }
};

// What every source is minimized with.
struct TargetOptions {
  MinimizeOptions minimize;  // --keep, --base
  std::shared_ptr<const Btf> source_base;  // --btf-base, read once for every source
  std::vector<std::string> explain;
  bool verify = true;
  bool elf = false;
  bool skip_poisoned = false;
  // Whether to find the relocations that would fail the load (reach.h: the programs' code is read for
  // it): for a batch's note on each such kernel, and for --skip-poisoned. One source's summary says
  // how many fail or are poisoned on it without that.
  bool find_failing = true;
  bool make_directories = false;  // create the output's directory (a batch's tree under -o DIR)
};

// What minimizing one source gave.
struct TargetOutcome {
  enum class State { Written, Skipped, Failed };
  State state = State::Written;
  std::string source;   // the source's name (archive:member for a member)
  std::string report;   // --explain's lines
  std::string summary;  // the line saying what was written, or why not
  std::string note;     // written, but a relocation fails on this source (batches say so)
  std::string error;    // Failed: the error line, without "btfslim: "
  std::exception_ptr output_error;  // Failed: a batch's output could not be written (OutputNotWritten)
  std::uint64_t bytes_in = 0, bytes_out = 0;
};

std::string where(const BpfObject& obj, const CoreRelocation& r) { return relocation_site(obj, r); }

std::string reason_text(const std::vector<const BpfObject*>& objects, const KeepReason& r) {
  if (r.object < 0) return "kept by --keep, or as the INT libbpf sizes pointers by";
  const BpfObject& obj = *objects[static_cast<std::size_t>(r.object)];
  return "needed by " + where(obj, obj.relocations()[r.relocation]);
}

void explain(const Btf& src, const Minimized& m, const std::vector<const BpfObject*>& objects,
             const std::string& name, std::string& report) {
  auto out = std::back_inserter(report);
  const TypePattern pattern = TypePattern::parse(name, TypePattern::Globs::No);
  bool found = false;
  for (TypeId id = 1; id < src.end_id(); ++id) {
    if (!pattern.matches(src, id)) continue;
    const TypeView t = src.type(id);
    found = true;
    fmt::format_to(out, "[{}] {} '{}': ", id, kind_name(t.kind()), esc(src.str(t.name_off())));
    if (!m.kept[id]) {
      fmt::format_to(out, "not kept: no relocation resolves against it\n");
      continue;
    }
    fmt::format_to(out, "{}\n", reason_text(objects, m.type_reasons.at(id)));
    if (t.kind() == Kind::Struct || t.kind() == Kind::Union) {
      const auto members = m.member_reasons.find(id);
      if (members == m.member_reasons.end()) {
        fmt::format_to(out, "  kept as a shell: name, size, no members\n");
        continue;
      }
      // An anonymous member written flattened is followed by its own kept members, one level deeper,
      // at the bit offsets they have in the output.
      auto members_of = [&](auto& self, TypeId holder, std::uint64_t base, int depth) -> void {
        const auto kept = m.member_reasons.find(holder);
        if (kept == m.member_reasons.end() || depth > 32) return;
        const TypeView h = src.type(holder);
        for (const auto& [index, reason] : kept->second) {
          const Member mm = h.member(index);
          const std::uint64_t bit = base + h.member_bit_offset(mm);
          const bool flat = m.flattened.count({holder, index}) != 0;
          fmt::format_to(out, "{:{}}member {} '{}' (bit {}): {}{}\n", "", 2 + 2 * depth, index,
                         esc(name_or_anon(src, mm.name_off)), bit, reason_text(objects, reason),
                         flat ? "; anonymous, written as its members:" : "");
          if (flat) self(self, mm.type, bit, depth + 1);
        }
      };
      members_of(members_of, id, 0, 0);
    }
  }
  if (!found) pattern.fail_unmatched(src, "--explain");
}

// The relocations that would fail the load on the source: ambiguous ones, errors, and poisoned ones a
// program's verifier reaches (one in dead code, e.g. behind a failing existence check, does not fail:
// the rule of `btfslim check`).
struct Failing {
  std::size_t count = 0;
  std::string first;
};

// Counts the relocations of object `o` that would fail the load on the source into `f`.
void add_failing(const ObjectSet& objs, std::size_t o, const BpfObject& object, const CoreResults& results, Failing& f) {
  const Reachability reach = any_poisoned(results) ? reachability(*objs.code_of(o, object), results) : Reachability{};
  const auto relos = object.relocations();
  for (std::size_t i = 0; i < relos.size(); ++i) {
    const CoreResult& r = results[i];
    if (r.status == CoreStatus::Ok || (r.status == CoreStatus::Poisoned && !reach.reached[i])) continue;
    if (f.count++ == 0)
      f.first = fmt::format("{}: {}{}{}", where(object, relos[i]), status_name(r.status), r.reason.empty() ? "" : ": ",
                            r.reason);
  }
}

// The output must not be an input, however spelt: compared by device and inode where it exists.
void refuse_overwriting_inputs(const std::string& output, const ObjectSet& objects, const std::string& source_file) {
  for (const std::string& in : objects.paths)
    if (same_file(output, in)) fail(output, "is an input ({}): refusing to overwrite it", esc(in));
  if (same_file(output, source_file)) fail(output, "is the source BTF: refusing to overwrite it");
}

// Whether libbpf takes the pointers of this BTF to be 4 bytes (its `long` is): the ELF class it is
// written in then says so too.
bool four_byte_pointers(const std::string& raw) {
  std::unique_ptr<struct btf, void (*)(struct btf*)> b(btf__new(raw.data(), static_cast<__u32>(raw.size())), btf__free);
  return b && btf__pointer_size(b.get()) == 4;
}

// Directories are made by one thread at a time: two sources may share a new one. Those a batch made
// are taken back when it fails, where they are empty: a failed run leaves the tree as it found it.
std::mutex directories_mutex;
std::vector<fs::path> made_directories;  // guarded by directories_mutex

void make_parent_directories(const std::string& output) {
  const fs::path dir = fs::path(output).parent_path();
  const std::scoped_lock lock(directories_mutex);
  std::error_code ec;
  for (fs::path d = dir; !d.empty() && !fs::exists(d, ec); d = d.parent_path()) {
    made_directories.push_back(d);
    if (d == d.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  if (ec) fail(dir.string(), "cannot create directory: {}", ec.message());
}

// Removes the empty directories a failed batch made, the deepest first (rmdir leaves any that holds
// something). Called after every thread has ended.
void remove_made_directories() {
  const std::scoped_lock lock(directories_mutex);
  std::sort(made_directories.begin(), made_directories.end(),
            [](const fs::path& a, const fs::path& b) { return a.native().size() > b.native().size(); });
  for (const fs::path& d : made_directories) ::rmdir(d.c_str());
  made_directories.clear();
}

// A batch's output that could not be written, with the InputError that says why. It ends the batch:
// the outputs share one tree, where the next would fail the same way (a full disk, a file-size limit, a
// read-only directory), and a btfhub tree has thousands.
struct OutputNotWritten {
  std::exception_ptr error;
};

// Minimizes one source for the objects: resolve every relocation on it, keep what they need, verify
// the result resolves the same, and write it to `output` ("-": stdout, "": nowhere). `source_file` is
// the file the source was read from (an archive, for a member), which `output` may not be. Throws
// InputError for what cannot be done; nothing is written then.
TargetOutcome minimize_source(const std::shared_ptr<const Btf>& source, const std::string& source_file,
                              const ObjectSet& objs, const TargetOptions& options, const std::string& output) {
  refuse_overwriting_inputs(output, objs, source_file);
  check_byte_order(objs.paths, objs.big_endian, *source);
  TargetOutcome outcome;
  outcome.source = source->name();
  outcome.bytes_in = source->raw().size();

  // Each object resolved against the source and marked, its results then dropped: only the marks
  // outlive it. With one source, its pages are given back as it is done.
  const CoreTarget target = minimize_target(source);
  const CandidateIndex index(target, objs.roots.roots());
  RelocationMarker marker(*source);
  std::size_t relocations = 0, not_ok = 0;
  Failing failing;
  std::vector<std::uint64_t> digests(objs.paths.size());  // each object's results, for the verification
  CoreResults results;  // each object's in turn, in the same memory
  objs.for_each(
      [&](std::size_t o, const BpfObject& object) {
        resolve_object_into(results, object, index);
        if (options.verify) digests[o] = MinimizedVerifier::source_digest(*source, object, results);
        for (const CoreResult& r : results) {
          ++relocations;
          if (r.status != CoreStatus::Ok) ++not_ok;
        }
        if (options.find_failing) add_failing(objs, o, object, results, failing);
        marker.add(object, static_cast<int>(o), results);
      },
      objs.one_source);
  if (failing.count > 0) {
    const std::string what = fmt::format("{} relocation{} would fail to load on it (first: {})", failing.count,
                                         failing.count == 1 ? "" : "s", failing.first);
    if (options.skip_poisoned) {
      outcome.state = TargetOutcome::State::Skipped;
      outcome.summary = fmt::format("{}: skipped: {}\n", esc(source->name()), what);
      return outcome;
    }
    outcome.note = fmt::format("{}: {}; written all the same (--skip-poisoned skips such kernels)", esc(source->name()), what);
  }

  const Minimized m = minimize(*source, marker.finish(), options.minimize);

  if (options.verify) {
    // Each object resolved on the output, its results folded as they were on the source. Only where
    // they differ is it resolved on the source again, with the answers it took, to say where.
    const MinimizedVerifier verifier(*source, m, objs.roots.roots());
    std::string diff;
    objs.for_each(
        [&](std::size_t o, const BpfObject& object) {
          if (!diff.empty() || verifier.output_digest(object) == digests[o]) return;
          AnswerLog answers;
          const CoreResults expected = resolve_object(object, index, &answers);
          diff = verifier.check(object, expected, answers);
        },
        objs.one_source);
    if (!diff.empty() && options.minimize.base)
      fail(output, "not written: {} lacks what the objects need, and a relocation resolves differently on it: {} "
           "(split BTF cannot add members to a type its base has: libbpf and the kernel search the split's own types "
           "only for names the base lacks; give --split-base a base minimized for these objects too, or none)",
           escape(options.minimize.base->name()), diff);
    if (!diff.empty())
      fail(output, "not written: a relocation resolves differently on the minimized BTF{}: {}",
           m.base ? " on " + escape(m.base->name()) : "", diff);
  }
  for (const std::string& name : options.explain) explain(*source, m, objs.objects, name, outcome.report);

  const std::string bytes =
      options.elf ? btf_elf_object(m.bytes, {source->big_endian(), four_byte_pointers(m.bytes), output == "-" ? "stdout" : output})
                  : m.bytes;
  if (!output.empty()) {
    try {
      if (options.make_directories && output != "-") make_parent_directories(output);
      write_file_atomically(output, bytes);
    } catch (const InputError&) {
      if (options.make_directories) throw OutputNotWritten{std::current_exception()};  // a batch
      throw;
    }
  }
  outcome.bytes_out = bytes.size();
  const double pct = source->raw().empty() ? 0.0 : 100.0 * static_cast<double>(m.bytes.size()) / static_cast<double>(source->raw().size());
  outcome.summary = fmt::format(
      "{}: {}{} types, {} bytes{} ({:.2f}% of {}: {} types, {} bytes); {} relocations of {} object{}{}{}\n",
      output.empty() ? "(not written)" : output == "-" ? "stdout" : escape(output),
      m.base ? "split on " + escape(m.base->name()) + ", " : "", m.types, with_commas(m.bytes.size()),
      options.elf ? fmt::format(" of BTF in {} bytes of ELF", with_commas(bytes.size())) : "", pct, esc(source->name()),
      source->end_id() - source->first_id(), with_commas(source->raw().size()), relocations, objs.paths.size(),
      objs.paths.size() == 1 ? "" : "s", options.verify ? ", each resolving as on the source" : "",
      not_ok ? fmt::format(" ({} poisoned or failing on the source too)", not_ok) : "");
  return outcome;
}

// ---- one source ----

void run_single(const MinimizeArgs& args, const ObjectSet& objects, const TargetOptions& options) {
  if (!args.sources.empty()) note_if_bpf_object(args.sources.front());
  const auto source = load_btf(args.sources.empty() ? "" : args.sources.front(), LoadOptions{args.source_base});
  const TargetOutcome outcome = minimize_source(source, source->name(), objects, options, args.output);
  OutputBuffer report(args.output == "-" ? 2 : 1, args.output == "-" ? "stderr" : "stdout");
  report.write(outcome.report);
  report.write(outcome.summary);
  report.flush();
}

// ---- a batch ----

// A file of a batch: one kernel, or an archive of them.
struct Unit {
  TargetFile file;
  bool archive = false;
};

struct UnitResult {
  std::vector<TargetOutcome> outcomes;  // in archive order for an archive
};

// "I/N" (1 <= I <= N): this run takes the sources whose place in the list, counted from 0, is I-1
// modulo N.
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  std::size_t i = 0, n = 0;
  const char* end = text.data() + text.size();
  const std::from_chars_result first = std::from_chars(text.data(), end, i);
  bool ok = first.ec == std::errc() && first.ptr != end && *first.ptr == '/';
  if (ok) {
    const std::from_chars_result second = std::from_chars(first.ptr + 1, end, n);
    ok = second.ec == std::errc() && second.ptr == end && i >= 1 && i <= n;
  }
  if (!ok) fail("--shard", "'{}' is not I/N with 1 <= I <= N (e.g. 2/4: the second of four shards)", esc(text));
  return {i, n};
}


// Whether `inner` is `outer` or below it (both made absolute and normal).
bool is_within(const fs::path& inner, const fs::path& outer) {
  const fs::path a = fs::weakly_canonical(inner), b = fs::weakly_canonical(outer);
  auto i = a.begin();
  for (auto j = b.begin(); j != b.end(); ++j, ++i) {
    if (j->empty()) continue;  // a trailing separator
    if (i == a.end() || *i != *j) return false;
  }
  return true;
}

// Where an archive member's output goes: the archive's directory in the tree, then the member's path
// in the archive. A member path that climbs out (absolute, or through ..) is refused.
std::string member_output(const fs::path& dir, const TargetFile& archive, const std::string& member) {
  const fs::path m = fs::path(member).lexically_normal();
  if (m.empty() || m.is_absolute() || *m.begin() == ".." || m == ".")
    fail(archive.path, "member {} would be written outside {}: refused", esc(member), esc(dir.string()));
  return (dir / fs::path(archive.relative).parent_path() / m).string();
}

class Batch {
 public:
  Batch(const MinimizeArgs& args, const ObjectSet& objects, const TargetOptions& options)
      : args_(args), objects_(objects), options_(options), dir_(args.output) {}

  void run();

 private:
  void plan();
  UnitResult run_unit(const Unit& unit);
  TargetOutcome run_one(const std::function<TargetOutcome()>& work, const std::string& name);
  // Claims `output` for `source`; an output two sources would write is an error for the second.
  void claim(const std::string& output, const std::string& source);

  const MinimizeArgs& args_;
  const ObjectSet& objects_;
  const TargetOptions& options_;
  fs::path dir_;
  std::vector<Unit> units_;
  std::size_t total_units_ = 0;  // before sharding
  std::mutex claims_mutex_;
  std::map<std::string, std::string> claims_;  // output -> source
  std::atomic<bool> stopped_{false};  // an output could not be written: start nothing more
};

void Batch::plan() {
  std::size_t shard = 1, shards = 1;
  if (args_.sharded) std::tie(shard, shards) = parse_shard(args_.shard);
  if (args_.output == "-" || args_.output.empty())
    fail("-o " + args_.output, "a batch of sources writes a directory of files: name it with -o DIR");
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    fail(args_.output, "is not a directory: with many sources, -o names the directory the outputs go under");
  // Outputs inside a tree of sources would be taken for sources by the next run over that tree.
  for (const std::string& s : args_.sources)
    if (fs::is_directory(s, ec) && is_within(dir_, s))
      fail(args_.output, "is inside {}, a directory of sources: a later run would read the outputs as sources", esc(s));

  std::vector<TargetFile> files = expand_target_files(
      args_.sources.empty() ? std::vector<std::string>{std::string(kRunningVmlinux)} : args_.sources);
  total_units_ = files.size();
  // Every input by device and inode: no output may replace one, however spelt (an output is checked
  // again, against its own source and the objects, just before it is written).
  std::map<std::pair<dev_t, ino_t>, std::string> inputs;
  auto note_input = [&](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) inputs.emplace(std::pair{st.st_dev, st.st_ino}, path);
  };
  for (const TargetFile& f : files) note_input(f.path);
  for (const std::string& path : objects_.paths) note_input(path);
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (k % shards != shard - 1) continue;
    const bool archive = is_archive_path(files[k].path);
    // A file's output is known now; two sources that would write the same file are refused up front.
    if (!archive) {
      const std::string out = (dir_ / files[k].relative).string();
      if (const auto it = claims_.find(out); it != claims_.end())
        fail(out, "two sources would be written here: {} and {}", esc(it->second), esc(files[k].path));
      claims_[out] = files[k].path;
      struct stat st {};
      if (::stat(out.c_str(), &st) == 0)
        if (const auto it = inputs.find({st.st_dev, st.st_ino}); it != inputs.end())
          fail(out, "is an input ({}): refusing to overwrite it", esc(it->second));
    }
    units_.push_back({std::move(files[k]), archive});
  }
}

void Batch::claim(const std::string& output, const std::string& source) {
  const std::scoped_lock lock(claims_mutex_);
  const auto [it, added] = claims_.emplace(output, source);
  if (!added) fail(output, "two sources would be written here: {} and {}", esc(it->second), esc(source));
}

// Runs one source's work; what goes wrong is its error line, and the batch goes on.
TargetOutcome Batch::run_one(const std::function<TargetOutcome()>& work, const std::string& name) {
  TargetOutcome failed;
  failed.state = TargetOutcome::State::Failed;
  failed.source = name;
  try {
    return work();
  } catch (const OutputNotWritten& e) {
    stopped_ = true;
    failed.output_error = e.error;
  } catch (const InputError& e) {
    failed.error = e.what();
  } catch (const std::bad_alloc&) {
    failed.error = escape(name) + ": out of memory";
  } catch (const std::exception& e) {
    failed.error = escape(name) + ": internal error: " + escape_controls(e.what());
  }
  return failed;
}

UnitResult Batch::run_unit(const Unit& unit) {
  UnitResult result;
  if (!unit.archive) {
    result.outcomes.push_back(run_one(
        [&] {
          // A base is for the split sources (modules); a whole kernel among them is read as itself.
          const std::string path = resolve_input(unit.file.path).path;
          const auto source = options_.source_base && !is_whole_kernel_btf(path)
                                  ? load_btf_file(path, options_.source_base)
                                  : load_btf(unit.file.path);
          return minimize_source(source, unit.file.path, objects_, options_, (dir_ / unit.file.relative).string());
        },
        unit.file.path));
    return result;
  }
  // Each raw BTF member in turn (btfhub: one kernel per archive). A member that is not valid BTF, or
  // an archive that cannot be read on, ends the archive: what was done before it stands.
  const TargetOutcome archive_error = run_one(
      [&] {
        for_each_archive_btf(unit.file.path, options_.source_base, [&](const std::string& member, std::shared_ptr<const Btf> btf) {
          if (stopped_) return;
          result.outcomes.push_back(run_one(
              [&] {
                const std::string out = member_output(dir_, unit.file, member);
                claim(out, btf->name());
                return minimize_source(btf, unit.file.path, objects_, options_, out);
              },
              btf->name()));
        });
        return TargetOutcome{};
      },
      unit.file.path);
  if (archive_error.state == TargetOutcome::State::Failed) result.outcomes.push_back(archive_error);
  return result;
}

void Batch::run() {
  plan();
  const std::size_t n = units_.size();
  const unsigned jobs = static_cast<unsigned>(std::min<std::size_t>(args_.jobs ? args_.jobs : available_cpus(), std::max<std::size_t>(n, 1)));

  std::vector<UnitResult> results(n);
  std::vector<char> finished(n, 0);
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t completed = 0;
  std::string last;
  std::atomic<std::size_t> next{0};
  // A jthread is asked to stop before it is joined: when printing fails (stdout), the threads finish
  // what they hold and start nothing more before the error is reported.
  auto worker = [&](const std::stop_token& stop) {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      UnitResult r = stopped_ || stop.stop_requested() ? UnitResult{} : run_unit(units_[i]);
      const std::scoped_lock lock(mutex);
      results[i] = std::move(r);
      finished[i] = 1;
      ++completed;
      last = units_[i].file.relative;
      changed.notify_one();
    }
  };

  // Results are printed in input order as soon as they and all before them are in.
  ProgressBar bar(n, "sources");
  OutputBuffer out;
  std::size_t written = 0, skipped = 0, failed = 0;
  std::uint64_t bytes_in = 0, bytes_out = 0;
  std::vector<std::string> skipped_names, failed_names;
  std::exception_ptr output_error;  // the first in input order
  auto print = [&](const UnitResult& r) {
    for (const TargetOutcome& o : r.outcomes) {
      if (o.output_error && !output_error) output_error = o.output_error;
      out.write(o.report);
      out.write(o.summary);
      out.flush();
      if (!o.note.empty()) std::fprintf(stderr, "btfslim: note: %s\n", o.note.c_str());
      if (!o.error.empty()) std::fprintf(stderr, "%s%s\n", error_prefix().c_str(), o.error.c_str());
      switch (o.state) {
        case TargetOutcome::State::Written: ++written; break;
        case TargetOutcome::State::Skipped: ++skipped; skipped_names.push_back(o.source); break;
        case TargetOutcome::State::Failed: ++failed; failed_names.push_back(o.source); break;
      }
      bytes_in += o.bytes_in;
      bytes_out += o.bytes_out;
    }
  };
  {
    std::vector<std::jthread> threads;
    for (unsigned j = 0; j < jobs; ++j) threads.emplace_back(worker);
    std::size_t printed = 0, shown = 0;
    std::unique_lock lock(mutex);
    while (printed < n) {
      changed.wait(lock, [&] { return finished[printed] || completed != shown; });
      shown = completed;
      const std::string current = last;
      std::vector<UnitResult> ready;
      for (; printed < n && finished[printed]; ++printed) ready.push_back(std::move(results[printed]));
      lock.unlock();
      if (!ready.empty()) bar.clear();
      for (const UnitResult& r : ready) print(r);
      bar.update(shown, current);
      lock.lock();
    }
  }
  bar.clear();
  // An output that could not be written is the one error line; what was written before it stays, and
  // the directories made for what was not are taken back.
  if (output_error) {
    remove_made_directories();
    std::rethrow_exception(output_error);
  }

  out.print("{} kernel{} written, {} skipped as poisoned, {} failed{}: {} bytes of BTF in, {} bytes out ({:.2f}%)\n",
            written, written == 1 ? "" : "s", skipped, failed,
            !args_.sharded ? "" : fmt::format(" (shard {}: {} of {} source files)", args_.shard, n, total_units_),
            with_commas(bytes_in), with_commas(bytes_out), percent(static_cast<double>(bytes_out), static_cast<double>(bytes_in)));
  for (const std::string& s : skipped_names) out.print("  skipped: {}\n", esc(s));
  for (const std::string& s : failed_names) out.print("  failed: {}\n", esc(s));
  out.flush();
  if (failed) fail("", "{} of {} source{} not minimized (errors above)", failed, written + skipped + failed,
                   written + skipped + failed == 1 ? "" : "s");
}

// Several sources, a directory or an archive: a batch writing under -o DIR (--shard takes part of one).
bool is_batch(const MinimizeArgs& args) {
  if (args.sources.size() > 1) return true;
  std::error_code ec;
  return args.sources.size() == 1 && (fs::is_directory(args.sources[0], ec) || is_archive_path(args.sources[0]));
}

void run_minimize(const MinimizeArgs& args) {
  if (args.sources.empty() && strict_inputs())
    fail("--btf", "none given, which means the running kernel's BTF (--strict-input takes files only)");
  // One source gives one file: a shard of it would turn -o FILE into a directory, and it has no jobs to share.
  if ((args.sharded || args.jobs != 0) && !is_batch(args))
    fail(args.sharded ? "--shard" : "--jobs", "goes with a batch (several --btf, a directory or an archive of them); {} is one source",
         args.sources.empty() ? std::string("the running kernel") : escape(args.sources[0]));
  // Every object is read first, for what it asks of the sources (and to refuse a bad one before any
  // work). One source then reads them again one at a time, each dropped before the next, so that many
  // objects hold no more memory than the largest; a batch, which reuses them for every source,
  // --explain, which names them at the end, and a handful of objects (kHeldObjects: reading them again
  // would cost more than they hold) keep them (their pages given back).
  const bool hold = is_batch(args) || !args.explain.empty() || args.objects.size() <= kHeldObjects;
  ObjectSet objects;
  objects.paths = args.objects;
  for (const auto& path : args.objects) {
    auto object = BpfObject::open(path, hold ? BpfObject::Reading::All : BpfObject::Reading::Asked);
    objects.roots.add(*object);
    objects.big_endian.push_back(object->btf().big_endian());
    if (!object->has_ext() || object->relocation_count() == 0)
      std::fprintf(stderr, "btfslim: note: %s has no CO-RE relocations: it needs nothing\n", escape(path).c_str());
    if (!hold) continue;
    object->release_pages();  // read again when resolved: one object's pages at a time
    objects.objects.push_back(object.get());
    objects.owned.push_back(std::move(object));
    objects.code.emplace_back();
  }
  TargetOptions options;
  options.minimize.keep = args.keep;
  if (!args.split_base.empty()) options.minimize.base = load_btf(args.split_base);
  options.explain = args.explain;
  options.verify = !args.no_verify;
  options.elf = args.elf;
  options.skip_poisoned = args.skip_poisoned;
  if (!is_batch(args)) {
    objects.one_source = true;
    options.find_failing = options.skip_poisoned;
    return run_single(args, objects, options);
  }
  if (!args.source_base.empty()) options.source_base = load_btf(args.source_base);
  options.make_directories = true;
  Batch(args, objects, options).run();
}

}  // namespace

void register_minimize(CLI::App& app) {
  auto args = std::make_shared<MinimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "minimize", "write a BTF with only the types and members BPF objects' CO-RE relocations resolve against");
  auto kernel = std::make_shared<KernelMinimizeArgs>();
  cmd->add_option("objects", args->objects, "BPF object files (.bpf.o)");
  cmd->add_option("--btf", args->sources,
                  "the source BTF: a file (raw BTF, vmlinux), or 'vmlinux' (default: the running kernel); "
                  "repeat, or name directories or .btf.tar.xz archives, for a batch written under -o DIR")
      ->allow_extra_args(false);
  CLI::Option* output = cmd->add_option("--output,-o", args->output,
                  "where to write the minimized BTF ('-': standard output); for a batch, the directory");
  add_base_option(*cmd, args->source_base,
                  "the base the source continues, for a module's BTF in a .ko file or a split BTF file "
                  "(automatic for a module under /sys/kernel/btf)");
  // Its name before -B meant the input's base on every command: kept for the command lines that use it.
  cmd->add_option("--btf-base", args->source_base)->group("");
  cmd->add_option("--split-base", args->split_base,
                  "write split BTF on this base with only the types it lacks (default: standalone BTF, or a "
                  "module's own base for a module's BTF)");
  cmd->add_option("--keep", args->keep, "also keep this type with all its members (repeat for more)")
      ->allow_extra_args(false);
  cmd->add_option("--explain", args->explain, "say why a type and its members are kept (repeat for more)")
      ->allow_extra_args(false);
  cmd->add_flag("--no-verify", args->no_verify,
                "do not resolve every relocation against the output before writing it");
  cmd->add_flag("--elf", args->elf, "write an ELF object with a .BTF section instead of raw BTF");
  cmd->add_flag("--skip-poisoned", args->skip_poisoned,
                "write nothing for a source on which a relocation would fail to load (poisoned where a program "
                "reaches it, ambiguous, or an error)");
  cmd->add_option("--jobs,-j", args->jobs, "minimize this many sources of a batch at once (default: one per CPU)")
      ->check(whole_number(1, 4096))
      ->type_name("N");
  CLI::Option* shard = cmd->add_option(
      "--shard", args->shard, "I/N: minimize only the I-th of N interleaved parts of the batch's sorted source files");
  CLI::Option* kernel_opt = cmd->add_option(
      "--kernel", kernel->kernel,
      "minimize the BTF this vmlinux image carries (with its symbol table), for the objects' programs to load on "
      "it; -o then writes the patched image");
  CLI::Option* btf_out = cmd->add_option(
      "--btf-out", kernel->btf_out, "with --kernel: also write the slim .BTF alone, for a kernel build's link");
  CLI::Option* family = cmd->add_option(
      "--family", kernel->families,
      "with --kernel: also keep every attach point of a family: tracepoints, iterators (kfuncs, lsm and struct_ops "
      "are always kept: the kernel lists them itself)")->allow_extra_args(false);
  CLI::Option* modules = cmd->add_option(
      "--modules", kernel->modules,
      "with --kernel: rewrite every module (.ko, .ko.xz, .ko.zst, .ko.gz) under this directory for the slim kernel; "
      "-o is then a directory that gets vmlinux and the modules at their paths, compressed as they came");
  CLI::Option* keep_for_modules = cmd->add_option(
      "--keep-for-modules", kernel->keep_for_modules,
      "with --kernel: also keep, whole with all they reach, the types the modules under this directory refer to "
      "(for modules built later on the slim kernel, which then find them in its base), and say what that costs");
  CLI::Option* attach = cmd->add_option(
      "--attach-target", kernel->attach_targets,
      "with --kernel: PROG=FUNC, the target a program's loader sets (bpf_program__set_attach_target)")
      ->allow_extra_args(false);
  cmd->callback([args, shard, kernel, kernel_opt, btf_out, family, attach, modules, keep_for_modules, output, cmd] {
    args->sharded = shard->count() > 0;
    if (kernel_opt->count() == 0) {
      for (const CLI::Option* o : {btf_out, family, attach, modules, keep_for_modules})
        if (o->count() > 0) fail(o->get_name(), "goes with --kernel");
      if (output->count() == 0) fail("minimize", "-o OUT is required (a file, '-' for standard output, or a batch's directory)");
      if (args->objects.empty()) fail("minimize", "name the BPF objects to minimize for");
      return run_minimize(*args);
    }
    if (output->count() == 0 && (btf_out->count() == 0 || modules->count() > 0))
      fail("minimize --kernel", "{}", modules->count() > 0 ? "-o DIR is required with --modules"
                                                           : "-o IMAGE or --btf-out BTF is required (or both)");
    for (const char* o : {"--btf", "--base", "--btf-base", "--split-base", "--elf", "--skip-poisoned", "--jobs", "--shard"})
      if (cmd->count(o) > 0) fail(o, "does not go with --kernel");
    kernel->output = args->output;
    kernel->objects = args->objects;
    kernel->keep = args->keep;
    kernel->explain = args->explain;
    kernel->no_verify = args->no_verify;
    run_minimize_kernel(*kernel);
  });
}

}  // namespace btfslim::cli
