// The checks that make matching terminate: every rule is defined, no rule can reach itself
// before reading a character (expanding it would loop forever), and every rule can end.
#include <string>
#include <vector>

#include "grammar/grammar_rules.h"
#include "strata/error.h"

namespace strata::grammar {
namespace {

using Kind = Symbol::Kind;

// Rules that can match the empty text.
std::vector<bool> nullableRules(const GrammarRules& g) {
  std::vector<bool> nullable(g.rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.rules.size(); ++r) {
      if (nullable[r]) continue;
      for (uint32_t p : g.alternatives[r]) {
        while (g.at(p).kind == Kind::Rule && nullable[g.at(p).index]) ++p;
        if (g.at(p).kind == Kind::End) {
          nullable[r] = changed = true;
          break;
        }
      }
    }
  }
  return nullable;
}

// Rules with at least one finite match.
std::vector<bool> endingRules(const GrammarRules& g) {
  std::vector<bool> ends(g.rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.rules.size(); ++r) {
      if (ends[r]) continue;
      for (uint32_t p : g.alternatives[r]) {
        while (g.at(p).kind == Kind::Chars || (g.at(p).kind == Kind::Rule && ends[g.at(p).index]))
          ++p;
        if (g.at(p).kind == Kind::End) {
          ends[r] = changed = true;
          break;
        }
      }
    }
  }
  return ends;
}

// The rules each rule can call before reading a character.
std::vector<std::vector<uint32_t>> leftCalls(const GrammarRules& g,
                                             const std::vector<bool>& nullable) {
  std::vector<std::vector<uint32_t>> calls(g.rules.size());
  for (size_t r = 0; r < g.rules.size(); ++r)
    for (uint32_t p : g.alternatives[r])
      for (; g.at(p).kind == Kind::Rule; ++p) {
        calls[r].push_back(g.at(p).index);
        if (!nullable[g.at(p).index]) break;
      }
  return calls;
}

// A cycle in the left-call graph, as the rules along it, or empty.
std::vector<uint32_t> findCycle(const std::vector<std::vector<uint32_t>>& calls) {
  enum Color : uint8_t { White, Grey, Black };
  std::vector<Color> color(calls.size(), White);
  for (uint32_t start = 0; start < calls.size(); ++start) {
    if (color[start] != White) continue;
    // Iterative depth-first search; `path` holds (rule, next edge) of the grey rules.
    std::vector<std::pair<uint32_t, size_t>> path{{start, 0}};
    color[start] = Grey;
    while (!path.empty()) {
      auto& [rule, edge] = path.back();
      if (edge == calls[rule].size()) {
        color[rule] = Black;
        path.pop_back();
        continue;
      }
      const uint32_t next = calls[rule][edge++];
      if (color[next] == Grey) {
        std::vector<uint32_t> cycle;
        size_t i = 0;
        while (path[i].first != next) ++i;
        for (; i < path.size(); ++i) cycle.push_back(path[i].first);
        cycle.push_back(next);
        return cycle;
      }
      if (color[next] == White) {
        color[next] = Grey;
        path.push_back({next, 0});
      }
    }
  }
  return {};
}

bool repeatsNullable(const GrammarRules& g, uint32_t rule, const std::vector<bool>& nullable) {
  if (!g.rules[rule].repetition) return false;
  const Symbol& item = g.at(g.alternatives[rule][0]);
  return item.kind == Kind::Rule && nullable[item.index];
}

[[noreturn]] void leftRecursion(const GrammarRules& g, const std::vector<uint32_t>& cycle,
                                const std::vector<bool>& nullable) {
  for (uint32_t r : cycle) {
    if (!repeatsNullable(g, r, nullable)) continue;
    const RuleInfo& loop = g.rules[r];
    throw Error(describe(loop.originPos) + ": " + loop.origin.substr(0, loop.origin.find(" at ")) +
                " repeats something that can match the empty text, so it could loop forever "
                "without reading a character; make the repeated part non-empty");
  }
  // Name the written rules along the cycle (groups and repetitions belong to their rule).
  std::string names;
  uint32_t last = UINT32_MAX;
  for (uint32_t r : cycle) {
    const uint32_t owner = g.rules[r].owner;
    if (owner == last) continue;
    names += (names.empty() ? "" : " -> ") + g.rules[owner].name;
    last = owner;
  }
  const RuleInfo& first = g.rules[g.rules[cycle.front()].owner];
  throw Error(describe(first.definedAt) + ": rule '" + first.name + "' is left-recursive (" +
              names +
              "): it can reach itself before reading any character; write the repetition with "
              "* or + instead, e.g. list ::= item (\",\" item)*");
}

}  // namespace

void checkRules(const GrammarRules& g) {
  for (const RuleInfo& rule : g.rules)
    if (!rule.defined)
      throw Error(describe(rule.firstUse) + ": undefined rule '" + rule.name + "'");
  const std::vector<bool> nullable = nullableRules(g);
  if (const auto cycle = findCycle(leftCalls(g, nullable)); !cycle.empty())
    leftRecursion(g, cycle, nullable);
  const std::vector<bool> ends = endingRules(g);
  for (size_t r = 0; r < g.rules.size(); ++r) {
    if (ends[r]) continue;
    const RuleInfo& owner = g.rules[g.rules[r].owner];
    throw Error(describe(owner.definedAt) + ": rule '" + owner.name +
                "' can never end: every alternative needs a rule that never ends (often itself)");
  }
}

}  // namespace strata::grammar
