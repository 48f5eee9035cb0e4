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
int added(int id) {
  if (id < 0) throw std::runtime_error("btf__add_* failed: " + std::to_string(id));
  return id;
}

std::string raw_bytes(struct btf* b, bool big_endian) {
  if (big_endian && btf__set_endianness(b, BTF_BIG_ENDIAN) != 0) throw std::runtime_error("set_endianness");
  __u32 size = 0;
  const void* data = btf__raw_data(b, &size);
  if (!data) throw std::runtime_error("btf__raw_data failed");
  return std::string(static_cast<const char*>(data), size);
}

std::string all_kinds_btf(bool big_endian) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));           // 1
  const int u8 = added(btf__add_int(t, "unsigned char", 1, 0));               // 2
  const int chr = added(btf__add_int(t, "char", 1, BTF_INT_CHAR));            // 3
  const int bol = added(btf__add_int(t, "_Bool", 1, BTF_INT_BOOL));           // 4
  const int ptr = added(btf__add_ptr(t, chr));                                // 5
  const int arr = added(btf__add_array(t, i32, u8, 16));                      // 6
  const int st = added(btf__add_struct(t, "task", 32));                       // 7
  added(btf__add_field(t, "pid", i32, 0, 0));
  added(btf__add_field(t, "flags", u8, 32, 3));
  added(btf__add_field(t, "state", u8, 35, 5));
  added(btf__add_field(t, "", ptr, 64, 0));
  added(btf__add_field(t, "comm", arr, 128, 0));
  const int un = added(btf__add_union(t, "", 8));                             // 8
  added(btf__add_field(t, "a", i32, 0, 0));
  added(btf__add_field(t, "b", ptr, 0, 0));
  const int en = added(btf__add_enum(t, "state", 4));                         // 9
  added(btf__add_enum_value(t, "RUNNING", 0));
  added(btf__add_enum_value(t, "STOPPED", 4));
  const int sen = added(btf__add_enum(t, "delta", 4));                        // 10
  added(btf__add_enum_value(t, "DOWN", -1));
  added(btf__add_enum_value(t, "UP", 1));
  added(btf__add_fwd(t, "later", BTF_FWD_STRUCT));                            // 11
  added(btf__add_fwd(t, "maybe", BTF_FWD_UNION));                             // 12
  const int td = added(btf__add_typedef(t, "pid_t", i32));                    // 13
  const int vol = added(btf__add_volatile(t, i32));                           // 14
  const int cst = added(btf__add_const(t, vol));                              // 15
  added(btf__add_restrict(t, ptr));                                           // 16
  const int task_ptr = added(btf__add_ptr(t, st));                            // 17
  const int proto = added(btf__add_func_proto(t, i32));                       // 18
  added(btf__add_func_param(t, "task", task_ptr));
  added(btf__add_func_param(t, "", td));
  const int fn = added(btf__add_func(t, "wake_up", BTF_FUNC_GLOBAL, proto));  // 19
  added(btf__add_func(t, "helper", BTF_FUNC_STATIC, proto));                  // 20
  added(btf__add_func(t, "imported", BTF_FUNC_EXTERN, proto));                // 21
  const int var = added(btf__add_var(t, "jiffies", BTF_VAR_GLOBAL_ALLOCATED, cst));  // 22
  const int var2 = added(btf__add_var(t, "counter", BTF_VAR_STATIC, i32));    // 23
  added(btf__add_datasec(t, ".data", 16));                                    // 24
  added(btf__add_datasec_var_info(t, var, 0, 4));
  added(btf__add_datasec_var_info(t, var2, 8, 4));
  added(btf__add_float(t, "double", 8));                                      // 25
  added(btf__add_decl_tag(t, "user", st, 1));                                 // 26
  added(btf__add_decl_tag(t, "kfunc", fn, -1));                               // 27
  added(btf__add_type_tag(t, "rcu", st));                                     // 28
  const int e64 = added(btf__add_enum64(t, "big", 8, true));                  // 29
  added(btf__add_enum64_value(t, "HUGE", 0xffffffff00000001ULL));
  added(btf__add_enum64_value(t, "SMALL", 3));
  added(btf__add_enum64(t, "sbig", 8, false));                                // 30
  added(btf__add_enum64_value(t, "NEG", static_cast<__u64>(-5LL)));
  added(btf__add_ptr(t, 0));                                                  // 31: void *
  (void)un, (void)en, (void)sen, (void)bol, (void)e64;
  return raw_bytes(t, big_endian);
}

