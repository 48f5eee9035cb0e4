// Escaping for CI formats (ci_text.h), shared by budget's and check's reports.
#include "btfslim/ci_text.h"

namespace btfslim {

std::string github_data(std::string_view s) {
  std::string o;
  for (const char c : s) {
    if (c == '%') o += "%25";
    else if (c == '\r') o += "%0D";
    else if (c == '\n') o += "%0A";
    else o += c;
  }
  return o;
}

std::string github_property(std::string_view s) {
  std::string o;
  for (const char c : github_data(s)) {
    if (c == ':') o += "%3A";
    else if (c == ',') o += "%2C";
    else o += c;
  }
  return o;
}

std::string xml_text(std::string_view s) {
  std::string o;
  for (const char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      case '\t': o += "&#9;"; break;
      case '\n': o += "&#10;"; break;
      case '\r': o += "&#13;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          o += "\xef\xbf\xbd";
        else
          o += c;
    }
  }
  return o;
}

}  // namespace btfslim
