// What the [check-cli] tests share (test_check_cli.cc, test_check_formats.cc): the inputs, check's JSON
// run once per object and target, and the multi-kernel table parsed and held to single-target runs.
#pragma once

#include "process.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace btfslim::test {

std::string no_ext_object();   // types_only.bpf.o: .BTF and no .BTF.ext
std::string guarded_object();  // core_guarded.bpf.o: reads behind existence checks
// The CO-RE corpus with the guarded reads.
std::vector<std::string> corpus_objects();

// Runs check with `args` and parses its JSON; the run must end in 0 or 1.
nlohmann::json check_json(std::vector<std::string> args);
// The files of the document's kernels, in order.
std::vector<std::string> kernel_files(const nlohmann::json& doc);
// The JSON object of `obj` checked against `btf` alone, run once per argument set.
const nlohmann::json& single(const std::string& obj, const std::string& btf, bool strict);
std::size_t failing_count(const nlohmann::json& single_object);
// A single-target record without its target-independent fields: what a multi-target "results" entry
// must hold (its nulls left out).
nlohmann::json result_part(const nlohmann::json& record);
// A multi-target JSON document against single-target runs of every object/target pair: the same
// records, and per record one result per target, in target order, equal to the single run's.
void expect_agrees_with_single_runs(const nlohmann::json& doc, const std::vector<std::string>& objects,
                                    const std::vector<std::string>& targets, bool strict);

// The table of several targets: a header of kernels, one row per object, then per object and set of
// kernels its failures share the failing relocations and kernel references, then the verdict line.
struct Matrix {
  std::vector<std::string> kernels;  // the header's columns
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;  // object, cells
  struct Failing {
    std::string heading;               // "OBJ fails on 2 of 3 kernels: a, b"
    std::string object;                // OBJ
    std::vector<std::string> kernels;  // the kernels the heading names
    std::vector<std::string> lines;    // a row, with its reason after a line break when it has one
  };
  std::vector<Failing> failing;
  std::string verdict;  // "N objects x M kernels: K objects fail (P of N*M object/kernel pairs)"
};
Matrix parse_matrix(const std::string& out);
// Whether `line` holds `pieces` in this order.
bool holds_in_order(const std::string& line, const std::vector<std::string>& pieces);

// A failing relocation's verdict as the tables print it, from its result on one kernel (or its record
// folded on one): "POISONED", "poisoned (dead code)", "poisoned (unused alternative)".
std::string verdict_of(const nlohmann::json& result);
// How the tables name files whose names differ: by their names alone.
std::vector<std::string> shown_names(const std::vector<std::string>& paths);
// "3 objects x 1 kernel: 2 fail"; "3 objects x 2 kernels: 2 objects fail (3 of 6 object/kernel pairs)".
std::string verdict_line(std::size_t objects, std::size_t kernels, std::size_t failing_objects,
                         std::size_t failing_pairs);
// The matrix of `objects` on `targets` against single-target runs of each pair; with `failures_only`,
// only the objects that fail somewhere.
void expect_matrix(const RunResult& r, const std::vector<std::string>& objects, const std::vector<std::string>& targets,
                   bool strict, bool failures_only = false);

}  // namespace btfslim::test
