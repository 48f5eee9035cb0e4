// Parsing and validating one BTF blob.
//
// Everything a later reader relies on is checked here, once, with 64-bit arithmetic so that no sum of
// 32-bit fields can wrap: the header, that both sections lie inside the blob without overlapping, that
// the string section ends in NUL, that each record's trailing data fits, that every kind is known, and
// that every name offset and type id a record holds is in range. After that, `TypeView` and `str()`
// read without checks. Reference *loops* are legal to encode and are left to the code that walks them.
//
// The checks ride on the one pass that indexes the records (where each starts, by id), which every
// command pays for: a kernel's 126,000 records take a millisecond. Where a record starts is only known
// from the one before, so a section of a megabyte or more is cut into chunks at guessed record starts,
// and a second thread indexes chunks from the back while this one goes from the front. A guess stands
// only when the records before it land exactly on it; a chunk read from a wrong one is read again, so the
// result, errors and their messages included, is the one a single pass gives.
//
// Split BTF is also checked against its base. Read on a base other than the one it was built on, it
// still parses: its ids and string offsets are only numbers, and in a larger base most of them land
// somewhere. What gives it away, cheaply, is a name below the base's string size that does not start
// one of the base's strings (pahole and libbpf only ever point at whole strings, and share none by
// suffix), or a type id past the last type. Either is refused as a base that does not fit, in one
// line that says to pass the right one.
#include "btfslim/btf.h"

#include "btfslim/error.h"
#include "btfslim/parallel.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <optional>

