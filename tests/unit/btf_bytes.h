// What the in-process tests of the model ([model], test_model.cc) and of its robustness ([robust],
// test_robust.cc) share: parsing a private copy of some bytes, and how a parse ended.
#pragma once

#include "fixtures.h"

#include "btfslim/btf.h"
#include "btfslim/dump.h"
#include "btfslim/error.h"
#include "btfslim/output.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace btfslim::test {

inline constexpr const char* kName = "test.btf";

// Parses a private copy of exactly `bytes.size()` bytes.
inline std::shared_ptr<const Btf> parse(const std::string& bytes, std::shared_ptr<const Btf> base = nullptr,
                                        const std::string& name = kName) {
  auto owner = std::make_shared<std::vector<std::uint8_t>>(bytes.begin(), bytes.end());
  return Btf::parse(name, owner, std::span<const std::uint8_t>(*owner), std::move(base));
}

// How one parse ended: a model, an InputError's line, or (a bug) anything else.
struct Outcome {
  std::shared_ptr<const Btf> btf;
  std::string error;
  bool foreign = false;  // threw something that is not an InputError
};

inline Outcome try_parse(const std::string& bytes, std::shared_ptr<const Btf> base = nullptr) {
  try {
    return {parse(bytes, std::move(base)), "", false};
  } catch (const InputError& e) {
    return {nullptr, e.what(), false};
  } catch (const std::exception& e) {
    return {nullptr, std::string("not an InputError: ") + e.what(), true};
  }
}

inline std::string raw_dump(const Btf& btf) {
  return captured([&](OutputBuffer& out) { dump_raw(btf, {}, out); });
}

}  // namespace btfslim::test
