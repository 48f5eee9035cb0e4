#include "fixtures.h"

#include "btfslim/output.h"
#include "libbpf_oracle.h"

#include <bpf/btf.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace btfslim::test {

std::string captured(const std::function<void(OutputBuffer&)>& fn) {
  std::FILE* f = std::tmpfile();
  if (!f) throw std::runtime_error("tmpfile failed");
  {
    OutputBuffer out(fileno(f), "tmpfile");
    fn(out);
    out.flush();
  }
  std::string text;
  std::rewind(f);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}
namespace {

int check(int id) {
  if (id < 0) throw std::runtime_error("btf__add_* failed: " + std::to_string(id));
  return id;
}

std::string raw(struct btf* b, bool big_endian) {
  if (big_endian && btf__set_endianness(b, BTF_BIG_ENDIAN) != 0) throw std::runtime_error("set_endianness");
  __u32 size = 0;
  const void* data = btf__raw_data(b, &size);
  if (!data) throw std::runtime_error("btf__raw_data failed");
  return std::string(static_cast<const char*>(data), size);
}

}  // namespace

std::string all_kinds_btf(bool big_endian) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = check(btf__add_int(t, "int", 4, BTF_INT_SIGNED));           // 1
  const int u8 = check(btf__add_int(t, "unsigned char", 1, 0));               // 2
  const int chr = check(btf__add_int(t, "char", 1, BTF_INT_CHAR));            // 3
  const int bol = check(btf__add_int(t, "_Bool", 1, BTF_INT_BOOL));           // 4
  const int ptr = check(btf__add_ptr(t, chr));                                // 5
  const int arr = check(btf__add_array(t, i32, u8, 16));                      // 6
  const int st = check(btf__add_struct(t, "task", 32));                       // 7
  check(btf__add_field(t, "pid", i32, 0, 0));
  check(btf__add_field(t, "flags", u8, 32, 3));
  check(btf__add_field(t, "state", u8, 35, 5));
  check(btf__add_field(t, "", ptr, 64, 0));
  check(btf__add_field(t, "comm", arr, 128, 0));
  const int un = check(btf__add_union(t, "", 8));                             // 8
  check(btf__add_field(t, "a", i32, 0, 0));
  check(btf__add_field(t, "b", ptr, 0, 0));
  const int en = check(btf__add_enum(t, "state", 4));                         // 9
  check(btf__add_enum_value(t, "RUNNING", 0));
  check(btf__add_enum_value(t, "STOPPED", 4));
  const int sen = check(btf__add_enum(t, "delta", 4));                        // 10
  check(btf__add_enum_value(t, "DOWN", -1));
  check(btf__add_enum_value(t, "UP", 1));
  check(btf__add_fwd(t, "later", BTF_FWD_STRUCT));                            // 11
  check(btf__add_fwd(t, "maybe", BTF_FWD_UNION));                             // 12
  const int td = check(btf__add_typedef(t, "pid_t", i32));                    // 13
  const int vol = check(btf__add_volatile(t, i32));                           // 14
  const int cst = check(btf__add_const(t, vol));                              // 15
  check(btf__add_restrict(t, ptr));                                           // 16
  const int task_ptr = check(btf__add_ptr(t, st));                            // 17
  const int proto = check(btf__add_func_proto(t, i32));                       // 18
  check(btf__add_func_param(t, "task", task_ptr));
  check(btf__add_func_param(t, "", td));
  const int fn = check(btf__add_func(t, "wake_up", BTF_FUNC_GLOBAL, proto));  // 19
  check(btf__add_func(t, "helper", BTF_FUNC_STATIC, proto));                  // 20
  check(btf__add_func(t, "imported", BTF_FUNC_EXTERN, proto));                // 21
  const int var = check(btf__add_var(t, "jiffies", BTF_VAR_GLOBAL_ALLOCATED, cst));  // 22
  const int var2 = check(btf__add_var(t, "counter", BTF_VAR_STATIC, i32));    // 23
  check(btf__add_datasec(t, ".data", 16));                                    // 24
  check(btf__add_datasec_var_info(t, var, 0, 4));
  check(btf__add_datasec_var_info(t, var2, 8, 4));
  check(btf__add_float(t, "double", 8));                                      // 25
  check(btf__add_decl_tag(t, "user", st, 1));                                 // 26
  check(btf__add_decl_tag(t, "kfunc", fn, -1));                               // 27
  check(btf__add_type_tag(t, "rcu", st));                                     // 28
  const int e64 = check(btf__add_enum64(t, "big", 8, true));                  // 29
  check(btf__add_enum64_value(t, "HUGE", 0xffffffff00000001ULL));
  check(btf__add_enum64_value(t, "SMALL", 3));
  check(btf__add_enum64(t, "sbig", 8, false));                                // 30
  check(btf__add_enum64_value(t, "NEG", static_cast<__u64>(-5LL)));
  check(btf__add_ptr(t, 0));                                                  // 31: void *
  (void)un, (void)en, (void)sen, (void)bol, (void)e64;
  return raw(t, big_endian);
}

