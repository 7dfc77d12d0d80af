#pragma once
// The two Python string operations the GLM chat template relies on, reproduced exactly so the
// rendered prompt matches transformers byte for byte.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace strata::chat {

// str.strip() with no argument: removes leading and trailing characters for which Python's
// str.isspace() is true (ASCII whitespace, U+001C..U+001F, U+0085, U+00A0, U+1680,
// U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000). `text` is UTF-8.
std::string_view pythonStrip(std::string_view text);
std::string_view pythonLstrip(std::string_view text);
std::string_view pythonRstrip(std::string_view text);

// json.dumps(value, ensure_ascii=False) with the default separators (", " and ": ") and keys in
// the order given: what transformers' `tojson` filter prints. Non-ASCII is written raw; '"',
// '\\' and control characters are escaped as Python does (\n, \t, ..., \u00XX in lowercase hex).
// Floats are written as Python's repr (shortest round trip, "1.0", "1e-05", "1e+16").
std::string pythonJsonDumps(const nlohmann::ordered_json& value);

}  // namespace strata::chat
