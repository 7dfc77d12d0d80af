#include "grammar/gbnf_parser.h"

#include <unordered_map>

#include "grammar/gbnf_lexer.h"
#include "strata/error.h"

namespace strata::grammar {
namespace {

using Kind = GbnfToken::Kind;
using Sequence = std::vector<Symbol>;
using Alternatives = std::vector<Sequence>;

// Past this many copies a repetition is refused: each copy is a symbol or a rule.
constexpr int kMaxRepetition = 10000;
constexpr int kMaxNesting = 200;

// A rule referring back to itself goes through its alternatives; repetitions must not grow
// the pushdown stack, so their rules put the recursive reference last (a tail call).
class Parser {
 public:
  explicit Parser(std::vector<GbnfToken> tokens) : tokens_(std::move(tokens)) {}

  GrammarRules run(std::string_view root) {
    if (tokens_.front().kind == Kind::End)
      throw Error("the grammar is empty: it needs at least a rule `" + std::string(root) +
                  " ::= ...`");
    while (peek().kind != Kind::End) parseRule();
    const auto it = ids_.find(std::string(root));
    if (it == ids_.end() || !out_.rules[it->second].defined)
      throw Error("no rule named '" + std::string(root) +
                  "': the grammar's start must be defined (" + std::string(root) + " ::= ...)");
    out_.root = it->second;
    flatten();
    checkRules(out_);
    return std::move(out_);
  }

 private:
  [[noreturn]] static void fail(SourcePos pos, const std::string& problem) {
    throw Error(describe(pos) + ": " + problem);
  }

  const GbnfToken& peek(size_t ahead = 0) const {
    return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
  }
  const GbnfToken& take() { return tokens_[std::min(at_++, tokens_.size() - 1)]; }
  bool startsRule() const { return peek().kind == Kind::Name && peek(1).kind == Kind::Define; }

  uint32_t ruleId(const std::string& name, SourcePos usedAt) {
    const auto [it, fresh] = ids_.emplace(name, static_cast<uint32_t>(out_.rules.size()));
    if (fresh) {
      RuleInfo info;
      info.name = name;
      info.firstUse = usedAt;
      info.owner = it->second;
      out_.rules.push_back(info);
      bodies_.emplace_back();
    }
    return it->second;
  }

  uint32_t newRule(const std::string& origin, SourcePos at, bool repetition) {
    const auto id = static_cast<uint32_t>(out_.rules.size());
    RuleInfo info;
    info.name = out_.rules[current_].name + "(" + std::to_string(++generatedCount_) + ")";
    info.defined = true;
    info.definedAt = at;
    info.generated = true;
    info.repetition = repetition;
    info.origin = origin;
    info.originPos = at;
    info.owner = current_;
    out_.rules.push_back(info);
    bodies_.emplace_back();
    return id;
  }

  Symbol chars(CharSet set) {
    out_.charSets.push_back(std::move(set));
    return {Symbol::Kind::Chars, static_cast<uint32_t>(out_.charSets.size() - 1)};
  }

  void parseRule() {
    const GbnfToken& name = take();
    if (name.kind != Kind::Name || peek().kind != Kind::Define)
      fail(name.pos, "expected a rule definition `name ::= ...`, found '" + name.text + "'");
    take();  // ::=
    current_ = ruleId(name.text, name.pos);
    RuleInfo& info = out_.rules[current_];
    if (info.defined)
      fail(name.pos,
           "rule '" + name.text + "' is defined twice (first at " + describe(info.definedAt) + ")");
    info.defined = true;
    info.definedAt = name.pos;
    Alternatives body = parseAlternatives(/*nested=*/false);
    bodies_[current_] = std::move(body);
  }

  Alternatives parseAlternatives(bool nested) {
    Alternatives alternatives;
    alternatives.push_back(parseSequence(nested));
    while (peek().kind == Kind::Bar) {
      take();
      alternatives.push_back(parseSequence(nested));
    }
    return alternatives;
  }

  Sequence parseSequence(bool nested) {
    Sequence sequence;
    while (true) {
      const GbnfToken& t = peek();
      if (t.kind == Kind::End || t.kind == Kind::Bar || startsRule()) break;
      if (t.kind == Kind::Close) {
        if (!nested) fail(t.pos, "')' without a matching '('");
        break;
      }
      Sequence item = parseItem();
      while (true) {
        const GbnfToken& op = peek();
        if (op.kind != Kind::Star && op.kind != Kind::Plus && op.kind != Kind::Question &&
            op.kind != Kind::Repeat)
          break;
        take();
        item = repeat(item, op);
      }
      sequence.insert(sequence.end(), item.begin(), item.end());
    }
    return sequence;
  }