namespace btfslim {
namespace {

constexpr std::array<std::string_view, kMaxKind + 1> kKindNames = {
    "UNKNOWN", "INT",   "PTR",      "ARRAY",    "STRUCT",     "UNION", "ENUM",
    "FWD",     "TYPEDEF", "VOLATILE", "CONST",  "RESTRICT",   "FUNC",  "FUNC_PROTO",
    "VAR",     "DATASEC", "FLOAT",    "DECL_TAG", "TYPE_TAG", "ENUM64",
};

}  // namespace

std::string_view kind_name(Kind kind) {
  auto k = static_cast<unsigned>(kind);
  return k <= kMaxKind ? kKindNames[k] : std::string_view("UNKNOWN");
}

std::optional<Kind> parse_kind(std::string_view name) {
  for (unsigned k = 1; k <= kMaxKind; ++k) {
    std::string_view want = kKindNames[k];
    if (want.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      char c = name[i];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (c == '-') c = '_';
      same = c == want[i];
    }
    if (same) return static_cast<Kind>(k);
  }
  return std::nullopt;
}

bool Btf::big_endian() const {
  const bool host_big = std::endian::native == std::endian::big;
  return order_.swapped() != host_big;
}

std::string_view Btf::str(std::uint32_t off) const {
  if (off < string_base_) return base_->str(off);
  const char* s = reinterpret_cast<const char*>(strings_.data()) + (off - string_base_);
  return std::string_view(s);
}

std::shared_ptr<const Btf> Btf::parse(std::string name, std::shared_ptr<const void> owner,
                                      std::span<const std::uint8_t> bytes, std::shared_ptr<const Btf> base,
                                      RecordNames* names) {
  std::shared_ptr<Btf> btf(new Btf());
  btf->name_ = std::move(name);
  btf->owner_ = std::move(owner);
  btf->base_ = std::move(base);
  btf->bytes_ = bytes;
  if (btf->base_) {
    btf->first_id_ = btf->base_->end_id();
    btf->string_base_ = btf->base_->string_end();
  }
  btf->parse_header();
  // Indexing notes the largest name offset and type id any record holds; only when one is out of range
  // does the slower walk run, to name the first offending record.
  const auto [max_name, max_ref] = btf->index_types(names);
  if (btf->base_) btf->check_fits_base(max_name, max_ref);
  if (max_name >= btf->string_end() || max_ref >= btf->end_id())
    for (TypeId id = btf->first_id_; id < btf->end_id(); ++id) btf->check_references(id, btf->type(id));
  return btf;
}

void Btf::parse_header() {
  const auto size = static_cast<std::uint64_t>(bytes_.size());
  if (size == 0) fail(name_, "empty file");
  if (size < 4) fail(name_, "truncated: {} bytes, too short for a BTF header", size);
  const std::uint8_t* p = bytes_.data();
  std::uint16_t magic;
  std::memcpy(&magic, p, 2);
  if (magic == kBtfMagic) {
    order_ = ByteOrder(false);
  } else if (__builtin_bswap16(magic) == kBtfMagic) {
    order_ = ByteOrder(true);
  } else {
    fail(name_, "not BTF: bad magic 0x{:02x}{:02x} (expected 0xeb9f in either byte order)", p[0], p[1]);
  }
  header_.magic = kBtfMagic;
  header_.version = p[2];
  header_.flags = p[3];
  if (header_.version != 1) fail(name_, "unsupported BTF version {} (only version 1 exists)", header_.version);
  if (size < 8) fail(name_, "truncated: {} bytes, too short for a BTF header", size);
  header_.hdr_len = order_.u32(p + 4);
  if (header_.hdr_len < kHeaderSize)
    fail(name_, "header length {} is smaller than the {} bytes of a BTF header", header_.hdr_len, kHeaderSize);
  if (header_.hdr_len > size)
    fail(name_, "truncated: header length {} exceeds the {} bytes available", header_.hdr_len, size);
  header_.type_off = order_.u32(p + 8);
  header_.type_len = order_.u32(p + 12);
  header_.str_off = order_.u32(p + 16);
  header_.str_len = order_.u32(p + 20);
  // Records are read as 4-byte words from where the type section starts: the kernel ("Unaligned
  // type_off") and libbpf refuse a type section that does not start on a multiple of 4.
  if (header_.type_off % 4 != 0) fail(name_, "type section offset {} is not a multiple of 4", header_.type_off);

  const std::uint64_t t0 = std::uint64_t{header_.hdr_len} + header_.type_off;
  const std::uint64_t t1 = t0 + header_.type_len;
  const std::uint64_t s0 = std::uint64_t{header_.hdr_len} + header_.str_off;
  const std::uint64_t s1 = s0 + header_.str_len;
  if (t1 > size)
    fail(name_, "truncated: type section [{}, {}) ends past the {} bytes available", t0, t1, size);
  if (s1 > size)
    fail(name_, "truncated: string section [{}, {}) ends past the {} bytes available", s0, s1, size);
  if (header_.type_len && header_.str_len && t0 < s1 && s0 < t1)
    fail(name_, "type section [{}, {}) and string section [{}, {}) overlap", t0, t1, s0, s1);
  types_ = bytes_.subspan(t0, header_.type_len);
  strings_ = bytes_.subspan(s0, header_.str_len);

  if (strings_.empty()) {
    if (!base_)
      fail(name_, "string section is empty (even the empty name needs one NUL byte); is this split BTF? pass --base");
  } else {
    if (strings_.back() != 0) fail(name_, "string section does not end in a NUL byte");
    if (!base_ && strings_.front() != 0)
      fail(name_, "string section does not start with the empty string; is this split BTF? pass --base");
  }
  if (std::uint64_t{string_base_} + strings_.size() > 0xffffffffu)
    fail(name_, "string section too large: {} bytes on a base of {}", strings_.size(), string_base_);
}

namespace {

// The larger of a and b without a branch: pahole writes strings and types in about the order the
// records name them, so whether the next offset or id is a new maximum follows no pattern a branch
// predictor learns (on vmlinux, half of the index pass's mispredicted branches were std::max's).
inline std::uint32_t branchless_max(std::uint32_t a, std::uint32_t b) {
#if defined(__x86_64__) || defined(__i386__)
  // GCC turns every portable spelling of this back into a branch, or into more work than it saves.
  asm("cmpl %1, %0\n\tcmovbl %1, %0" : "+r"(a) : "r"(b) : "cc");
  return a;
#else
  return b > a ? b : a;
#endif
}

// Where a record's names and type ids are, as for_each_field() visits them, for index_records() to
// read without a switch: its name (always), the type id in its header's third word (`header_ref`
// masks it in), and `entries` (or vlen) entries of `stride` bytes past the header, each with a name at
// its start (`name` masks it in) and a type id at `ref_at` (`ref` masks it in). An array's two type ids
// are two entries of four bytes.
struct FieldLayout {
  std::uint32_t header_ref = 0, name = 0, ref = 0;
  std::uint8_t stride = 0, ref_at = 0, entries = 0;
  bool per_vlen = false;
};

constexpr std::array<FieldLayout, 32> kFieldLayout = [] {
  std::array<FieldLayout, 32> t{};
  constexpr std::uint32_t all = 0xffffffffu;
  for (const Kind k : {Kind::Ptr, Kind::Typedef, Kind::Volatile, Kind::Const, Kind::Restrict, Kind::Func, Kind::Var,
                       Kind::TypeTag, Kind::DeclTag, Kind::FuncProto})
    t[static_cast<unsigned>(k)].header_ref = all;
  t[static_cast<unsigned>(Kind::Array)] = {0, 0, all, 4, 0, 2, false};
  t[static_cast<unsigned>(Kind::Struct)] = {0, all, all, 12, 4, 0, true};
  t[static_cast<unsigned>(Kind::Union)] = {0, all, all, 12, 4, 0, true};
  t[static_cast<unsigned>(Kind::Enum)] = {0, all, 0, 8, 0, 0, true};
  t[static_cast<unsigned>(Kind::Enum64)] = {0, all, 0, 12, 0, 0, true};
  t[static_cast<unsigned>(Kind::FuncProto)] = {all, all, all, 8, 4, 0, true};
  t[static_cast<unsigned>(Kind::Datasec)] = {0, 0, all, 12, 0, 0, true};
  return t;
}();

// Whether the table puts names and type ids where for_each_field() does, for every kind, with no
// entries and with some: a field it left out would go unchecked.
constexpr bool field_layout_is_for_each_field() {
  for (unsigned k = 1; k <= kMaxKind; ++k) {
    for (const unsigned vlen : {0u, 3u}) {
      std::array<bool, 16> names{}, refs{}, table_names{}, table_refs{};  // by 4-byte word of the record
      for_each_field(
          std::uint32_t{k} << 24 | vlen, [&](std::uint32_t at, NameRole) { names[at / 4] = true; },
          [&](std::uint32_t at, RefRole) { refs[at / 4] = true; });
      const FieldLayout& l = kFieldLayout[k];
      table_names[0] = true;
      if (l.header_ref) table_refs[2] = true;
      const unsigned count = l.per_vlen ? vlen : l.entries;
      for (unsigned i = 0; i < count; ++i) {
        const unsigned at = kTypeHeaderSize + i * l.stride;
        if (l.name) table_names[at / 4] = true;
        if (l.ref) table_refs[(at + l.ref_at) / 4] = true;
      }
      if (names != table_names || refs != table_refs) return false;
    }
  }
  return true;
}
static_assert(field_layout_is_for_each_field(), "kFieldLayout puts a name or type id elsewhere than for_each_field()");

// Each record's size from its kind and vlen, by a test of a bit each rather than a table and a
// multiply: from one record's header to the next's is a chain of dependent steps that bounds the index
// pass, and a load and a multiply were most of its length. An unknown kind is told apart only on the
// way to the error.
constexpr std::uint32_t kinds_where(bool (*has)(TrailingLayout)) {
  std::uint32_t mask = 0;
  for (unsigned k = 1; k <= kMaxKind; ++k)
    if (has(kTrailing[k])) mask |= 1u << k;
  return mask;
}
constexpr std::uint32_t kKnown = kinds_where([](TrailingLayout) { return true; });
constexpr std::uint32_t kEntries8 = kinds_where([](TrailingLayout l) { return l.per_entry == 8; });
constexpr std::uint32_t kEntries12 = kinds_where([](TrailingLayout l) { return l.per_entry == 12; });
constexpr std::uint32_t kFixed4 = kinds_where([](TrailingLayout l) { return l.fixed == 4; });
constexpr std::uint32_t kFixed12 = kinds_where([](TrailingLayout l) { return l.fixed == 12; });
static_assert(kinds_where([](TrailingLayout l) {
                return (l.per_entry != 0 && l.per_entry != 8 && l.per_entry != 12) || (l.fixed != 0 && l.fixed != 4 && l.fixed != 12);
              }) == 0, "a record layout the size test below does not know");

[[gnu::always_inline]] inline std::uint64_t trailing_bytes(unsigned kind, unsigned vlen) {
  std::uint64_t trailing = kEntries12 >> kind & 1 ? std::uint64_t{vlen} * 12 : 0;
  trailing = kEntries8 >> kind & 1 ? std::uint64_t{vlen} * 8 : trailing;
  trailing += kFixed4 >> kind & 1 ? 4 : 0;
  trailing += kFixed12 >> kind & 1 ? 12 : 0;
  return trailing;
}

// The error for the record at `off` that has an unknown kind or does not fit, as type [id].
template <bool Swapped>
[[noreturn]] void fail_record(const std::string& name, std::span<const std::uint8_t> types, std::uint32_t off, TypeId id) {
  constexpr ByteOrder order(Swapped);
  const auto len = static_cast<std::uint32_t>(types.size());
  if (len - off < kTypeHeaderSize)
    fail(name, "truncated: type [{}] at type-section offset {} needs {} bytes, {} left", id, off, kTypeHeaderSize,
         len - off);
  const std::uint32_t info = order.u32(types.data() + off + 4);
  const unsigned k = (info >> 24) & 0x1f;
  const unsigned vlen = info & 0xffff;
  if (k == 0 || k > kMaxKind) fail(name, "type [{}] has unknown kind {} (known kinds are 1..{})", id, k, kMaxKind);
  fail(name, "truncated: type [{}] {} with vlen {} needs {} bytes at type-section offset {}, {} left", id,
       kind_name(static_cast<Kind>(k)), vlen, kTypeHeaderSize + trailing_bytes(k, vlen), off, len - off);
}

// The index pass from the record at `off`: indexes records (their offsets to `out`, their largest
// name offset and type id to the maxima, and with Collect their names to `names`) until one starts at
// or past `until`, `out` reaches `stop`, fewer bytes than a header are left, or a record has an unknown
// kind or does not fit. Returns where it stopped, for the caller to tell which.
template <bool Swapped, bool Collect>
std::uint32_t scan_records(std::span<const std::uint8_t> types, std::uint32_t off, std::uint32_t until,
                           std::uint32_t*& out, std::uint32_t* stop, std::uint32_t& max_name, TypeId& max_ref,
                           RecordNames::Writer* names) {
  constexpr ByteOrder order(Swapped);
  const auto len = static_cast<std::uint32_t>(types.size());
  // In locals, for the reason RecordNames::Writer gives.
  std::uint32_t* o = out;
  std::uint32_t most_name = max_name;
  TypeId most_ref = max_ref;
  RecordNames::Writer writer;
  if constexpr (Collect) writer = *names;
  while (off < until && len - off >= kTypeHeaderSize && o != stop) {
    const std::uint8_t* p = types.data() + off;
    const std::uint32_t info = order.u32(p + 4);
    const unsigned k = (info >> 24) & 0x1f;
    const unsigned vlen = info & 0xffff;
    const std::uint64_t trailing = trailing_bytes(k, vlen);
    const std::uint64_t end = std::uint64_t{off} + kTypeHeaderSize + trailing;
    if (end > len || !(kKnown >> k & 1)) break;
    if constexpr (Collect) {
      writer.record(k, static_cast<std::uint32_t>(kTypeHeaderSize + trailing));
      for_each_field(
          info,
          [&](std::uint32_t at, NameRole) {
            const std::uint32_t name_off = order.u32(p + at);
            most_name = branchless_max(most_name, name_off);
            writer.name(name_off);
          },
          [&](std::uint32_t at, RefRole) { most_ref = branchless_max(most_ref, order.u32(p + at)); });
    } else {
      // The fields for_each_field() visits, by tables instead of its switch: which kind comes next
      // follows no pattern a branch predictor learns, and a mispredicted jump cost more than the loads.
      // A field that is neither name nor type is read and masked off.
      const FieldLayout& l = kFieldLayout[k];
      most_name = branchless_max(most_name, order.u32(p));
      most_ref = branchless_max(most_ref, order.u32(p + 8) & l.header_ref);
      const unsigned count = l.per_vlen ? vlen : l.entries;
      const std::uint8_t* e = p + kTypeHeaderSize;
      for (unsigned i = 0; i < count; ++i, e += l.stride) {
        most_name = branchless_max(most_name, order.u32(e) & l.name);
        most_ref = branchless_max(most_ref, order.u32(e + l.ref_at) & l.ref);
      }
    }
    *o++ = off;
    off = static_cast<std::uint32_t>(end);
  }
  out = o;
  max_name = most_name;
  max_ref = most_ref;
  if constexpr (Collect) *names = writer;
  return off;
}

// Btf::allow_second_thread's switch.
std::atomic<bool> second_thread_allowed{true};

// A type section this large is indexed from both ends at once, in chunks: this thread takes them from
// the front and a second thread from the back, each the next one nobody has taken, until they meet. A
// kernel's (3 MB) takes 1.0 ms on one thread, 0.6 on two. Chunks rather than halves, because the second
// thread starts some 50 us late here, and later on a busy machine: it then takes fewer chunks, and
// this thread never waits for more than the one that one is reading. Below this size, starting it
// costs more than it saves.
constexpr std::uint32_t kSplitFrom = 1u << 20;

// Where a record starts near `at`, for a chunk's start: the first offset from `at` on (in steps of 4,
// for at most 4 KiB) from which 8 records in a row have a known kind, no bits set in their info word
// that BTF leaves unused, and fit. Only a guess: a chunk read from it stands when the records before
// it land on it, and is read again otherwise. Eight, not more: each guess reads memory nothing has read
// yet.
constexpr int kGuessRecords = 8;
template <bool Swapped>
std::optional<std::uint32_t> guess_record_start(std::span<const std::uint8_t> types, std::uint32_t at) {
  constexpr ByteOrder order(Swapped);
  constexpr std::uint32_t kUnusedInfoBits = 0x60ff0000u;
  const auto len = static_cast<std::uint32_t>(types.size());
  for (std::uint32_t from = at & ~3u; from < at + 4096 && from < len; from += 4) {
    std::uint32_t off = from;
    int records = 0;
    for (; records < kGuessRecords && len - off >= kTypeHeaderSize; ++records) {
      const std::uint32_t info = order.u32(types.data() + off + 4);
      const unsigned k = (info >> 24) & 0x1f;
      const std::uint64_t end = std::uint64_t{off} + kTypeHeaderSize + trailing_bytes(k, info & 0xffff);
      if ((info & kUnusedInfoBits) || !(kKnown >> k & 1) || end > len) break;
      off = static_cast<std::uint32_t>(end);
    }
    if (records == kGuessRecords) return from;
  }
  return std::nullopt;
}

// The chunks of a type section indexed from both ends, and what the thread from the back read. The
// offsets' array is sized for the records a section has on average (see index_records), not for the
// most it could hold, so neither thread knows where the other's records go: each takes room as it
// goes, under one lock, taken once per chunk. The front takes, before a chunk, room above its offsets
// for the most records the chunk could hold (one per 12 bytes); the back reads a chunk into a scratch
// array and takes, from the top of the array down, the room its records need. A chunk that does not
// fit below the back's is left to the front, as is every chunk below it: when the front is done, the
// back's chunks are in order at the top, and are moved down to where they go as they are taken. With
// Collect, the back writes a chunk's names into the names' arrays as far up as the chunk could start
// at most, at its start's byte / 8 (a name takes 8 of a record's bytes or more). Only its names' bits
// go to a bitmap of its own, since a word of it may hold bits of both threads' names.
template <bool Swapped, bool Collect>
class BackReader {
 public:
  // Small chunks: at the end this thread waits for the one the back is reading (a 16th of a kernel's
  // section kept it waiting 60 us; a 64th is 15).
  static constexpr unsigned kMaxChunks = 64;
  struct Chunk {
    // [begin, end) of the type section: planned at offsets of the same distance apart; the back moves
    // the begin of each it takes to a guessed record start and the end to the next one's.
    std::uint32_t begin = 0, end = 0;
    // Read from the back: how many offsets and names, and whether its records ended exactly at `end`
    // (not: a bad record, or a guess that was inside a record).
    std::uint32_t count = 0, name_count = 0;
    std::uint32_t at = 0;  // where its offsets are in the array
    bool whole = false;
    std::uint32_t max_name = 0;
    TypeId max_ref = 0;
    std::array<std::uint32_t, kMaxKind + 1> records{};  // with Collect, its counts per kind
    std::array<std::uint64_t, kMaxKind + 1> record_bytes{};
  };

