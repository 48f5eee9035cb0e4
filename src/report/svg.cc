// The picture of where the bytes go: a strip by kind, and an icicle of the dominator tree.
//
// Two kinds of box, each saying what its width is in a legend at the top, so that no figure means two
// things:
// - The kind strip is measure's KIND table drawn to scale: a box's width is the bytes of all types of
//   that kind (records plus their strings), the same figure as the table's TOTAL column, printed the
//   same way; then the bytes no type owns ([header], [unreferenced strings], ...).
// - Below it the icicle: the top bar is the whole blob; under it the types nothing else keeps alive,
//   grouped by kind ("PTR roots"), then each such type with the types only it keeps alive beneath it,
//   and so on. Here a box's width is a type's retained bytes, what removing it would free; a group's
//   label says "retained" so that it is not read as the kind's size.
// Boxes whose name fits are labelled (cut with "…" where only part fits); boxes narrower than a pixel
// are drawn together as "[N smaller]". Hovering shows the exact figures. Below the icicle, the largest
// types by retained bytes are listed by name, since at this scale few of them are wide enough to carry
// their names in the icicle.
#include "btfslim/escape.h"
#include "btfslim/report.h"
#include "btfslim/terminal.h"

#include <algorithm>
#include <array>

namespace btfslim {
namespace {

constexpr double kWidth = 1200;
constexpr double kRow = 18;
constexpr double kCharWidth = 6.6;  // monospace at font-size 11
constexpr double kStripTop = 78;    // the kind strip, under the title and the legend
constexpr double kTop = kStripTop + 2 * kRow;  // the icicle
constexpr int kMaxDepth = 40;
constexpr std::size_t kListed = 25;  // the largest types, by name

// Text for XML: names in it are escaped already (btfslim/escape.h: no control bytes, valid UTF-8), so
// only markup is left to escape.
void append_xml(std::string& out, std::string_view s) {
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
  }
}

// `label` as much of it as fits a box `w` pixels wide, cut with "…"; empty when not even three
// characters fit.
std::string fitting_label(std::string_view label, double w) {
  const auto fits = static_cast<std::size_t>((w - 4) / kCharWidth);
  if (fits < 3) return "";
  if (display_width(label) <= fits) return std::string(label);
  return fit_to_column(label, fits + 1);  // fits - 1 characters and the ellipsis
}

const char* kind_color(Kind k) {
  switch (k) {
    case Kind::Struct: return "#e8a33d";
    case Kind::Union: return "#d98b2b";
    case Kind::Enum:
    case Kind::Enum64: return "#8fbf5a";
    case Kind::Func: return "#5b9bd5";
    case Kind::FuncProto: return "#7fb2e5";
    case Kind::Typedef: return "#c79fd6";
    case Kind::Ptr: return "#bdbdbd";
    case Kind::Array: return "#a5a5a5";
    case Kind::Var:
    case Kind::Datasec: return "#e57373";
    default: return "#d0d0d0";
  }
}

void box(std::string& svg, double x, double y, double w, const char* color, std::string_view label,
         std::string_view tooltip, std::string_view attributes = {}) {
  svg += "<g";
  svg += attributes;
  svg += "><title>";
  append_xml(svg, tooltip);
  svg += fmt::format("</title><rect x=\"{:.2f}\" y=\"{:.0f}\" width=\"{:.2f}\" height=\"{:.0f}\" fill=\"{}\" "
                     "stroke=\"#fff\" stroke-width=\"0.5\"/>",
                     x, y, w, kRow - 1, color);
  if (const std::string text = fitting_label(label, w); !text.empty()) {
    svg += fmt::format("<text x=\"{:.2f}\" y=\"{:.0f}\">", x + 3, y + kRow - 5);
    append_xml(svg, text);
    svg += "</text>";
  }
  svg += "</g>\n";
}

void bar(std::string& svg, double x, int depth, double w, const char* color, std::string_view label,
         std::string_view tooltip) {
  box(svg, x, kTop + depth * kRow, w, color, label, tooltip, " class=\"type\"");
}

const char* kind_color(unsigned kind) { return kind == 0 ? "#eeeeee" : kind_color(static_cast<Kind>(kind)); }

// measure's KIND table drawn to scale, one box per row, each with its table figure.
void kind_strip(std::string& svg, const FileFootprint& file, double scale) {
  double x = 0;
  for (const KindTotal& k : kind_totals(file)) {
    const double w = k.total_bytes * scale;
    const std::string figure = human_size(k.total_bytes);
    if (w >= 1) {
      // The kind and its table figure where both fit whole, else the kind alone (cut if need be).
      const std::string both = k.label + " " + figure;
      const std::string label = fitting_label(both, w) == both ? both : k.label;
      box(svg, x, kStripTop, w, kind_color(k.kind), label,
          k.kind ? fmt::format("{}: {} types, {} bytes (records and their strings)", k.label,
                               with_commas(k.type_count), k.total_bytes)
                 : fmt::format("{}: {} bytes", k.label, k.total_bytes),
          fmt::format(" class=\"kind\" data-kind=\"{}\" data-bytes=\"{}\" data-figure=\"{}\"", k.label,
                      k.total_bytes, figure));
    }
    x += w;
  }
}

}  // namespace

