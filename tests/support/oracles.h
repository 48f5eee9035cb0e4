// Running the oracles (bpftool) and btfslim for their output, failing the test when either fails.
#pragma once

#include <string>
#include <vector>

namespace btfslim::test {

// bpftool is an oracle that the project's setup installs: without it tests fail, never skip. Looks on
// PATH, then in the sbin directories a non-root PATH may lack. "" when absent.
std::string bpftool_program();
// bpftool's stdout for these arguments (it must succeed); each distinct run is made once per process.
std::string bpftool(const std::vector<std::string>& args);
// btfslim's stdout; it must succeed and print nothing on stderr.
std::string ours(const std::vector<std::string>& args);

}  // namespace btfslim::test
