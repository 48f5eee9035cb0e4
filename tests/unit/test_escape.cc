// Escaping text from inputs for printing ([escape]): what btfslim/escape.h promises, byte for byte.
#include "btfslim/error.h"
#include "btfslim/escape.h"
#include "btfslim/output.h"

#include <catch2/catch.hpp>

#include <string>

namespace btfslim::test {
namespace {

TEST_CASE("printable ASCII is printed as it is, without a copy being needed", "[escape]") {
  const std::string plain = "task_struct (anon) [12] 'x' -> y, z; #$%&*+/:<=>?@^`{|}~";
  CHECK(is_plain(plain));
  CHECK(escape(plain) == plain);
  CHECK(fmt::format("{}", esc(plain)) == plain);
  CHECK(is_plain(""));
  CHECK(escape("").empty());
}

TEST_CASE("control bytes, DEL and backslashes are escaped C-style", "[escape]") {
  CHECK_FALSE(is_plain("a\nb"));
  CHECK(escape("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(escape(std::string("\0\x01\x0c\x1b[31m\x7f", 9)) == "\\x00\\x01\\x0c\\x1b[31m\\x7f");
  CHECK(escape("back\\slash\\") == "back\\\\slash\\\\");
  CHECK_FALSE(is_plain("back\\slash"));
  // An escape of an escaped name is not escaped again by the one-line guard: backslashes stay.
  CHECK(escape_controls("already \\x0c escaped\n") == "already \\x0c escaped\\n");
  CHECK(escape_controls("plain") == "plain");
}

TEST_CASE("well-formed UTF-8 is kept, ill-formed bytes escaped one by one", "[escape]") {
  const std::string kept[] = {"caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf",
                              "\xc2\xa0", "\xef\xbf\xbd"};
  for (const std::string& s : kept) {
    INFO(escape(s));
    CHECK(escape(s) == s);
  }
  struct Case {
    std::string in, out;
  };
  const Case cases[] = {
      {"\x80", "\\x80"},                             // a lone continuation byte
      {"\xc0\xaf", "\\xc0\\xaf"},                    // overlong '/'
      {"\xc1\xbf", "\\xc1\\xbf"},                    // overlong
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},           // overlong, three bytes
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},           // a UTF-16 surrogate
      {"\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf"},  // overlong, four bytes
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},  // past U+10FFFF
      {"\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80"},
      {"\xff\xfe", "\\xff\\xfe"},
      {"ab\xe6\x97", "ab\\xe6\\x97"},                // cut short at the end
      {"\xe6\x97z", "\\xe6\\x97z"},                  // cut short by ASCII
      {"\xc3\xa9\xc3", "\xc3\xa9\\xc3"},             // a good character, then half of one
  };
  for (const Case& c : cases) {
    INFO(escape(c.in));
    CHECK(escape(c.in) == c.out);
    CHECK(escape_controls(c.in) == c.out);
  }
}

TEST_CASE("invisible and reordering code points are shown as \\u escapes", "[escape]") {
  CHECK(escape("rtl\xe2\x80\xae" "evil") == "rtl\\u202eevil");  // RIGHT-TO-LEFT OVERRIDE
  CHECK(escape("\xe2\x81\xa6x\xe2\x81\xa9") == "\\u2066x\\u2069");  // isolates
  CHECK(escape("\xc2\x85") == "\\u0085");                          // NEXT LINE, a C1 control
  CHECK(escape("\xc2\x9b" "31m") == "\\u009b31m");                 // CSI, a terminal escape in one code point
  CHECK(escape("zero\xe2\x80\x8bwidth") == "zero\\u200bwidth");
  CHECK(escape("\xe2\x80\xa8") == "\\u2028");                      // LINE SEPARATOR
  CHECK(escape("\xef\xbb\xbf" "bom") == "\\ufeffbom");
  CHECK(escape("\xf3\xa0\x81\x81") == "\\U000e0041");              // a tag character
}

TEST_CASE("a string section is plain when every NUL-separated string in it is", "[escape]") {
  auto section = [](const std::string& s) {
    return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  };
  static constexpr char kGood[] = "\0int\0task_struct\0long unsigned int";  // and the literal's own NUL
  const std::string good(kGood, sizeof kGood);
  CHECK(all_plain(section(good)));
  CHECK(all_plain(section("")));
  // Each offender at every position of an 8-byte word, and in the tail past the last whole word.
  for (const char bad : {'\x01', '\x1f', '\n', '\x7f', '\\', '\x80', '\xff'}) {
    for (std::size_t at = 0; at < 19; ++at) {
      std::string s(19, 'a');
      s[3] = '\0';
      s[at] = bad;
      INFO("byte " << static_cast<int>(static_cast<unsigned char>(bad)) << " at " << at);
      CHECK_FALSE(all_plain(section(s)));
    }
  }
  // Bytes just inside the printable range pass.
  CHECK(all_plain(section(std::string("\x20\x7e\x21\x5b\x5d\x00\x30\x39\x41\x5a\x61", 11))));
}

TEST_CASE("esc() formats escaped, width and alignment applying to the escaped text", "[escape]") {
  CHECK(fmt::format("'{}'", esc("a\nb")) == "'a\\nb'");
  CHECK(fmt::format("{:<8}|", esc("a\nb")) == "a\\nb    |");
  CHECK(fmt::format("{:>6}|", esc("ab")) == "    ab|");
}

TEST_CASE("CSV fields: escaped, then quoted as RFC 4180 asks", "[escape]") {
  CHECK(csv_field("task_struct") == "task_struct");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("line\nbreak") == "line\\nbreak");
  CHECK(csv_field("x,\r") == "\"x,\\r\"");
  CHECK(csv_quoted("[1,234 others]") == "\"[1,234 others]\"");
  CHECK(csv_quoted("back\\slash") == "back\\slash");  // display text is escaped already
}

// What JSON.parse / nlohmann::json read back from a JSON string btfslim wrote.
std::string json_string(std::string_view s) {
  fmt::memory_buffer out;
  append_json_string(out, s);
  return fmt::to_string(out);
}

TEST_CASE("JSON strings: valid JSON whatever the bytes, and what is text reads back the same", "[escape]") {
  CHECK(json_string("task_struct") == "\"task_struct\"");
  CHECK(json_string("say \"hi\" \\ there") == "\"say \\\"hi\\\" \\\\ there\"");
  CHECK(json_string("a\nb\tc\rd\x01\x7f") == "\"a\\nb\\tc\\rd\\u0001\\u007f\"");
  // Well-formed UTF-8 as it is: a file under /home/josé/ is named so in the JSON too.
  CHECK(json_string("/home/jos\xc3\xa9/\xe2\x82\xac") == "\"/home/jos\xc3\xa9/\xe2\x82\xac\"");
  // Invisible code points by JSON's escapes, which read back as the same code points.
  CHECK(json_string("\xe2\x80\xae" "abc") == "\"\\u202eabc\"");                 // RIGHT-TO-LEFT OVERRIDE
  CHECK(json_string("\xc2\x9b") == "\"\\u009b\"");                             // CSI
  CHECK(json_string("\xf3\xa0\x80\x81") == "\"\\udb40\\udc01\"");           // TAG LANGUAGE, U+E0001
  // Ill-formed UTF-8: each byte as the code point of its value (the one thing that does not read back).
  CHECK(json_string("\xff\xc3(") == "\"\\u00ff\\u00c3(\"");
}

TEST_CASE("an InputError is one line: its subject escaped, control bytes in its problem too", "[escape]") {
  const InputError e("dir/bad\nname\x1b.btf", "section 'a\x0c" "b' \\ has no\ncontents");
  CHECK(std::string(e.what()) == "dir/bad\\nname\\x1b.btf: section 'a\\x0cb' \\ has no\\ncontents");
  const InputError bare("", "no\rsubject");
  CHECK(std::string(bare.what()) == "no\\rsubject");
}

}  // namespace
}  // namespace btfslim::test
