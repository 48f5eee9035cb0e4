// Text for what CI systems read: GitHub Actions workflow commands and JUnit XML.
#pragma once

#include <string>
#include <string_view>

namespace btfslim {

// A workflow command's message (`::error ...::MESSAGE`), escaped as actions/toolkit's command.ts does:
// '%', CR and LF as %25, %0D, %0A, so that a message of several lines stays one command.
std::string github_data(std::string_view s);
// A workflow command's property value (`file=...`, `title=...`): as github_data, and ':' and ',' too.
std::string github_property(std::string_view s);

// Text for an XML attribute or element: markup escaped, tabs and line breaks as references, and the
// other control characters (not allowed in XML 1.0 at all) as U+FFFD.
std::string xml_text(std::string_view s);

// A Markdown table cell: no line breaks, and the characters that would end the cell or start markup
// escaped.
std::string markdown_cell(std::string_view s);
// Appends `text` to GitHub Actions' step summary at `path` ($GITHUB_STEP_SUMMARY), so that the job's
// page shows it. An append that fails (a full disk, a file-size limit) is undone, so that the page
// shows no part of a table, and throws InputError.
void append_step_summary(const std::string& path, const std::string& text);

}  // namespace btfslim
