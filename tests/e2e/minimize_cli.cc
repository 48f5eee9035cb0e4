#include "minimize_cli.h"

#include "libbpf_oracle.h"
#include "process.h"

#include <bpf/btf.h>

#include <filesystem>

namespace btfslim::test {

std::vector<std::string> minimize_corpus() {
  std::vector<std::string> objects = core_corpus_objects();
  if (std::filesystem::exists(test_object("core_guarded"))) objects.push_back(test_object("core_guarded"));
  objects.push_back(test_object("minimal"));
  return objects;
}

std::vector<std::string> minimize_args(const std::string& source, const std::vector<std::string>& objects,
                                       const std::string& out) {
  std::vector<std::string> args{"minimize", "--btf", source, "-o", out};
  args.insert(args.end(), objects.begin(), objects.end());
  return args;
}

const char* kind_word(const btf_type* t) {
  static const char* const names[] = {"void",  "int",    "ptr",      "array",    "struct", "union",  "enum",
                                      "fwd",   "typedef", "volatile", "const",   "restrict", "func", "func_proto",
                                      "var",   "datasec", "float",   "decl_tag", "type_tag", "enum64"};
  const unsigned k = btf_kind(t);
  return k < sizeof names / sizeof *names ? names[k] : "?";
}

}  // namespace btfslim::test