  // Chunks of equal size, at offsets that are multiples of 4, as records are. Their record starts are
  // guessed by the back, for the chunks it takes, not here: a guess reads a page nothing has read yet,
  // which on a VM costs some 10 us the first time (a kernel's 63 guesses took this thread 0.6 ms
  // before the back could start). This thread reads its chunks from where the one before ended, each
  // to the first record at or past its planned end: it needs no guess.
  void plan(std::span<const std::uint8_t> types) {
    const auto len = static_cast<std::uint32_t>(types.size());
    count_ = kMaxChunks;
    for (unsigned j = 0; j < count_; ++j)
      chunks_[j].begin = static_cast<std::uint32_t>(std::uint64_t{len} * j / kMaxChunks) & ~3u;
    for (unsigned j = 0; j < count_; ++j) chunks_[j].end = j + 1 < count_ ? chunks_[j + 1].begin : len;
    front_next_ = 0;
    back_next_ = count_;
  }
  // The most records a chunk the back reads can hold: its guessed start is at most 4 KiB past the
  // planned one, and so is the next chunk's, which ends it.
  std::size_t most_per_chunk() const {
    std::uint32_t longest = 0;
    for (unsigned j = 0; j < count_; ++j) longest = std::max(longest, chunks_[j].end - chunks_[j].begin);
    return (std::size_t{longest} + 4096 + kTypeHeaderSize - 1) / kTypeHeaderSize + 1;
  }
  unsigned count() const { return count_; }
  const Chunk& chunk(unsigned j) const { return chunks_[j]; }
  std::span<const std::uint32_t> offsets(const Chunk& c) const { return {offsets_ + c.at, c.count}; }
  std::span<const std::uint32_t> names(const Chunk& c) const { return {at_ + c.begin / 8, c.name_count}; }
  const std::uint8_t* marks(const Chunk& c) const { return marks_ + c.begin / 8; }
  // The bits of every name the thread wrote, whatever became of its chunks.
  const ZeroedArray<std::uint64_t>& named() const { return named_; }