std::string footprint_btf(bool with_tag) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  added(btf__add_ptr(t, 3));
  added(btf__add_struct(t, "node", 16));
  added(btf__add_field(t, "next", 2, 0, 0));
  added(btf__add_field(t, "val", 1, 64, 0));
  added(btf__add_typedef(t, "node_t", 3));
  added(btf__add_func_proto(t, 1));
  added(btf__add_func_param(t, "n", 2));
  added(btf__add_func(t, "walk", BTF_FUNC_GLOBAL, 5));
  added(btf__add_struct(t, "lonely", 4));
  added(btf__add_field(t, "val", 1, 0, 0));
  if (with_tag) added(btf__add_decl_tag(t, "tag", 3, -1));
  return raw_bytes(t, false);
}

std::string kind_clash_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  added(btf__add_struct(t, "vmpressure", 4));
  added(btf__add_field(t, "x", i32, 0, 0));
  const int proto = added(btf__add_func_proto(t, i32));
  added(btf__add_func(t, "vmpressure", BTF_FUNC_GLOBAL, proto));
  added(btf__add_struct(t, "used_by_both", 4));
  added(btf__add_field(t, "y", i32, 0, 0));
  return raw_bytes(t, false);
}

std::string prototypes_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  const int none = added(btf__add_func_proto(t, i32));  // int (void), as pahole writes it: no parameter
  const int void_arg = added(btf__add_func_proto(t, 0));  // void (void), as clang writes it: one void
  added(btf__add_func_param(t, "", 0));
  const int varargs = added(btf__add_func_proto(t, i32));  // int (int, ...)
  added(btf__add_func_param(t, "", i32));
  added(btf__add_func_param(t, "", 0));
  const int two = added(btf__add_func_proto(t, i32));  // int (int a, int b)
  added(btf__add_func_param(t, "a", i32));
  added(btf__add_func_param(t, "b", i32));
  const int p_none = added(btf__add_ptr(t, none));
  const int p_void = added(btf__add_ptr(t, void_arg));
  const int p_var = added(btf__add_ptr(t, varargs));
  const int p_two = added(btf__add_ptr(t, two));
  added(btf__add_struct(t, "ops", 32));
  added(btf__add_field(t, "get", p_none, 0, 0));
  added(btf__add_field(t, "put", p_void, 64, 0));
  added(btf__add_field(t, "log", p_var, 128, 0));
  added(btf__add_field(t, "add", p_two, 192, 0));
  added(btf__add_typedef(t, "getter_t", p_none));
  return raw_bytes(t, false);
}

std::string small_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  const int st = added(btf__add_struct(t, "pair", 8));
  added(btf__add_field(t, "a", i32, 0, 0));
  added(btf__add_field(t, "b", i32, 32, 0));
  const int p = added(btf__add_ptr(t, st));
  added(btf__add_typedef(t, "pair_ptr", p));
  const int en = added(btf__add_enum(t, "e", 4));
  added(btf__add_enum_value(t, "E1", 1));
  (void)en;
  return raw_bytes(t, false);
}

SplitPair split_btf(bool big_endian) {
  BtfPtr base(btf__new_empty());
  struct btf* b = base.get();
  const int i32 = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));  // 1
  const int ptr = added(btf__add_ptr(b, 3));                         // 2: sk_buff *
  const int st = added(btf__add_struct(b, "sk_buff", 16));           // 3
  added(btf__add_field(b, "len", i32, 0, 0));
  added(btf__add_field(b, "next", ptr, 64, 0));
  BtfPtr split(btf__new_empty_split(b));
  struct btf* s = split.get();
  const int skb_ptr = added(btf__add_ptr(s, st));                   // 4
  const int mod = added(btf__add_struct(s, "nf_conn", 24));          // 5
  added(btf__add_field(s, "len", i32, 0, 0));                        // "len" is a base string
  added(btf__add_field(s, "skb", skb_ptr, 64, 0));
  added(btf__add_field(s, "mark", i32, 128, 0));
  added(btf__add_typedef(s, "nf_conn_t", mod));                      // 6
  SplitPair out;
  out.split = raw_bytes(s, big_endian);
  out.base = raw_bytes(b, big_endian);
  return out;
}

Misfits split_btf_misfits() {
  Misfits out;
  {
    // "int" -> "integer": every later string moves four bytes on, "len" lands inside "sk_buff_head".
    BtfPtr base(btf__new_empty());
    struct btf* b = base.get();
    const int i32 = added(btf__add_int(b, "integer", 4, BTF_INT_SIGNED));
    const int ptr = added(btf__add_ptr(b, 3));
    added(btf__add_struct(b, "sk_buff_head", 16));
    added(btf__add_field(b, "qlen", i32, 0, 0));
    added(btf__add_field(b, "nextp", ptr, 64, 0));
    out.shifted_strings = raw_bytes(b, false);
  }
  {
    BtfPtr base(btf__new_empty());
    struct btf* b = base.get();
    added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    for (const char* s : {"sk_buff", "len", "next"}) added(btf__add_str(b, s));
    out.fewer_types = raw_bytes(b, false);
  }
  return out;
}

}  // namespace btfslim::test