std::string render_svg(const Btf& btf, const Footprint& fp) {
  const std::uint32_t n = btf.own_count();
  // Dominator children in CSR form, each list largest first.
  std::vector<std::uint32_t> start(n + 2, 0), children;
  std::vector<std::uint32_t> top;  // children of the virtual root
  for (std::uint32_t v = 0; v < n; ++v) {
    if (fp.dominators.idom[v] == kVirtualRoot)
      top.push_back(v);
    else
      ++start[fp.dominators.idom[v] + 1];
  }
  for (std::uint32_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  children.resize(start[n]);
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
  for (std::uint32_t v = 0; v < n; ++v)
    if (const auto d = fp.dominators.idom[v]; d != kVirtualRoot) children[fill[d]++] = v;
  auto larger = [&](std::uint32_t a, std::uint32_t b) {
    return fp.retained[a] != fp.retained[b] ? fp.retained[a] > fp.retained[b] : a < b;
  };
  for (std::uint32_t v = 0; v < n; ++v) std::sort(children.begin() + start[v], children.begin() + start[v + 1], larger);
  std::sort(top.begin(), top.end(), larger);

  const double file = static_cast<double>(fp.file.file_bytes);
  const double scale = file > 0 ? kWidth / file : 0;
  std::string body;
  int deepest = 0;
  bar(body, 0, 0, kWidth, "#f2f2f2", fmt::format("{} ({})", esc(btf.name()), human_size(file)),
      fmt::format("{}: {} bytes", esc(btf.name()), fp.file.file_bytes));

  struct Item {
    std::uint32_t node;
    double x;
    int depth;
  };
  std::vector<Item> stack;
  // Types too narrow to draw are drawn together as one "[N smaller]" bar after their wider siblings.
  auto smaller = [&](double x, int depth, std::size_t count, double bytes) {
    if (count == 0 || bytes * scale < 1) return;
    const std::string label = fmt::format("[{} smaller]", with_commas(count));
    bar(body, x, depth, bytes * scale, "#e0e0e0", label,
        fmt::format("{} types, each under a pixel wide: {:.0f} bytes retained together", with_commas(count), bytes));
  };
  // Level 1 groups the types nothing else keeps alive by kind (there are tens of thousands of them, each
  // small); level 2 holds those types, and below them their dominator subtrees.
  double x = 0;
  {
    std::array<std::vector<std::uint32_t>, kMaxKind + 1> by_kind;
    std::array<double, kMaxKind + 1> kind_bytes{};
    for (const std::uint32_t v : top) {
      const auto k = static_cast<unsigned>(btf.type(btf.first_id() + v).kind());
      by_kind[k].push_back(v);
      kind_bytes[k] += fp.retained[v];
    }
    std::vector<unsigned> kinds;
    for (unsigned k = 1; k <= kMaxKind; ++k)
      if (!by_kind[k].empty()) kinds.push_back(k);
    std::sort(kinds.begin(), kinds.end(), [&](unsigned a, unsigned b) { return kind_bytes[a] > kind_bytes[b]; });
    for (const unsigned k : kinds) {
      const double w = kind_bytes[k] * scale;
      const auto kind = static_cast<Kind>(k);
      if (w >= 1)
        bar(body, x, 1, w, kind_color(kind),
            fmt::format("{} roots, {} retained", kind_name(kind), human_size(kind_bytes[k])),
            fmt::format("{} {} types that nothing else keeps alive, and what only they keep alive: {:.0f} bytes "
                        "retained (the kind strip above has the bytes of the kind's own types)",
                        with_commas(by_kind[k].size()), kind_name(kind), kind_bytes[k]));
      std::size_t narrow = 0;
      double narrow_bytes = 0;
      double cx = x;
      for (const std::uint32_t v : by_kind[k]) {  // already largest first
        if (fp.retained[v] * scale >= 1) {
          stack.push_back({v, cx, 2});
          cx += fp.retained[v] * scale;
        } else {
          ++narrow;
          narrow_bytes += fp.retained[v];
        }
      }
      smaller(cx, 2, narrow, narrow_bytes);
      x += w;
    }
  }
  std::vector<std::pair<std::string, double>> overhead{{"[header]", fp.file.header_bytes}};
  for (std::size_t use = 0; use < kExtUses; ++use)
    overhead.emplace_back(ext_row_label(static_cast<ExtUse>(use)), fp.file.ext_string_bytes[use]);
  overhead.emplace_back("[unreferenced strings]", fp.file.unreferenced_string_bytes);
  overhead.emplace_back("[gaps]", fp.file.gap_bytes);
  for (const auto& [label, bytes] : overhead) {
    if (bytes * scale >= 1)
      bar(body, x, 1, bytes * scale, "#eeeeee", label, fmt::format("{}: {} bytes, owned by no type", label, bytes));
    x += bytes * scale;
  }
  std::reverse(stack.begin(), stack.end());
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    const double w = fp.retained[it.node] * scale;
    if (w < 1) continue;
    const TypeId id = btf.first_id() + it.node;
    const TypeView t = btf.type(id);
    const std::string name = type_summary(btf, id);  // as measure's type table spells it: "struct net *"
    bar(body, it.x, it.depth, w, kind_color(t.kind()), name,
        fmt::format("[{}] {} {}: retained {:.0f} bytes ({:.2f}%), own {:.0f} bytes", id, kind_name(t.kind()), name,
                    fp.retained[it.node], 100.0 * fp.retained[it.node] / file, fp.own[it.node]));
    deepest = std::max(deepest, it.depth);
    if (it.depth + 1 >= kMaxDepth) continue;
    double cx = it.x + fp.own[it.node] * scale;  // the type's own bytes first, then what it keeps alive
    const std::size_t first = stack.size();
    std::size_t narrow = 0;
    double narrow_bytes = 0;
    for (std::uint32_t i = start[it.node]; i < start[it.node + 1]; ++i) {
      const std::uint32_t c = children[i];
      if (fp.retained[c] * scale < 1) {
        ++narrow;
        narrow_bytes += fp.retained[c];
        continue;
      }
      stack.push_back({c, cx, it.depth + 1});
      cx += fp.retained[c] * scale;
    }
    smaller(cx, it.depth + 1, narrow, narrow_bytes);
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
  }

  // The largest types by retained bytes, by name: bars scaled to the first.
  std::vector<std::uint32_t> largest(n);
  for (std::uint32_t v = 0; v < n; ++v) largest[v] = v;
  const std::size_t listed = std::min<std::size_t>(kListed, n);
  std::partial_sort(largest.begin(), largest.begin() + static_cast<std::ptrdiff_t>(listed), largest.end(), larger);
  const double list_top = kTop + (deepest + 3) * kRow;
  body += fmt::format("<text x=\"4\" y=\"{:.0f}\" font-size=\"13\">", list_top + 12);
  append_xml(body, fmt::format("The {} largest types by retained bytes (bar width: retained bytes, scaled to the first)",
                               listed));
  body += "</text>\n";
  const double bar_room = kWidth * 0.45;
  for (std::size_t i = 0; i < listed; ++i) {
    const std::uint32_t v = largest[i];
    const TypeId id = btf.first_id() + v;
    const TypeView t = btf.type(id);
    const double y = list_top + kRow * static_cast<double>(i + 1);
    const double w = fp.retained[largest[0]] > 0 ? std::max(1.0, bar_room * fp.retained[v] / fp.retained[largest[0]]) : 1;
    const std::string name = fmt::format("{}", type_summary(btf, id));  // as measure's type table spells it
    body += fmt::format("<g class=\"largest\"><rect x=\"4\" y=\"{:.0f}\" width=\"{:.2f}\" height=\"{:.0f}\" fill=\"{}\"/>",
                        y, w, kRow - 3, kind_color(t.kind()));
    body += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">", bar_room + 12, y + kRow - 6);
    append_xml(body, fmt::format("{} retained, {} own  [{}] {} {}", human_size(fp.retained[v]), human_size(fp.own[v]),
                                 id, kind_name(t.kind()), name));
    body += "</text></g>\n";
  }

  const double height = list_top + kRow * static_cast<double>(listed + 2);
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"monospace\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      "<text x=\"4\" y=\"16\" font-size=\"14\">",
      kWidth, height, kWidth, height);
  append_xml(svg, fmt::format("{}: where the BTF bytes go ({} types, {}, {} bytes)", esc(btf.name()), with_commas(n),
                              human_size(fp.file.file_bytes), with_commas(fp.file.file_bytes)));
  svg += "</text>\n<g class=\"legend\" fill=\"#333\">\n<text x=\"4\" y=\"34\">";
  append_xml(svg, "Kind strip: a box's width is the bytes of all types of that kind (records and their strings), "
                  "as the TOTAL column of measure's kind table.");
  svg += "</text>\n<text x=\"4\" y=\"50\">";
  append_xml(svg, "Tree below it: a box's width is a type's retained bytes, what removing it frees; under a box, "
                  "the types only it keeps alive.");
  svg += "</text>\n<text x=\"4\" y=\"66\">";
  append_xml(svg, "\"KIND roots\": the types nothing else keeps alive, by kind. \"[N smaller]\": types under a pixel "
                  "wide, together. Hover for exact figures.");
  svg += "</text>\n</g>\n";
  kind_strip(svg, fp.file, scale);
  svg += body;
  svg += "</svg>\n";
  return svg;
}

}  // namespace btfslim