  // Starts the thread, writing to the top of `offsets` (room for `capacity`), by way of `scratch` (room
  // for most_per_chunk()), and, with Collect, to `names` (RecordNames::start's arrays). False where
  // this process may run on one CPU only, or no thread could be made: there is then no back.
  bool start(std::span<const std::uint8_t> types, std::uint32_t* offsets, std::size_t capacity, std::uint32_t* scratch,
             RecordNames* names, std::uint32_t string_base, std::uint32_t string_len) {
    done_ = std::make_shared<std::atomic<int>>(0);
    types_ = types;
    offsets_ = offsets;
    back_low_ = capacity;
    scratch_ = scratch;
    if constexpr (Collect) {
      at_ = names->at.data();
      marks_ = names->marks.data();
      named_ = ZeroedArray<std::uint64_t>(string_len / 64 + 1);
      string_base_ = string_base;
      string_len_ = string_len;
    }
    running_ = start_beside(&BackReader::run, this);
    return running_;
  }
  // For this thread: takes chunk j from the front, to read from byte `off` to its end, with room for
  // a record per 12 bytes from offset `from` on, unless the back has the chunk or the room already.
  bool claim_front(unsigned j, std::size_t from, std::uint32_t off) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (front_next_ != j || j >= back_next_) return false;
    const std::uint32_t end = chunks_[j].end;  // the back writes only to chunks it took
    const std::size_t most = off < end ? (end - off - 1) / kTypeHeaderSize + 1 : 0;
    if (from + most > back_low_) return false;
    ++front_next_;
    front_limit_ = from + most;
    return true;
  }
  // Once its chunks are read, the thread reads a byte of each page of `bytes` (which `owner` keeps
  // alive): a section read later, as a whole, on this thread. On a VM the first read of a page of a
  // mapped file costs a microsecond or more, two milliseconds for all of a kernel's BTF, and the thread
  // is otherwise idle by then. Nothing without an owner.
  void warm_after(std::span<const std::uint8_t> bytes, std::shared_ptr<const void> owner) {
    if (!owner) return;
    warm_ = bytes;
    warm_owner_ = std::move(owner);
  }
  // Waits for the thread to finish the chunk it is reading; what it read is then readable here.
  void finish() {
    if (!running_) return;
    stop_.store(true, std::memory_order_relaxed);
    while (done_->load(std::memory_order_acquire) == 0) done_->wait(0, std::memory_order_acquire);
    running_ = false;
  }
  BackReader() = default;
  BackReader(const BackReader&) = delete;
  BackReader& operator=(const BackReader&) = delete;
  ~BackReader() { finish(); }

