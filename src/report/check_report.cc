// Printing `btfslim check`: a table of relocations for one target, a matrix of objects by targets for
// several, JSON of one shape however many of either, GitHub workflow commands and JUnit XML for CI.
//
// Everything ends in one verdict: on one kernel "N objects x 1 kernel: K fail"; on several, "N objects x
// M kernels: K objects fail (P of N*M object/kernel pairs)", an object that fails on six kernels being one
// failing object and six failing pairs. Objects are named by their shortest unique path suffix
// (paths.h); one kernel so too, several by their short names (paths.h: the release, where it tells them
// apart). The matrix of several kernels is check_matrix.cc's; its failures alike on several kernels
// are listed once, and GitHub's annotations are grouped the same way.
#include "btfslim/check.h"
#include "check_parts.h"
#include "btfslim/spare.h"
#include "btfslim/ci_text.h"
#include "btfslim/escape.h"
#include "btfslim/paths.h"
#include "btfslim/terminal.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace btfslim {

constexpr std::uint32_t kInsnSize = 8;

Where where(const BpfObject& obj, const CoreRelocation& r) {
  const ProgramSection& s = obj.sections()[r.section];
  if (const BpfFunction* f = obj.function_of(r)) return {s.name, f->name, (r.insn_off - f->offset) / kInsnSize};
  return {s.name, s.name, r.insn_off / kInsnSize};
}

std::string_view nothing_to_do(const BpfObject& obj) {
  if (!obj.has_ext()) return "no .BTF.ext: nothing to relocate";
  if (obj.relocations().empty()) return "no CO-RE relocations";
  return "";
}

namespace {

std::string summary(const ObjectOnTarget::Counts& t) {
  std::string s = fmt::format("{} ok", t.ok);
  if (t.poisoned) s += fmt::format(", {} poisoned", t.poisoned);
  if (t.dead) s += fmt::format(", {} poisoned in dead code", t.dead);
  if (t.ambiguous) s += fmt::format(", {} ambiguous", t.ambiguous);
  if (t.error) s += fmt::format(", {} errors", t.error);
  return s;
}

// A relocation's result as the table shows it, in a buffer of its own that asks the heap for nothing
// (JSON and the failure lists write one per relocation).
class ResultText {
 public:
  void clear() { size_ = 0; }
  ResultText& operator<<(std::string_view s) {
    size_ = static_cast<std::size_t>(std::copy(s.begin(), s.end(), data_ + size_) - data_);
    return *this;
  }
  ResultText& operator<<(std::uint64_t v) {
    size_ = static_cast<std::size_t>(std::to_chars(data_ + size_, std::end(data_), v).ptr - data_);
    return *this;
  }
  std::string_view view() const { return {data_, size_}; }

