// The GBNF rules every JSON grammar shares: values, strings, numbers and the white space
// policy: the separators are exactly ": " and ", " (Python's json.dumps style, what models
// mostly write) and there is no other white space. One fixed spelling means the grammar forces
// every separator and key (speculative decoding drafts them for free), and a model cannot pad
// forever.
#include "grammar/json_rules.h"

#include <map>
#include <string>
#include <vector>

namespace strata::grammar {
namespace {

// name -> body. Numbers keep at most 16 integer and 16 fraction digits and a two-digit
// exponent: every double round-trips, and a model cannot write digits without end.
const std::map<std::string, std::string>& primitives() {
  static const std::map<std::string, std::string> rules = {
      {"sp", R"(" ")"},
      {"value", R"(object | array | string | number | "true" | "false" | "null")"},
      {"object", R"("{" ( string ":" sp value ( "," sp string ":" sp value )* )? "}")"},
      {"array", R"("[" ( value ( "," sp value )* )? "]")"},
      {"string", R"("\"" char* "\"")"},
      // One character of a string. \u escapes exclude surrogates so that each match is one
      // code point, which makes minLength and maxLength exact.
      {"char", R"([^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" unicode-escape ))"},
      {"unicode-escape", R"([0-9a-cA-Ce-fE-F] hex hex hex | [dD] [0-7] hex hex)"},
      {"hex", R"([0-9a-fA-F])"},
      {"integer", R"("-"? ( "0" | [1-9] [0-9]{0,15} ))"},
      {"number", R"(integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,2} )?)"},
      {"boolean", R"("true" | "false")"},
      {"null", R"("null")"},
  };
  return rules;
}

// The rules each primitive refers to.
const std::map<std::string, std::vector<std::string>>& dependencies() {
  static const std::map<std::string, std::vector<std::string>> deps = {
      {"value", {"object", "array", "string", "number"}},
      {"object", {"string", "sp", "value"}},
      {"array", {"value", "sp"}},
      {"string", {"char"}},
      {"char", {"unicode-escape"}},
      {"unicode-escape", {"hex"}},
      {"number", {"integer"}},
  };
  return deps;
}

}  // namespace

bool isJsonPrimitive(const std::string& name) { return primitives().count(name) > 0; }

void addJsonPrimitive(const std::string& name, std::map<std::string, std::string>& rules) {
  if (rules.count(name)) return;
  rules[name] = primitives().at(name);
  const auto deps = dependencies().find(name);
  if (deps != dependencies().end())
    for (const std::string& d : deps->second) addJsonPrimitive(d, rules);
}

}  // namespace strata::grammar
