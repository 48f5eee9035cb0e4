// `btfslim check --format json` seen on one kernel, as tests that compare one run with another read it.
//
// check's JSON has one shape for any number of objects and kernels: each relocation (and kernel
// reference) holds what does not depend on the kernel, and "results", one per kernel. A record on
// kernel `t` is those fields with results[t]'s beside them, the keys that do not apply (null) left out.
#pragma once

#include <nlohmann/json.hpp>

namespace btfslim::test {

inline nlohmann::json without_nulls(const nlohmann::json& o) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : o.items())
    if (!v.is_null()) out[k] = v;
  return out;
}

inline nlohmann::json on_kernel(const nlohmann::json& record, std::size_t t = 0) {
  nlohmann::json out = record;
  out.erase("results");
  for (const auto& [k, v] : record.at("results").at(t).items())
    if (!v.is_null()) out[k] = v;
  return without_nulls(out);
}

// An object of the document with its relocations and kernel references on kernel `t`.
inline nlohmann::json object_on_kernel(const nlohmann::json& object, std::size_t t = 0) {
  nlohmann::json out = without_nulls(object);
  out.erase("results");
  for (const char* records : {"relocations", "kernel_references"}) {
    out[records] = nlohmann::json::array();
    for (const nlohmann::json& r : object.at(records)) out[records].push_back(on_kernel(r, t));
  }
  return out;
}

// Its relocations on kernel `t`, as a value: `for (const json& r : relocations_on_kernel(o))` keeps the
// array alive, where `for (... : object_on_kernel(o)["relocations"])` would read a destroyed temporary.
inline nlohmann::json relocations_on_kernel(const nlohmann::json& object, std::size_t t = 0) {
  return object_on_kernel(object, t).at("relocations");
}

}  // namespace btfslim::test