 private:
  char data_[80];  // the longest: "{u64} (was {u64})", "{u64} (size {u8} -> {u8})"
  std::size_t size_ = 0;
};

std::string_view result_text(const CoreResult& r, bool dead, ResultText& buf) {
  buf.clear();
  switch (r.status) {
    case CoreStatus::Ok:
      if (r.target_size != r.local_size)
        buf << r.value << " (size " << std::uint64_t{r.local_size} << " -> " << std::uint64_t{r.target_size} << ")";
      else if (r.value == r.local_value)
        buf << r.value;
      else
        buf << r.value << " (was " << r.local_value << ")";
      return buf.view();
    case CoreStatus::Poisoned:
      return dead ? "poisoned (dead code)" : "POISONED";
    case CoreStatus::Ambiguous:
      return "AMBIGUOUS";
    case CoreStatus::Error:
      return "ERROR";
  }
  return "";
}

std::string result_text(const CoreResult& r, bool dead) {
  ResultText buf;
  return std::string(result_text(r, dead, buf));
}

// A failing result that does not count, as the table shows it: in lower case, saying why ("poisoned
// (optional)", "missing (unused alternative)"), as "poisoned (dead code)" does.
std::string not_counted_text(std::string_view verdict, NotCounted why) {
  std::string s(verdict);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return fmt::format("{} ({})", s, not_counted_name(why));
}

// The rows of failure_rows() (relocations in record order, then kernel references) that do not count,
// marked so and their verdicts said so.
void mark_not_counted(const CheckRun& run, std::size_t o, std::size_t t, std::vector<FailureRow>& rows) {
  const ProgramOutcomes outcomes = program_outcomes(run, o, t);
  if (outcomes.not_counted == 0) return;
  const ObjectOnTarget& cell = run.cells[o][t];
  std::size_t row = 0;
  auto mark = [&](NotCounted why) {
    if (why != NotCounted::No) {
      rows[row].counted = false;
      rows[row].verdict = not_counted_text(rows[row].verdict, why);
    }
    ++row;
  };
  for (std::size_t i = 0; i < cell.results.size(); ++i)
    if (relocation_fails(run, cell.results[i], cell.dead[i])) mark(outcomes.relocation(i));
  const auto& refs = run.kernel_refs[o];
  for (std::size_t i = 0; i < refs.size(); ++i)
    if (kernel_ref_fails(refs[i], cell.kernel_refs[i])) mark(outcomes.kernel_ref(i));
}

// The names a report shows: every object's shortest unique suffix; one kernel's too, several kernels'
// short names; escaped, and the kernels' as they are for JSON.
struct Names {
  std::vector<std::string> objects, kernels;
  std::vector<std::string> kernels_raw;
  std::vector<std::pair<std::string, std::string>> legend;  // short name, file: those not a suffix of their path
};

Names shown_names(std::span<const std::string> object_paths, const std::vector<std::string>& targets) {
  Names n;
  const std::vector<std::string> paths(object_paths.begin(), object_paths.end());
  for (const std::string_view s : shortest_unique_suffixes(paths)) n.objects.push_back(escape(s));
  if (targets.size() == 1)
    for (const std::string_view s : shortest_unique_suffixes(targets)) n.kernels_raw.emplace_back(s);
  else
    n.kernels_raw = kernel_short_names(targets);
  for (std::size_t t = 0; t < targets.size(); ++t) {
    n.kernels.push_back(escape(n.kernels_raw[t]));
    if (!targets[t].ends_with(n.kernels_raw[t])) n.legend.emplace_back(n.kernels.back(), escape(targets[t]));
  }
  return n;
}

}  // namespace

MatrixCell matrix_cell(const CheckRun& run, std::size_t o, std::size_t t) {
  const ObjectOnTarget& cell = run.cells[o][t];
  MatrixCell c;
  c.failing_relocations = cell.counts.failing;
  c.failing_kernel_refs = kernel_refs_failing(run, o, cell);
  c.not_counted = program_outcomes(run, o, t).not_counted;
  c.failing = c.failing_relocations + c.failing_kernel_refs - c.not_counted;
  c.nothing = !nothing_to_do(*run.objects[o]).empty() && !kernel_refs_checked(run, o, cell);
  return c;
}