std::string footprint_btf(bool with_tag) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  check(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  check(btf__add_ptr(t, 3));
  check(btf__add_struct(t, "node", 16));
  check(btf__add_field(t, "next", 2, 0, 0));
  check(btf__add_field(t, "val", 1, 64, 0));
  check(btf__add_typedef(t, "node_t", 3));
  check(btf__add_func_proto(t, 1));
  check(btf__add_func_param(t, "n", 2));
  check(btf__add_func(t, "walk", BTF_FUNC_GLOBAL, 5));
  check(btf__add_struct(t, "lonely", 4));
  check(btf__add_field(t, "val", 1, 0, 0));
  if (with_tag) check(btf__add_decl_tag(t, "tag", 3, -1));
  return raw(t, false);
}

std::string kind_clash_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = check(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  check(btf__add_struct(t, "vmpressure", 4));
  check(btf__add_field(t, "x", i32, 0, 0));
  const int proto = check(btf__add_func_proto(t, i32));
  check(btf__add_func(t, "vmpressure", BTF_FUNC_GLOBAL, proto));
  check(btf__add_struct(t, "used_by_both", 4));
  check(btf__add_field(t, "y", i32, 0, 0));
  return raw(t, false);
}

std::string prototypes_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = check(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  const int none = check(btf__add_func_proto(t, i32));  // int (void), as pahole writes it: no parameter
  const int void_arg = check(btf__add_func_proto(t, 0));  // void (void), as clang writes it: one void
  check(btf__add_func_param(t, "", 0));
  const int varargs = check(btf__add_func_proto(t, i32));  // int (int, ...)
  check(btf__add_func_param(t, "", i32));
  check(btf__add_func_param(t, "", 0));
  const int two = check(btf__add_func_proto(t, i32));  // int (int a, int b)
  check(btf__add_func_param(t, "a", i32));
  check(btf__add_func_param(t, "b", i32));
  const int p_none = check(btf__add_ptr(t, none));
  const int p_void = check(btf__add_ptr(t, void_arg));
  const int p_var = check(btf__add_ptr(t, varargs));
  const int p_two = check(btf__add_ptr(t, two));
  check(btf__add_struct(t, "ops", 32));
  check(btf__add_field(t, "get", p_none, 0, 0));
  check(btf__add_field(t, "put", p_void, 64, 0));
  check(btf__add_field(t, "log", p_var, 128, 0));
  check(btf__add_field(t, "add", p_two, 192, 0));
  check(btf__add_typedef(t, "getter_t", p_none));
  return raw(t, false);
}

std::string small_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = check(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  const int st = check(btf__add_struct(t, "pair", 8));
  check(btf__add_field(t, "a", i32, 0, 0));
  check(btf__add_field(t, "b", i32, 32, 0));
  const int p = check(btf__add_ptr(t, st));
  check(btf__add_typedef(t, "pair_ptr", p));
  const int en = check(btf__add_enum(t, "e", 4));
  check(btf__add_enum_value(t, "E1", 1));
  (void)en;
  return raw(t, false);
}

SplitPair split_btf(bool big_endian) {
  BtfPtr base(btf__new_empty());
  struct btf* b = base.get();
  const int i32 = check(btf__add_int(b, "int", 4, BTF_INT_SIGNED));  // 1
  const int ptr = check(btf__add_ptr(b, 3));                         // 2: sk_buff *
  const int st = check(btf__add_struct(b, "sk_buff", 16));           // 3
  check(btf__add_field(b, "len", i32, 0, 0));
  check(btf__add_field(b, "next", ptr, 64, 0));
  BtfPtr split(btf__new_empty_split(b));
  struct btf* s = split.get();
  const int skb_ptr = check(btf__add_ptr(s, st));                   // 4
  const int mod = check(btf__add_struct(s, "nf_conn", 24));          // 5
  check(btf__add_field(s, "len", i32, 0, 0));                        // "len" is a base string
  check(btf__add_field(s, "skb", skb_ptr, 64, 0));
  check(btf__add_field(s, "mark", i32, 128, 0));
  check(btf__add_typedef(s, "nf_conn_t", mod));                      // 6
  SplitPair out;
  out.split = raw(s, big_endian);
  out.base = raw(b, big_endian);
  return out;
}

Misfits split_btf_misfits() {
  Misfits out;
  {
    // "int" -> "integer": every later string moves four bytes on, "len" lands inside "sk_buff_head".
    BtfPtr base(btf__new_empty());
    struct btf* b = base.get();
    const int i32 = check(btf__add_int(b, "integer", 4, BTF_INT_SIGNED));
    const int ptr = check(btf__add_ptr(b, 3));
    check(btf__add_struct(b, "sk_buff_head", 16));
    check(btf__add_field(b, "qlen", i32, 0, 0));
    check(btf__add_field(b, "nextp", ptr, 64, 0));
    out.shifted_strings = raw(b, false);
  }
  {
    BtfPtr base(btf__new_empty());
    struct btf* b = base.get();
    check(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    for (const char* s : {"sk_buff", "len", "next"}) check(btf__add_str(b, s));
    out.fewer_types = raw(b, false);
  }
  return out;
}

}  // namespace btfslim::test
