// The picture of where the bytes go: an icicle of the dominator tree, widths by retained bytes.
//
// The top bar is the whole blob; below it each type that nothing else keeps alive, with the types only
// it keeps alive beneath it, and so on. A bar's width is what removing that type would free, so wide
// bars deep down are the surprising costs. Bars narrower than a pixel are not drawn (their bytes still
// count in their parent's width); hovering shows the exact figures.
#include "btfslim/escape.h"
#include "btfslim/report.h"

#include <algorithm>
#include <array>

namespace btfslim {
namespace {

constexpr double kWidth = 1200;
constexpr double kRow = 18;
constexpr double kTop = 40;
constexpr int kMaxDepth = 40;

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

// The first `n` bytes of `s`, shortened so as not to end inside a UTF-8 character.
std::string_view utf8_prefix(std::string_view s, std::size_t n) {
  if (n >= s.size()) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
  return s.substr(0, n);
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

void bar(std::string& svg, double x, int depth, double w, const char* color, std::string_view label,
         std::string_view tooltip) {
  const double y = kTop + depth * kRow;
  svg += "<g><title>";
  append_xml(svg, tooltip);
  svg += fmt::format("</title><rect x=\"{:.2f}\" y=\"{:.0f}\" width=\"{:.2f}\" height=\"{:.0f}\" fill=\"{}\" "
                     "stroke=\"#fff\" stroke-width=\"0.5\"/>",
                     x, y, w, kRow - 1, color);
  const auto fits = static_cast<std::size_t>(w / 7);
  if (fits >= 4) {
    svg += fmt::format("<text x=\"{:.2f}\" y=\"{:.0f}\">", x + 3, y + kRow - 5);
    append_xml(svg, label.size() <= fits ? label : std::string(utf8_prefix(label, fits - 2)) + "..");
    svg += "</text>";
  }
  svg += "</g>\n";
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
        bar(body, x, 1, w, kind_color(kind), fmt::format("{} ({})", kind_name(kind), human_size(kind_bytes[k])),
            fmt::format("{} {} types that nothing else keeps alive: {:.0f} bytes retained",
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
    if (bytes * scale >= 1) bar(body, x, 1, bytes * scale, "#eeeeee", label, fmt::format("{}: {} bytes", label, bytes));
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
    const std::string name = escape(name_or_anon(btf, t.name_off()));
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

  const double height = kTop + (deepest + 2) * kRow;
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"monospace\" font-size=\"11\">\n"
      "<text x=\"4\" y=\"16\" font-size=\"14\">",
      kWidth, height, kWidth, height);
  append_xml(svg, fmt::format("{}: where the BTF bytes go (width = retained bytes; hover for figures)", esc(btf.name())));
  svg += "</text>\n<text x=\"4\" y=\"32\" fill=\"#555\">";
  append_xml(svg, fmt::format("{} types, {} bytes; a bar's children are the types only it keeps alive",
                              with_commas(n), with_commas(fp.file.file_bytes)));
  svg += "</text>\n";
  svg += body;
  svg += "</svg>\n";
  return svg;
}

}  // namespace btfslim