std::string plural(std::size_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

std::vector<FailureRow> failure_rows(const CheckRun& run, std::size_t o, std::size_t t) {
  const BpfObject& obj = *run.objects[o];
  const ObjectOnTarget& cell = run.cells[o][t];
  const auto relos = obj.relocations();
  std::vector<FailureRow> rows;
  for (std::size_t i = 0; i < relos.size(); ++i) {
    const CoreResult& r = cell.results[i];
    if (!relocation_fails(run, r, cell.dead[i])) continue;
    const Where w = where(obj, relos[i]);
    rows.push_back({escape(w.program), fmt::format("insn #{}", w.insn_idx), std::string(reloc_kind_name(relos[i].kind)),
                    result_text(r, cell.dead[i]), describe_access(obj, relos[i]), std::string(std::string_view(r.reason))});
  }
  failing_kernel_refs(run, o, t, rows);
  mark_not_counted(run, o, t, rows);
  return rows;
}

std::string failure_sentence(const FailureRow& row) {
  std::string s = row.owner;
  for (const std::string* part : {&row.where, &row.kind, &row.verdict, &row.subject})
    if (!part->empty()) s += " " + *part;
  if (!row.reason.empty()) s += ": " + row.reason;
  return s;
}

void print_failure_rows(const std::vector<FailureRow>& rows, OutputBuffer& out) {
  std::size_t ow = 0, ww = 0, kw = 0, vw = 0;
  for (const FailureRow& r : rows) {
    ow = std::max(ow, r.owner.size());
    ww = std::max(ww, r.where.size());
    kw = std::max(kw, r.kind.size());
    vw = std::max(vw, r.verdict.size());
  }
  for (const FailureRow& r : rows) {
    out.print("  {:<{}}  ", r.owner, ow);
    if (ww) out.print("{:<{}}  ", r.where, ww);  // no instruction column where only kernel references fail
    out.print("{:<{}}  {:<{}}  {}\n", r.kind, kw, r.verdict, vw, r.subject);
    if (!r.reason.empty()) out.print("  {:<{}}  {}\n", "", ow, r.reason);
  }
}

namespace {

// What a table row shows after its program and instruction: the relocation's kind, result, target
// and accessor, and the reason below a failing one. Relocations asking the same question with the same
// outcome show the same, and an agent's tens of thousands of rows ask a few hundred questions: each
// shape is laid out once, and a row is its program, its instruction and a copy of its shape.
struct Shape {
  std::uint32_t question = 0;  // CoreRelocation::question: the local type, access string and kind
  std::uint64_t value = 0, local_value = 0;
  const char* reason = nullptr;  // interned (Reason): one pointer per text; none for an Ok result
  std::uint32_t target = 0;      // ObjectOnTarget::targets
  CoreStatus status = CoreStatus::Ok;
  std::uint8_t local_size = 0, target_size = 0;
  bool dead = false;
  NotCounted not_counted = NotCounted::No;  // a failure in an optional program or an unused alternative
  bool operator==(const Shape&) const = default;
};

struct ShapeHash {
  std::size_t operator()(const Shape& s) const {
    std::uint64_t h = std::uint64_t{s.question} * 0x9e3779b97f4a7c15u;
    h ^= (s.value + (std::uint64_t{s.target} << 32 | static_cast<std::uint32_t>(s.status) << 24 | s.dead)) * 0xc2b2ae3d27d4eb4fu;
    h ^= s.local_value * 0x165667b19e3779f9u;
    return static_cast<std::size_t>(h ^ h >> 29);
  }
};

// Writes `v` in decimal to the bytes that end at `end`, two digits a step (a table's: a division by 100
// instead of two by 10, for the tens of thousands of instruction numbers of an agent's table).
void digits_before(char* end, std::uint32_t v) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  for (; v >= 100; v /= 100) {
    end -= 2;
    std::memcpy(end, kPairs + 2 * (v % 100), 2);
  }
  if (v >= 10)
    std::memcpy(end - 2, kPairs + 2 * v, 2);
  else
    end[-1] = static_cast<char>('0' + v);
}

// A table's working memory, per relocation, question and shape: kept from object to object, so that
// hundreds of objects lay out their tables in the memory of the largest.
struct TableScratch {
  std::vector<std::uint32_t> shape_of;  // per relocation
  std::vector<std::uint32_t> recent;                         // per question
  std::vector<Shape> shapes;
  std::vector<std::uint32_t> first_row, shape_at;  // per shape
  std::unordered_map<std::string_view, std::uint32_t> program_ids;
  std::unordered_map<Shape, std::uint32_t, ShapeHash> shape_ids;
  std::string laid_out;
  // Texts back to back, each found by its (start, length): the programs' escaped names and the rows'
  // leads (per program), the accessors (per question; start kNone until described).
  std::string program_text, lead_text, accessor_text;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> program_span, lead_span, accessor_span;
  static constexpr std::uint32_t kNone = UINT32_MAX;

  // Kept for the next object unless a large object's (spare.h): given back, it leaves the resident set.
  void keep_or_give_back() {
    const std::size_t bytes = capacity_bytes(shape_of) +
                              capacity_bytes(recent) + capacity_bytes(shapes) + capacity_bytes(first_row) +
                              capacity_bytes(shape_at) + (program_ids.size() + shape_ids.size()) * 64 +
                              laid_out.capacity() + program_text.capacity() + lead_text.capacity() +
                              accessor_text.capacity() + capacity_bytes(program_span) + capacity_bytes(lead_span) +
                              capacity_bytes(accessor_span);
    if (bytes > kSpareBytes) *this = TableScratch();
  }
};

std::string_view text_at(const std::string& text, std::pair<std::uint32_t, std::uint32_t> span) {
  return std::string_view(text).substr(span.first, span.second);
}

// Appends `s` to `text` and says where.
std::pair<std::uint32_t, std::uint32_t> append_text(std::string& text, std::string_view s) {
  const auto at = static_cast<std::uint32_t>(text.size());
  text += s;
  return {at, static_cast<std::uint32_t>(s.size())};
}

// Where a table's rows are, relocation after relocation: their program's number and the instruction's
// index in it. Relocations come a function at a time; one in the same function as the last is not
// looked up (move_to says when one is, and the caller numbers its program with named()).
class RowPlace {
 public:
  explicit RowPlace(const BpfObject& obj) : obj_(obj) {}
  // True when `r` is in another function than the last: name() is then its program, to be named().
  bool move_to(const CoreRelocation& r) {
    if (last_ && r.section == section_ && r.insn_off >= last_->offset &&
        r.insn_off < last_->offset + std::max<std::uint64_t>(last_->size, kInsnSize)) {
      insn_ = static_cast<std::uint32_t>((r.insn_off - last_->offset) / kInsnSize);
      return false;
    }
    const Where w = where(obj_, r);
    name_ = w.program;
    insn_ = static_cast<std::uint32_t>(w.insn_idx);  // an offset in 32 bits, over 8
    last_ = obj_.function_of(r);
    section_ = r.section;
    return true;
  }
  std::string_view name() const { return name_; }
  void named(std::uint32_t program) { program_ = program; }
  std::uint32_t program() const { return program_; }
  std::uint32_t insn() const { return insn_; }

 private:
  const BpfObject& obj_;
  const BpfFunction* last_ = nullptr;
  std::uint32_t section_ = 0, program_ = 0, insn_ = 0;
  std::string_view name_;
};

// Object `o` of `run` on its one target, every relocation a row (only the failing ones with
// `failures_only`); `shown` is the object's name in the report.
void table_object(const CheckRun& run, std::size_t o, const std::string& shown, const std::string& kernel,
                  bool failures_only, TableScratch& scratch, OutputBuffer& out) {
    const BpfObject& obj = *run.objects[o];
    const ObjectOnTarget& cell = run.cells[o][0];
    if (failures_only && matrix_cell(run, o, 0).failing == 0) return;
    out.print("{} on {}\n", shown, kernel);
    if (const auto note = nothing_to_do(obj); !note.empty()) {
      out.print("  {}\n", note);
      print_kernel_refs(run, o, shown, failures_only, out);
      print_program_roles(run, o, shown, failures_only, out);
      out.put('\n');
      return;
    }
    // Each listed row's shape; programs are named once each. A row's program and instruction are
    // found again when it is printed (RowPlace) rather than kept: an agent's would be 8 bytes a row.
    const auto relos = obj.relocations();
    const ProgramOutcomes outcomes = program_outcomes(run, o, 0);
    constexpr std::uint32_t kNotListed = UINT32_MAX;
    auto& [shape_of, recent, shapes, first_row, shape_at, program_ids, shape_ids, laid_out, program_text, lead_text,
           accessor_text, program_span, lead_span, accessor_span] = scratch;
    shape_of.assign(relos.size(), kNotListed);
    program_text.clear(), program_span.clear();
    // Captured by name: clang 14 cannot capture a structured binding.
    auto program = [&text = program_text, &span = program_span](std::uint32_t k) { return text_at(text, span[k]); };
    program_ids.clear();
    shapes.clear();
    first_row.clear();  // of each shape
    shape_ids.clear();
    // The shape last seen for each question, tried before the map: a question's rows mostly share one.
    recent.assign(obj.question_count(), kNotListed);
    std::size_t pw = 7;
    RowPlace place(obj);
    for (std::size_t i = 0; i < relos.size(); ++i) {
      const CoreRelocation& r = relos[i];
      if (place.move_to(r)) {
        auto [p, new_program] = program_ids.try_emplace(place.name(), static_cast<std::uint32_t>(program_span.size()));
        if (new_program) program_span.push_back(append_text(program_text, escape(p->first)));
        place.named(p->second);
      }
      const CoreResult& result = cell.results[i];
      if (failures_only && !relocation_fails(run, result, cell.dead[i])) continue;
      pw = std::max(pw, program(place.program()).size());
      Shape s;
      s.question = r.question;
      s.value = result.value;
      s.local_value = result.local_value;
      if (result.status != CoreStatus::Ok) s.reason = std::string_view(result.reason).data();
      s.target = cell.targets[i];
      s.status = result.status;
      s.local_size = result.local_size;
      s.target_size = result.target_size;
      s.dead = cell.dead[i];
      s.not_counted = outcomes.relocation(i);
      std::uint32_t& seen = recent[r.question];
      if (seen == kNotListed || !(shapes[seen] == s)) {
        auto [it, fresh] = shape_ids.try_emplace(s, static_cast<std::uint32_t>(shapes.size()));
        if (fresh) {
          shapes.push_back(s);
          first_row.push_back(static_cast<std::uint32_t>(i));
        }
        seen = it->second;
      }
      shape_of[i] = seen;
    }

    // The shapes' columns, as wide as their widest cell (a target at most 40: a longer one pushes only
    // the accessor), then each shape laid out once, from the first row that has it. Escaped names are
    // ASCII: padded by their length, not by counting code points.
    ResultText text;
    std::size_t rw = 6, tw = 6;
    auto shown_result = [&](const Shape& s, std::size_t row) -> std::string {
      const std::string_view plain = result_text(cell.results[row], s.dead, text);
      return s.not_counted == NotCounted::No ? std::string(plain) : not_counted_text(plain, s.not_counted);
    };
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      rw = std::max(rw, shown_result(shapes[k], first_row[k]).size());
      if (shapes[k].target != 0) tw = std::max(tw, cell.target_names[shapes[k].target].size());
    }
    tw = std::min<std::size_t>(tw, 40);
    laid_out.clear();
    accessor_text.clear();
    accessor_span.assign(obj.question_count(), {TableScratch::kNone, 0});
    shape_at.assign(shapes.size() + 1, 0);
    auto pad = [](std::string& to, std::string_view s, std::size_t width) {
      to += s;
      if (s.size() < width) to.append(width - s.size(), ' ');
    };
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      const Shape& s = shapes[k];
      shape_at[k] = static_cast<std::uint32_t>(laid_out.size());
      const CoreRelocation& asked = relos[first_row[k]];
      pad(laid_out, reloc_kind_name(asked.kind), 14);
      laid_out += "  ";
      pad(laid_out, shown_result(s, first_row[k]), rw);
      laid_out += "  ";
      pad(laid_out, s.target == 0 ? std::string_view("-") : cell.target_names[s.target], tw);
      laid_out += "  ";
      auto& accessor = accessor_span[s.question];
      if (accessor.first == TableScratch::kNone) accessor = append_text(accessor_text, describe_access(obj, asked));
      laid_out += text_at(accessor_text, accessor);
      laid_out += '\n';
      if (s.reason && *s.reason) {
        laid_out.append(pw + 11, ' ');
        laid_out += std::string_view(s.reason);
        laid_out += '\n';
      }
    }
    shape_at[shapes.size()] = static_cast<std::uint32_t>(laid_out.size());

    // Each program's cells before the instruction's digits, padded: a row copies it whole.
    lead_text.clear(), lead_span.clear();
    for (std::uint32_t k = 0; k < program_span.size(); ++k) {
      const auto at = static_cast<std::uint32_t>(lead_text.size());
      lead_text += "  ";
      pad(lead_text, program(k), pw + 7);
      lead_span.emplace_back(at, static_cast<std::uint32_t>(lead_text.size() - at));
    }
    bool header = false;
    RowPlace again(obj);
    for (std::size_t i = 0; i < relos.size(); ++i) {
      if (again.move_to(relos[i])) again.named(program_ids.find(again.name())->second);
      if (shape_of[i] == kNotListed) continue;
      if (!header) {
        std::string head = "  ";
        pad(head, "PROGRAM", pw);
        head += "   INSN  KIND            ";
        pad(head, "RESULT", rw);
        head += "  ";
        pad(head, "TARGET", tw);
        head += "  ACCESSOR\n";
        out.write(head);
        header = true;
      }
      // The row laid out in place at the end of the output buffer: no call into the formatter or the
      // buffer per cell, for tables of tens of thousands of rows.
      const std::string_view row_lead = text_at(lead_text, lead_span[again.program()]);
      const std::string_view tail(laid_out.data() + shape_at[shape_of[i]], shape_at[shape_of[i] + 1] - shape_at[shape_of[i]]);
      fmt::memory_buffer& buf = out.buffer();
      const std::size_t at = buf.size();
      buf.resize(at + row_lead.size() + 2 + 10 + tail.size());  // an instruction of up to ten digits
      char* p = buf.data() + at;
      std::memcpy(p, row_lead.data(), row_lead.size());
      p += row_lead.size();
      // Right-aligned in five columns, or longer.
      if (const std::uint32_t insn = again.insn(); insn < 100000) {
        digits_before(p, insn);
      } else {
        p = std::to_chars(p - 5, p + 10, insn).ptr;
      }
      p[0] = ' ', p[1] = ' ';
      std::memcpy(p + 2, tail.data(), tail.size());
      buf.resize(static_cast<std::size_t>(p + 2 + tail.size() - buf.data()));
      out.flush_if_needed();
    }
    out.print("{}: {} relocations: {}\n", shown, relos.size(), summary(cell.counts));
    print_kernel_refs(run, o, shown, failures_only, out);
    print_program_roles(run, o, shown, failures_only, out);
    out.put('\n');
}

}  // namespace

