// Printing `btfslim budget`: every limit with its verdict, as text, JSON, JUnit XML or GitHub Actions
// workflow commands, and the Markdown table for a job's step summary.
//
// Each line cites the limit as FILE:LINE (the config as named on the command line), so that editors,
// GitLab's JUnit view and GitHub's annotations all lead to the line to change. Whatever the format,
// every limit is listed: a report that stopped at the first breach would hide the second.
#include "btfslim/budget.h"
#include "btfslim/ci_text.h"
#include "btfslim/escape.h"

#include <algorithm>
#include <cstdlib>

namespace btfslim {
namespace {

std::string bytes_text(std::uint64_t n) { return with_commas(n) + " B"; }

// A budget's message is the config author's prose and may run over several lines: each line escaped
// (btfslim/escape.h), the line breaks kept for the formats that show them.
std::string message_lines(std::string_view message) {
  std::string out;
  for (std::size_t start = 0; start <= message.size();) {
    std::size_t end = message.find('\n', start);
    if (end == std::string_view::npos) end = message.size();
    if (start) out += '\n';
    append_escaped(out, message.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string percent_text(std::uint64_t part, std::uint64_t whole) {
  return whole ? fmt::format("{:.2f}%", percent(static_cast<double>(part), static_cast<double>(whole))) : "";
}

// "1%" as written: millionths of a percent back to a short decimal.
std::string written_percent(std::uint64_t micro) {
  std::string s = fmt::format("{}.{:06}", micro / 1'000'000, micro % 1'000'000);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + "%";
}

// The limit as a reader meets it: `5.5 MiB (5,767,168 B)`, `+1% (5,571,010 B)`.
std::string limit_text(const LimitResult& r) {
  const BudgetLimit& l = *r.limit;
  if (l.growth) {
    const std::string growth = l.percent ? written_percent(*l.percent) : l.written;
    return fmt::format("+{} ({})", esc(growth), bytes_text(r.allowed));
  }
  return l.written == std::to_string(l.bytes) ? bytes_text(l.bytes)
                                              : fmt::format("{} ({})", esc(l.written), bytes_text(l.bytes));
}

std::string signed_bytes(std::uint64_t now, std::uint64_t then) {
  return now >= then ? fmt::format("+{}", bytes_text(now - then)) : fmt::format("-{}", bytes_text(then - now));
}

std::string growth_percent(std::uint64_t now, std::uint64_t then) {
  if (then == 0) return "";
  const double p = percent(static_cast<double>(now) - static_cast<double>(then), static_cast<double>(then));
  return fmt::format(" ({}{:.2f}%)", p >= 0 ? "+" : "", p);
}

// One limit's verdict without its place: "vmlinux BTF: kernel_memory of X is N B, over the limit ...".
std::string verdict(const LimitResult& r) {
  std::string s = fmt::format("{}: {} of {} is {}", esc(r.budget->name), esc(r.what), esc(r.input), bytes_text(r.measured));
  if (r.baseline)
    s += fmt::format(", {}{} from the baseline {}", signed_bytes(r.measured, *r.baseline),
                     growth_percent(r.measured, *r.baseline), bytes_text(*r.baseline));
  if (r.exceeded()) {
    const std::string p = percent_text(r.excess(), r.allowed);
    s += fmt::format(", over the limit {} by {}{}", limit_text(r), bytes_text(r.excess()),
                     p.empty() ? "" : " (" + p + ")");
  } else {
    s += fmt::format(", within the limit {}: {} to spare", limit_text(r), bytes_text(r.headroom()));
  }
  return s;
}

std::size_t exceeded_count(const std::vector<LimitResult>& results) {
  std::size_t n = 0;
  for (const LimitResult& r : results) n += r.exceeded();
  return n;
}

std::string conclusion(const std::vector<LimitResult>& results) {
  const std::size_t n = exceeded_count(results);
  if (n == 0) return fmt::format("all {} limit{} hold", results.size(), results.size() == 1 ? "" : "s");
  return fmt::format("{} of {} limit{} exceeded", n, results.size(), results.size() == 1 ? "" : "s");
}

void print_text(const std::vector<LimitResult>& results, const std::string& file, OutputBuffer& out) {
  for (const LimitResult& r : results) {
    out.print("{}:{}: {}: {}\n", esc(file), r.limit->line, r.exceeded() ? "EXCEEDED" : "ok", verdict(r));
    if (!r.exceeded() || r.budget->message.empty()) continue;
    const std::string message = message_lines(r.budget->message);
    for (std::size_t start = 0; start <= message.size();) {
      const std::size_t end = std::min(message.find('\n', start), message.size());
      out.print("    {}\n", std::string_view(message).substr(start, end - start));
      start = end + 1;
    }
  }
  out.print("{}: {}\n", esc(file), conclusion(results));
}

void print_json(const std::vector<LimitResult>& results, const std::string& file, OutputBuffer& out) {
  JsonWriter w(out);
  w.begin_object();
  w.field("config", file);
  w.field("limit_count", std::uint64_t{results.size()});
  w.field("exceeded_count", std::uint64_t{exceeded_count(results)});
  w.key("limits");
  w.begin_array();
  for (const LimitResult& r : results) {
    const BudgetLimit& l = *r.limit;
    w.begin_object();
    w.field("budget", r.budget->name);
    w.field("message", r.budget->message);
    w.field("file", r.input);
    w.field("key", l.key);
    w.field("quantity", r.what);
    w.field("line", l.line);
    w.field("column", l.column);
    w.field("written", l.written);
    w.field("growth", l.growth);
    if (l.percent) w.field("growth_percent", static_cast<double>(*l.percent) / 1e6);
    if (r.baseline) w.field("baseline_bytes", *r.baseline);
    w.field("limit_bytes", r.allowed);
    w.field("measured_bytes", r.measured);
    w.field("status", r.exceeded() ? "exceeded" : "ok");
    w.field("excess_bytes", r.excess());
    w.field("excess_percent", r.allowed ? percent(static_cast<double>(r.excess()), static_cast<double>(r.allowed)) : 0.0);
    w.field("headroom_bytes", r.headroom());
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.finish();
}

// JUnit XML as GitLab and Jenkins read it: one <testsuite> per budget and input, one <testcase> per
// limit, a <failure> for each breach.
void print_junit(const std::vector<LimitResult>& results, const std::string& file, OutputBuffer& out) {
  out.write("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  out.print("<testsuites name=\"btfslim budget\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n", results.size(),
            exceeded_count(results));
  for (std::size_t i = 0; i < results.size();) {
    std::size_t end = i;
    std::size_t failures = 0;
    while (end < results.size() && results[end].budget == results[i].budget && results[end].input == results[i].input)
      failures += results[end++].exceeded();
    out.print("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" file=\"{}\">\n",
              xml_text(fmt::format("{} ({})", esc(results[i].budget->name), esc(results[i].input))), end - i, failures,
              xml_text(escape(file)));
    for (; i < end; ++i) {
      const LimitResult& r = results[i];
      out.print("    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" line=\"{}\"",
                xml_text(fmt::format("btfslim.budget.{}", esc(r.budget->name))), xml_text(escape(r.limit->key)), xml_text(escape(file)), r.limit->line);
      if (!r.exceeded()) {
        out.write("/>\n");
        continue;
      }
      std::string detail = fmt::format("{}:{}: {}", esc(file), r.limit->line, verdict(r));
      if (!r.budget->message.empty()) detail.append("\n").append(message_lines(r.budget->message));
      out.print(">\n      <failure type=\"budget exceeded\" message=\"{}\">{}</failure>\n    </testcase>\n",
                xml_text(verdict(r)), xml_text(detail));
    }
    out.write("  </testsuite>\n");
  }
  out.write("</testsuites>\n");
}

// GitHub Actions: an ::error annotation on the config's line for each breach, plain lines for the rest.
void print_github(const std::vector<LimitResult>& results, const std::string& file, OutputBuffer& out) {
  for (const LimitResult& r : results) {
    if (!r.exceeded()) {
      out.print("{}:{}: ok: {}\n", esc(file), r.limit->line, verdict(r));
      continue;
    }
    std::string text = verdict(r);
    if (!r.budget->message.empty()) text.append("\n").append(message_lines(r.budget->message));
    out.print("::error file={},line={},col={},title={}::{}\n", github_property(escape(file)), r.limit->line, r.limit->column,
              github_property(fmt::format("btfslim budget: {}", esc(r.budget->name))), github_data(text));
  }
  out.print("{}: {}\n", esc(file), conclusion(results));
}

}  // namespace

void print_budget_report(const std::vector<LimitResult>& results, const std::string& file, BudgetFormat format,
                         OutputBuffer& out) {
  switch (format) {
    case BudgetFormat::Table:
      return print_text(results, file, out);
    case BudgetFormat::Json:
      return print_json(results, file, out);
    case BudgetFormat::Junit:
      return print_junit(results, file, out);
    case BudgetFormat::Github:
      return print_github(results, file, out);
  }
}

std::string budget_markdown_summary(const std::vector<LimitResult>& results, const std::string& file) {
  std::string s = fmt::format("### btfslim budget: {}\n\n", markdown_cell(conclusion(results)));
  s += "| | Budget | Limit | Input | Measured | Allowed | Over by | Set at |\n";
  s += "|:-:|---|---|---|--:|--:|--:|---|\n";
  for (const LimitResult& r : results) {
    const std::string p = percent_text(r.excess(), r.allowed);
    const std::string over = !r.exceeded() ? "" : p.empty() ? bytes_text(r.excess())
                                                            : fmt::format("{} ({})", bytes_text(r.excess()), p);
    s += fmt::format("| {} | {} | {} = {} | {} | {} | {} | {} | {}:{} |\n", r.exceeded() ? ":x:" : ":white_check_mark:",
                     markdown_cell(escape(r.budget->name)), markdown_cell(escape(r.limit->key)),
                     markdown_cell(escape(r.limit->written)), markdown_cell(escape(r.input)), bytes_text(r.measured),
                     bytes_text(r.allowed), markdown_cell(over), markdown_cell(escape(file)), r.limit->line);
  }
  // What to do about each breach, once per budget.
  std::vector<const Budget*> told;
  for (const LimitResult& r : results) {
    if (!r.exceeded() || r.budget->message.empty()) continue;
    if (std::find(told.begin(), told.end(), r.budget) != told.end()) continue;
    if (told.empty()) s += "\n";
    told.push_back(r.budget);
    s += fmt::format("- **{}**: {}\n", markdown_cell(escape(r.budget->name)),
                     markdown_cell(message_lines(r.budget->message)));
  }
  return s + "\n";
}

}  // namespace btfslim