 private:
  // The thread: the chunks from the back, then the pages to warm. Once it says it is done, it touches
  // nothing of `self` (which may be gone) but what it holds a share of: the flag and the warmed bytes.
  static void* run(void* self) {
    auto& r = *static_cast<BackReader*>(self);
    const std::shared_ptr<std::atomic<int>> done = r.done_;
    const std::span<const std::uint8_t> warm = r.warm_;
    const std::shared_ptr<const void> warm_owner = r.warm_owner_;
    read_chunks(r);
    done->store(1, std::memory_order_release);
    done->notify_one();
    std::uint8_t sum = 0;
    for (std::size_t at = 0; at < warm.size(); at += 4096) sum += warm[at];
    asm volatile("" : : "r"(sum));  // the reads are what this is for
    return nullptr;
  }
  static void read_chunks(BackReader& r) {
    while (!r.stop_.load(std::memory_order_relaxed)) {
      unsigned j;
      {
        const std::lock_guard<std::mutex> lock(r.mutex_);
        if (r.front_next_ >= r.back_next_) return;
        j = --r.back_next_;
      }
      Chunk& c = r.chunks_[j];
      // Where no record start is found near its planned start, this chunk and those below it are the
      // front's (`whole` stays false). A chunk above this one was the back's: its guess ends this one.
      const auto start = guess_record_start<Swapped>(r.types_, c.begin);
      if (!start) return;
      c.begin = *start;
      if (j + 1 < r.count_) c.end = r.chunks_[j + 1].begin;
      std::uint32_t* const first = r.scratch_;
      std::uint32_t* out = first;
      RecordNames::Writer writer;
      if constexpr (Collect)
        writer = RecordNames::writer_to(r.at_ + c.begin / 8, r.marks_ + c.begin / 8, r.named_.data(), c.records.data(),
                                        c.record_bytes.data(), r.string_base_, r.string_len_);
      // Its most records fit: `stop` is never reached.
      const std::uint32_t reached = scan_records<Swapped, Collect>(r.types_, c.begin, c.end, out, nullptr, c.max_name,
                                                                   c.max_ref, &writer);
      const auto count = static_cast<std::uint32_t>(out - first);
      {
        const std::lock_guard<std::mutex> lock(r.mutex_);
        if (r.back_low_ - r.front_limit_ < count) return;  // no room: the front reads it, and those below
        r.back_low_ -= count;
        c.at = static_cast<std::uint32_t>(r.back_low_);
      }
      std::memcpy(r.offsets_ + c.at, first, std::size_t{count} * sizeof *first);
      c.count = count;
      c.whole = reached == c.end;
      if constexpr (Collect) c.name_count = static_cast<std::uint32_t>(writer.at_end() - (r.at_ + c.begin / 8));
    }
  }