  Sequence parseItem() {
    const GbnfToken& t = take();
    switch (t.kind) {
      case Kind::Name:
        return {Symbol{Symbol::Kind::Rule, ruleId(t.text, t.pos)}};
      case Kind::Literal: {
        Sequence s;
        for (uint32_t c : t.literal) s.push_back(chars(CharSet::single(c)));
        return s;
      }
      case Kind::Class:
        return {chars(CharSet(t.ranges, t.negated))};
      case Kind::Dot:
        return {chars(CharSet::any())};
      case Kind::Open: {
        const SourcePos open = t.pos;
        // Parsing recurses per level; a bound keeps hostile input from exhausting the stack.
        if (++depth_ > kMaxNesting)
          fail(open, "parentheses nested deeper than " + std::to_string(kMaxNesting));
        Alternatives inner = parseAlternatives(/*nested=*/true);
        --depth_;
        if (peek().kind != Kind::Close) fail(open, "'(' is never closed by ')'");
        take();
        if (inner.size() == 1) return inner[0];
        const uint32_t group = newRule("the group at " + describe(open), open, false);
        bodies_[group] = std::move(inner);
        return {Symbol{Symbol::Kind::Rule, group}};
      }
      default:
        fail(t.pos,
             "expected a rule name, a \"literal\", a [class], '.' or '(', found '" + t.text + "'");
    }
  }

  // The item as one symbol (a rule of its own when it is a run of several).
  Symbol single(const Sequence& item, SourcePos at) {
    if (item.size() == 1) return item[0];
    const uint32_t r = newRule("the sequence before " + describe(at), at, false);
    bodies_[r] = {item};
    return {Symbol::Kind::Rule, r};
  }

  Sequence repeat(const Sequence& item, const GbnfToken& op) {
    int min = 0;
    int max = kUnbounded;
    if (op.kind == Kind::Plus) min = 1;
    if (op.kind == Kind::Question) max = 1;
    if (op.kind == Kind::Repeat) {
      min = op.min;
      max = op.max;
    }
    if (min > kMaxRepetition || max > kMaxRepetition)
      fail(op.pos, "repetition count above " + std::to_string(kMaxRepetition));
    const std::string origin = "'" + op.text + "' at " + describe(op.pos);
    if (item.empty()) return {};
    const Symbol x = single(item, op.pos);
    Sequence out(static_cast<size_t>(min), x);
    if (max == kUnbounded) {
      const uint32_t loop = newRule(origin, op.pos, /*repetition=*/true);
      bodies_[loop] = {{x, Symbol{Symbol::Kind::Rule, loop}}, {}};
      out.push_back({Symbol::Kind::Rule, loop});
    } else if (max > min) {
      // r1 ::= x | (empty); rk ::= x r(k-1) | (empty): up to max - min more copies.
      uint32_t previous = 0;
      for (int k = 1; k <= max - min; ++k) {
        const uint32_t r = newRule(origin, op.pos, false);
        Sequence more = {x};
        if (k > 1) more.push_back({Symbol::Kind::Rule, previous});
        bodies_[r] = {more, {}};
        previous = r;
      }
      out.push_back({Symbol::Kind::Rule, previous});
    }
    return out;
  }

  void flatten() {
    out_.alternatives.resize(out_.rules.size());
    for (size_t r = 0; r < out_.rules.size(); ++r) {
      for (const Sequence& s : bodies_[r]) {
        out_.alternatives[r].push_back(static_cast<uint32_t>(out_.symbols.size()));
        out_.symbols.insert(out_.symbols.end(), s.begin(), s.end());
        out_.symbols.push_back({Symbol::Kind::End, 0});
      }
    }
  }

  std::vector<GbnfToken> tokens_;
  size_t at_ = 0;
  GrammarRules out_;
  std::vector<Alternatives> bodies_;
  std::unordered_map<std::string, uint32_t> ids_;
  uint32_t current_ = 0;
  int generatedCount_ = 0;
  int depth_ = 0;
};

}  // namespace

GrammarRules parseGbnf(std::string_view text, std::string_view root) {
  return Parser(lexGbnf(text)).run(root);
}

}  // namespace strata::grammar
