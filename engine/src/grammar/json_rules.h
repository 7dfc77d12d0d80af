#pragma once
// The shared JSON rules (value, object, array, string, char, number, integer, boolean, null,
// sp) by name, for the JSON Schema converter and anyJsonObject().
#include <map>
#include <string>

namespace strata::grammar {

bool isJsonPrimitive(const std::string& name);
// Adds the rule `name` and every rule it refers to (name -> body) unless present.
void addJsonPrimitive(const std::string& name, std::map<std::string, std::string>& rules);

}  // namespace strata::grammar