  std::array<Chunk, kMaxChunks> chunks_{};
  unsigned count_ = 0;
  // Under the lock: the next chunk from the front, one past the next from the back, and the room each
  // holds in the offsets' array: the front below front_limit_, the back from back_low_ up.
  std::mutex mutex_;
  unsigned front_next_ = 0, back_next_ = 0;
  std::size_t front_limit_ = 0, back_low_ = 0;
  std::atomic<bool> stop_{false};
  std::span<const std::uint8_t> types_;
  std::uint32_t* offsets_ = nullptr;
  std::uint32_t* scratch_ = nullptr;
  std::uint32_t* at_ = nullptr;
  std::uint8_t* marks_ = nullptr;
  ZeroedArray<std::uint64_t> named_;
  std::uint32_t string_base_ = 0, string_len_ = 0;
  std::shared_ptr<std::atomic<int>> done_;  // set by the thread when it has read its last chunk
  std::span<const std::uint8_t> warm_;
  std::shared_ptr<const void> warm_owner_;
  bool running_ = false;
};

// Walks the records of a type section, checking that each has a known kind and fits, and appends its
// offset; returns the largest name offset and type id the records hold. One pass that decodes each
// record once, with the byte order fixed at compile time: every tool run pays for it. With `names`
// (Collect), it collects the records' names there as well.
template <bool Swapped, bool Collect>
std::pair<std::uint32_t, TypeId> index_records(std::span<const std::uint8_t> types, TypeId first_id,
                                               const std::string& name, ZeroedArray<std::uint32_t>& offsets,
                                               RecordNames* names, std::uint32_t string_base,
                                               std::span<const std::uint8_t> strings,
                                               const std::shared_ptr<const void>& owner) {
  const auto string_len = static_cast<std::uint32_t>(strings.size());
  std::uint32_t max_name = 0;
  TypeId max_ref = 0;
  const auto len = static_cast<std::uint32_t>(types.size());
  // The offsets' array is sized for records of 24 bytes on average (vmlinux's are 25) and doubled when
  // that is short: the bound a record's 12 bytes give would leave a hole in the memory pool that what
  // comes after cannot use (memory.h), and twice the memory asked for. In the pool: half a megabyte for
  // a kernel, in the huge page that measure's analysis, or check's and minimize's relocation results
  // (CoreResults), go on to fill. Split, it is not doubled while the back writes to it, so it has a
  // chunk's most records more, the room the front takes and may not fill where the two meet. Kernels'
  // records are 25 bytes on average (6.1, 6.12, 6.18): the threads meet with room to spare. A section
  // whose records are 23 bytes or less fills the array before they meet; the front then reads on from
  // where it stopped, over what the back read, as one thread would.
  const std::size_t most = len / kTypeHeaderSize + 1;
  ZeroedArray<std::uint32_t> scratch;  // the back thread's: declared first, so that it outlives the thread
  std::optional<BackReader<Swapped, Collect>> back;
  if (len >= kSplitFrom && second_thread_allowed.load(std::memory_order_relaxed)) {
    back.emplace();
    back->plan(types);
    if (back->count() < 2) back.reset();
  }
  // The names' arrays first, then the back's scratch array, which is given back before the offsets'
  // array is: what that gives back at the end is then at the pool's top, for what comes next to use.
  RecordNames::Writer writer;
  if constexpr (Collect) writer = names->start(len, string_base, string_len);
  auto allocate = [](std::size_t n) { return ZeroedArray<std::uint32_t>::for_overwrite(n); };
  if (back) scratch = allocate(back->most_per_chunk());
  std::size_t capacity = std::min<std::size_t>(len / 24 + 16 + scratch.size(), most);
  offsets = allocate(capacity);
  std::uint32_t* first = offsets.data();
  std::uint32_t* out = first;
  auto id_here = [&] { return first_id + static_cast<TypeId>(out - first); };
  // Ids end at 0xffffffff: how many records may have one. One test per record stops at whichever of
  // that and the array's end comes first.
  const std::uint64_t id_room = 0xffffffffu - std::uint64_t{first_id};
  auto stop_at = [&] { return first + std::min<std::uint64_t>(capacity, id_room); };
  std::uint32_t* stop = stop_at();
  // Room for `more` offsets past `out`, within the ids there are.
  auto make_room = [&](std::size_t more) {
    const auto have = static_cast<std::size_t>(out - first);
    if (have + more > id_room) fail(name, "too many types");
    if (have + more <= capacity) return;
    capacity = std::min<std::size_t>(std::max(capacity * 2, have + more), most);
    auto grown = allocate(capacity);
    std::memcpy(grown.data(), first, have * sizeof *first);
    out = grown.data() + have;
    first = grown.data();
    offsets = std::move(grown);
    stop = stop_at();
  };
  std::uint32_t off = 0;
  // Reads from `off` up to the record that starts at or past `until`, growing the array as it fills.
  auto read_to = [&](std::uint32_t until) {
    for (;;) {
      off = scan_records<Swapped, Collect>(types, off, until, out, stop, max_name, max_ref, &writer);
      if (off >= until) return;
      if (out == stop && len - off >= kTypeHeaderSize)
        make_room(1);
      else
        fail_record<Swapped>(name, types, off, id_here());
    }
  };
  if (back) back->warm_after(strings, owner);
  if (back && !back->start(types, first, capacity, scratch.data(), names, string_base, string_len)) back.reset();
  if (back) {
    // The chunks from the front, read straight into `offsets`, each from where the one before ended,
    // up to the back's, with room for a record per 12 bytes up to its end. Then the chunks the back
    // read, from the one that starts where the front stopped (its guess was no record start otherwise),
    // as long as each ended where the next begins; the rest, if any, is read here below, over what is
    // left of the back's.
    unsigned j = 0;
    for (; j < back->count() && back->claim_front(j, out - first, off); ++j) read_to(back->chunk(j).end);
    back->finish();
    // A chunk read from the start of one taken stands (a guess the records before it land on). The
    // names' bits the back set go in all at once where every chunk it read is taken (they run to the
    // last); else those of the chunks taken, name by name.
    unsigned taken_end = j;
    if (j < back->count() && back->chunk(j).begin == off)
      while (taken_end < back->count() && back->chunk(taken_end).whole) ++taken_end;
    const bool all_taken = j < back->count() && taken_end == back->count();
    for (; j < taken_end; ++j) {
      const auto& c = back->chunk(j);
      const auto read = back->offsets(c);
      make_room(read.size());  // within the ids there are (the array has room: the chunk is above `out`)
      std::memmove(out, read.data(), read.size_bytes());
      out += read.size();
      off = c.end;
      max_name = branchless_max(max_name, c.max_name);
      max_ref = branchless_max(max_ref, c.max_ref);
      if constexpr (Collect) {
        writer.append(back->names(c), back->marks(c), c.records.data(), c.record_bytes.data());
        if (!all_taken)
          for (const std::uint32_t i : back->names(c)) names->named[i / 64] |= std::uint64_t{1} << (i % 64);
      }
    }
    if constexpr (Collect)
      if (all_taken)
        for (std::size_t w = 0; w < names->named.size(); ++w) names->named[w] |= back->named()[w];
    back.reset();
    scratch = {};
  }
  read_to(len);
  if constexpr (Collect) names->finish(writer);
  offsets.truncate(static_cast<std::size_t>(out - first));
  return {max_name, max_ref};
}

}  // namespace