struct CheckPrinter::State {
  CheckView view;
  Names names;
  std::vector<std::string> targets;
  bool strict = false;
  OutputBuffer& out;

  // What outlives an object: its counts, and the failures of formats that list them at the end.
  std::size_t failing_pairs = 0, failing_objects = 0;
  std::size_t not_counted = 0;          // failures in optional programs or unused alternatives, every pair's
  std::vector<std::size_t> failing_on;  // per target, how many objects fail there
  std::optional<MatrixTable> matrix;   // a table of several kernels
  std::optional<Spool> spool;          // JSON's records
  std::optional<JsonWriter> spool_json;
  std::vector<std::string> junit;  // per target, its test cases
  TableScratch table;              // a one-kernel table's working memory
  std::string summary_rows;        // the step summary's table rows, the first kMaxSummaryRows
  std::size_t summary_count = 0;

  State(const CheckView& v, std::span<const std::string> paths, std::vector<std::string> t, bool s, OutputBuffer& o)
      : view(v), names(shown_names(paths, t)), targets(std::move(t)), strict(s), out(o), failing_on(targets.size()) {}

  bool matrix_table() const { return view.format == CheckFormat::Table && targets.size() > 1; }

  // "171 objects x 1 kernel: 12 fail", "171 objects x 6 kernels: 12 objects fail (17 of 1026 object/kernel
  // pairs)".
  std::string verdict() const {
    const std::size_t objects = names.objects.size(), kernels = targets.size();
    const std::string lead = fmt::format("{} x {}: ", plural(objects, "object"), plural(kernels, "kernel"));
    if (kernels == 1) return lead + fmt::format("{} fail", failing_pairs) + not_counted_note(not_counted);
    return lead + fmt::format("{} {} ({} of {} object/kernel pairs)", plural(failing_objects, "object"),
                              failing_objects == 1 ? "fails" : "fail", failing_pairs, objects * kernels) +
           not_counted_note(not_counted);
  }
};

