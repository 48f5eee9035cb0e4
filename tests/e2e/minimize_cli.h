// What the [minimize] tests share (test_minimize.cc, test_minimize_cli.cc): the objects they minimize,
// minimize's arguments, and libbpf's name of a kind.
#pragma once

#include <string>
#include <vector>

struct btf_type;

namespace btfslim::test {

// The CO-RE corpus: every relocation kind and the error cases, the guarded reads where this build has
// them, and minimal.bpf.o.
std::vector<std::string> minimize_corpus();

// minimize --btf SOURCE -o OUT OBJECTS...
std::vector<std::string> minimize_args(const std::string& source, const std::vector<std::string>& objects,
                                       const std::string& out);

// "struct", "func_proto", ...: a libbpf type's kind as bpftool names it.
const char* kind_word(const btf_type* t);

}  // namespace btfslim::test