void Btf::allow_second_thread(bool allowed) { second_thread_allowed.store(allowed, std::memory_order_relaxed); }

std::pair<std::uint32_t, TypeId> Btf::index_types(RecordNames* names) {
  if (!names)
    return order_.swapped()
               ? index_records<true, false>(types_, first_id_, name_, offsets_, nullptr, string_base_, strings_, owner_)
               : index_records<false, false>(types_, first_id_, name_, offsets_, nullptr, string_base_, strings_, owner_);
  return order_.swapped()
             ? index_records<true, true>(types_, first_id_, name_, offsets_, names, string_base_, strings_, owner_)
             : index_records<false, true>(types_, first_id_, name_, offsets_, names, string_base_, strings_, owner_);
}

namespace {

constexpr std::string_view kNameLabel[] = {"name", "member name", "enumerator name", "parameter name"};
constexpr std::string_view kRefLabel[] = {"its type",        "its element type", "its index type", "a member",
                                          "its return type", "a parameter",      "a variable"};

}  // namespace

void Btf::check_fits_base(std::uint32_t max_name, TypeId max_ref) const {
  auto misfit = [&](TypeId id, const TypeView& t, const std::string& why) {
    fail(name_, "split BTF built on another base than {} (type [{}] {}: {}): pass the BTF it was built on with --base",
         esc(base_->name()), id, kind_name(t.kind()), why);
  };
  // A walk of the own records, each decoded once, reading one byte of the base per name below its
  // strings; the ids only when one is out of range.
  const bool refs_in_range = max_ref < end_id();
  const bool names_in_range = max_name < string_end();
  for (TypeId id = first_id_; id < end_id(); ++id) {
    const TypeView t = type(id);
    for_each_field(
        t.info(),
        [&](std::uint32_t at, NameRole role) {
          const std::uint32_t off = order_.u32(t.data() + at);
          if (off == 0) return;
          const std::string_view label = kNameLabel[static_cast<unsigned>(role)];
          if (off < string_base_) {
            if (base_->c_str(off - 1)[0] != 0)
              misfit(id, t, fmt::format("{} offset {} points into the middle of a string of the base", label, off));
          } else if (!names_in_range && off >= string_end()) {
            misfit(id, t, fmt::format("{} offset {} is past the end of the strings ({} bytes)", label, off, string_end()));
          }
        },
        [&](std::uint32_t at, RefRole role) {
          if (refs_in_range) return;
          const TypeId ref = order_.u32(t.data() + at);
          if (ref >= end_id())
            misfit(id, t, fmt::format("{} refers to type {}, past the last type [{}]", kRefLabel[static_cast<unsigned>(role)],
                                      ref, end_id() - 1));
        });
  }
}

void Btf::check_references(TypeId id, const TypeView& t) const {
  const Kind kind = t.kind();
  const char* hint = base_ ? "" : "; is this split BTF? pass --base";
  for_each_field(
      t.info(),
      [&](std::uint32_t at, NameRole role) {
        const std::uint32_t off = order_.u32(t.data() + at);
        if (off >= string_end())
          fail(name_, "type [{}] {}: {} offset {} is past the end of the strings ({} bytes){}", id, kind_name(kind),
               kNameLabel[static_cast<unsigned>(role)], off, string_end(), hint);
      },
      [&](std::uint32_t at, RefRole role) {
        const TypeId ref = order_.u32(t.data() + at);
        if (ref >= end_id())
          fail(name_, "type [{}] {}: {} refers to type {}, but the last type is [{}]{}", id, kind_name(kind),
               kRefLabel[static_cast<unsigned>(role)], ref, end_id() - 1, hint);
      });
}

}  // namespace btfslim