CheckPrinter::CheckPrinter(const CheckView& view, std::span<const std::string> object_paths,
                           std::vector<std::string> targets, bool strict, OutputBuffer& out)
    : s_(std::make_unique<State>(view, object_paths, std::move(targets), strict, out)) {
  State& st = *s_;
  if (st.matrix_table()) st.matrix.emplace(st.names.kernels, st.names.legend);
  if (view.format == CheckFormat::Json) {
    st.spool.emplace();
    st.spool_json.emplace(st.spool->out());
    st.spool_json->begin_array();
  }
  if (view.format == CheckFormat::Junit) st.junit.resize(st.targets.size());
}

CheckPrinter::~CheckPrinter() = default;

bool CheckPrinter::failed() const { return s_->failing_pairs != 0; }

void CheckPrinter::object(const CheckRun& run, std::size_t o, std::size_t g) {
  State& st = *s_;
  const std::size_t kernels = st.targets.size();
  const std::string& shown = st.names.objects[g];
  std::vector<MatrixCell> cells;
  bool fails = false;
  for (std::size_t t = 0; t < kernels; ++t) {
    cells.push_back(matrix_cell(run, o, t));
    st.not_counted += cells.back().not_counted;
    if (cells.back().failing == 0) continue;
    fails = true;
    ++st.failing_pairs;
    ++st.failing_on[t];
  }
  st.failing_objects += fails;
  const bool failures_only = st.view.failures_only;
  switch (st.view.format) {
    case CheckFormat::Table:
      if (kernels == 1) {
        table_object(run, o, shown, st.names.kernels[0], failures_only, st.table, st.out);
        st.table.keep_or_give_back();

        return;
      }
      if (failures_only && !fails) return;
      st.matrix->object(run, o, g, shown, std::move(cells));
      return;
    case CheckFormat::Json:
      if (!failures_only || fails) json_object(*st.spool_json, run, o);
      return;
    case CheckFormat::Github: {
      // An ::error annotation on the object for each kernel it fails on, its failures that count one per
      // line, and the step summary's row; on several kernels, one for each set of kernels its failures
      // share. Failures in optional programs or unused alternatives are not annotated.
      auto annotate = [&](std::vector<FailureRow> failing, const std::string& where, const std::string& title,
                          const std::string& kernel_cell) {
        std::erase_if(failing, [](const FailureRow& row) { return !row.counted; });
        if (failing.empty()) return;
        std::string text = fmt::format("{} {}: {} failing", shown, where, failing.size());
        for (const FailureRow& row : failing) {
          text += '\n';
          text += failure_sentence(row);
        }
        st.out.print("::error file={},title={}::{}\n", github_property(escape(run.objects[o]->path())),
                     github_property(fmt::format("btfslim check: {} fails on {}", shown, title)), github_data(text));
        if (st.summary_count++ < kMaxSummaryRows)
          st.summary_rows += fmt::format("| :x: | {} | {} | {} | {} |\n", markdown_cell(shown), markdown_cell(kernel_cell),
                                         failing.size(),
                                         failing.empty() ? "" : markdown_cell(failure_sentence(failing.front())));
      };
      if (kernels == 1) {
        const std::string& kernel = st.names.kernels[0];
        if (cells[0].failing != 0) annotate(failure_rows(run, o, 0), "on " + kernel, kernel, kernel);
        return;
      }
      // The title names how many kernels; the message and the summary which.
      for (const FailureGroup& group : failure_groups(run, o)) {
        const std::string phrase = kernels_phrase(group.kernels, st.names.kernels);
        annotate(group.rows, "fails on " + phrase, phrase.substr(0, phrase.find(':')), phrase);
      }
      return;
    }
    case CheckFormat::Junit:
      // A <testcase> per object (per failing one with `failures_only`), a <failure> where it fails.
      for (std::size_t t = 0; t < kernels; ++t) {
        if (failures_only && cells[t].failing == 0) continue;
        std::string& to = st.junit[t];
        to += fmt::format("    <testcase classname=\"btfslim.check\" name=\"{}\" file=\"{}\"", xml_text(shown),
                          xml_text(escape(run.objects[o]->path())));
        if (cells[t].failing == 0) {  // failures in optional programs or unused alternatives pass
          to += "/>\n";
          continue;
        }
        const std::vector<FailureRow> failing = failure_rows(run, o, t);
        std::string detail;
        for (const FailureRow& row : failing) detail += failure_sentence(row) + "\n";
        to += fmt::format(">\n      <failure type=\"check failed\" message=\"{}\">{}</failure>\n    </testcase>\n",
                          xml_text(fmt::format("{} on {}: {} failing", shown, st.names.kernels[t], cells[t].failing)),
                          xml_text(detail));
      }
      return;
  }
}

