// Python's str.strip() and json.dumps(ensure_ascii=False), as the chat template sees them.
#include "chat/python_text.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace strata::chat {
namespace {

bool isPythonSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// Decodes the UTF-8 character starting at text[pos]; returns its length, 0 if malformed.
size_t decodeAt(std::string_view text, size_t pos, char32_t& out) {
  const auto b0 = static_cast<unsigned char>(text[pos]);
  size_t length = 0;
  if (b0 < 0x80) {
    out = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    length = 2;
    out = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3;
    out = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4;
    out = b0 & 0x07;
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    const auto b = static_cast<unsigned char>(text[pos + i]);
    if ((b & 0xC0) != 0x80) return 0;
    out = (out << 6) | (b & 0x3F);
  }
  return length;
}

// Python's float repr: the shortest digits that round-trip, in fixed notation when the decimal
// point falls within -4 < position <= 16 (always with a fractional part, "100.0"), otherwise
// in exponent notation with a signed exponent of at least two digits ("1e-05", "1.5e+300").
std::string pythonFloatRepr(double value) {
  char buffer[64];
  // Shortest round-trip digits in scientific form: "-d.ddde+XX" (the same digits Python's
  // repr picks: both are the shortest string that reads back as the same double).
  const auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string sci(buffer, ec == std::errc() ? end : buffer);
  std::string sign;
  if (!sci.empty() && sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
  const int exponent = std::atoi(sci.c_str() + e + 1);
  const int point = exponent + 1;  // digits before the decimal point
  const int count = static_cast<int>(digits.size());

  std::string out = sign;
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out.append("0.").append(static_cast<size_t>(-point), '0').append(digits);
    } else if (point >= count) {
      out.append(digits).append(static_cast<size_t>(point - count), '0').append(".0");
    } else {
      const auto whole = static_cast<size_t>(point);
      out.append(digits, 0, whole).append(".").append(digits, whole);
    }
    return out;
  }
  out.append(digits, 0, 1);
  if (count > 1) out.append(".").append(digits, 1);
  char exp[16];
  std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exp;
}

void dumpString(const std::string& text, std::string& out) {
  out += '"';
  for (const char ch : text) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(ch));
          out += escaped;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void dump(const nlohmann::ordered_json& value, std::string& out) {
  using Type = nlohmann::ordered_json::value_t;
  switch (value.type()) {
    case Type::null:
      out += "null";
      break;
    case Type::boolean:
      out += value.get<bool>() ? "true" : "false";
      break;
    case Type::number_integer:
      out += std::to_string(value.get<int64_t>());
      break;
    case Type::number_unsigned:
      out += std::to_string(value.get<uint64_t>());
      break;
    case Type::number_float:
      out += pythonFloatRepr(value.get<double>());
      break;
    case Type::string:
      dumpString(value.get_ref<const std::string&>(), out);
      break;
    case Type::array: {
      out += '[';
      bool first = true;
      for (const auto& item : value) {
        if (!first) out += ", ";
        first = false;
        dump(item, out);
      }
      out += ']';
      break;
    }
    case Type::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ", ";
        first = false;
        dumpString(key, out);
        out += ": ";
        dump(item, out);
      }
      out += '}';
      break;
    }
    default:
      out += "null";
      break;  // binary / discarded: never produced by the JSON parser
  }
}

}  // namespace

std::string_view pythonLstrip(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size()) {
    char32_t c = 0;
    const size_t length = decodeAt(text, begin, c);
    if (length == 0 || !isPythonSpace(c)) break;
    begin += length;
  }
  return text.substr(begin);
}

std::string_view pythonRstrip(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && end - start < 4 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
      --start;
    char32_t c = 0;
    const size_t length = decodeAt(text, start, c);
    if (length != end - start || !isPythonSpace(c)) break;
    end = start;
  }
  return text.substr(0, end);
}

std::string_view pythonStrip(std::string_view text) { return pythonRstrip(pythonLstrip(text)); }

std::string pythonJsonDumps(const nlohmann::ordered_json& value) {
  std::string out;
  dump(value, out);
  return out;
}

}  // namespace strata::chat