void CheckPrinter::finish() {
  State& st = *s_;
  OutputBuffer& out = st.out;
  const std::size_t kernels = st.targets.size();
  switch (st.view.format) {
    case CheckFormat::Table:
      if (st.matrix) st.matrix->print(st.names.objects, out);
      out.print("{}\n", st.verdict());
      return;
    case CheckFormat::Json: {
      JsonWriter j(out);
      j.begin_object();
      j.field("object_count", std::uint64_t{st.names.objects.size()});
      j.field("kernel_count", std::uint64_t{kernels});
      j.field("failure_count", std::uint64_t{st.failing_pairs});
      j.field("failing_object_count", std::uint64_t{st.failing_objects});
      j.field("optional_failure_count", std::uint64_t{st.not_counted});
      j.field("failed", failed());
      j.key("kernels");
      j.begin_array();
      for (std::size_t t = 0; t < kernels; ++t) {
        j.begin_object();
        j.field("file", st.targets[t]);
        j.field("short_name", st.names.kernels_raw[t]);
        j.key("release");
        if (const std::string_view release = kernel_release(st.targets[t]); !release.empty())
          j.value(release);
        else
          j.value(nullptr);
        j.field("failure_count", std::uint64_t{st.failing_on[t]});
        j.end_object();
      }
      j.end_array();
      j.key("objects");
      st.spool_json->end_array();
      j.value_follows();
      st.spool->copy_to(out);
      j.field("summary", st.verdict());
      j.end_object();
      j.finish();
      return;
    }
    case CheckFormat::Github:
      out.print("btfslim check: {}\n", st.verdict());
      return;
    case CheckFormat::Junit: {
      const std::size_t objects = st.names.objects.size();
      out.write("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
      out.print("<testsuites name=\"btfslim check\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                st.view.failures_only ? st.failing_pairs : objects * kernels, st.failing_pairs);
      for (std::size_t t = 0; t < kernels; ++t) {
        out.print("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                  xml_text(escape(st.targets[t])), st.view.failures_only ? st.failing_on[t] : objects, st.failing_on[t]);
        out.write(st.junit[t]);
        out.write("  </testsuite>\n");
      }
      out.write("</testsuites>\n");
      return;
    }
  }
}

std::string CheckPrinter::markdown_summary() const {
  const State& st = *s_;
  std::string s = fmt::format("### btfslim check: {}\n\n", markdown_cell(st.verdict()));
  if (st.summary_count) s += "| | Object | Kernel | Failing | First failure |\n|:-:|---|---|--:|---|\n" + st.summary_rows;
  if (st.summary_count > kMaxSummaryRows)
    s += fmt::format("\n{} more {}: the job's log lists them all.\n", st.summary_count - kMaxSummaryRows,
                     st.targets.size() == 1 ? "object/kernel pairs fail" : "rows");
  return s + "\n";
}

std::string describe_targets(const CoreResult& r) {
  std::string s;
  for (const TargetSpec& m : r.matches) {
    if (!s.empty()) s += ", ";
    const std::uint32_t off = m.root ? m.btf->type(m.root).name_off() : 0;
    s += fmt::format("[{}]", m.root);
    if (off) s += fmt::format(" {}", esc(m.btf->str(off)));
  }
  return s;
}

void mark_reachability(ObjectOnTarget& cell, const BpfCode* code) {
  cell.dead.assign(cell.results.size(), false);
  cell.reached_from.clear();
  if (!code) return;
  const Reachability reach = reachability(*code, cell.results);
  for (std::size_t i = 0; i < cell.results.size(); ++i) cell.dead[i] = !reach.reached[i];
  for (std::size_t p = 0; p < reach.programs.size(); ++p)
    for (const std::uint32_t i : reach.programs[p].relocations)
      if (cell.results[i].status == CoreStatus::Poisoned) {
        auto it = std::lower_bound(cell.reached_from.begin(), cell.reached_from.end(), std::size_t{i},
                                   [](const auto& entry, std::size_t k) { return entry.first < k; });
        if (it == cell.reached_from.end() || it->first != i) it = cell.reached_from.insert(it, {i, {}});
        it->second.push_back(code->programs()[p].name);
      }
}

void count_outcomes(ObjectOnTarget& cell, bool strict) {
  ObjectOnTarget::Counts& t = cell.counts;
  t = {};
  for (std::size_t i = 0; i < cell.results.size(); ++i) {
    const CoreResult& r = cell.results[i];
    switch (r.status) {
      case CoreStatus::Ok:
        ++t.ok;
        continue;  // fails nothing
      case CoreStatus::Poisoned:
        ++(cell.dead[i] ? t.dead : t.poisoned);
        break;
      case CoreStatus::Ambiguous:
        ++t.ambiguous;
        break;
      case CoreStatus::Error:
        ++t.error;
        break;
    }
    if (relocation_fails(strict, r, cell.dead[i])) ++t.failing;
  }
}

}  // namespace btfslim
