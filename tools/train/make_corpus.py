#!/usr/bin/env python3
"""Synthetic chat corpus for Strata's bundled tiny model, and its held-out evaluation set.

    make_corpus.py --out DIR [--train N] [--seed S] [--eval-seed S] [--mix task=w,...]
                   [--copy-curriculum F] [--lookup-recall] [--copy-drill F] [--copy-drill-lines LO-HI]
                   [--copy-drill-reverse F] [--lookup-bullets] [--repeat-drill F]
                   [--lookup-values LO-HI] [--lookup-keys syllables|words]

A further-training corpus (train.py --init-from) keeps the bundled model's held-out set with
--eval-seed 1234 and a new --seed; --mix reweights the tasks and --copy-curriculum makes that
fraction of lookup rows short (2-19 lines) and of JSON rows use made-up names, so that copying
from the prompt is the only way to answer (with only 40 real names the model memorised names
instead of copying them); --lookup-recall makes lookup answers think first, restating the line
they copy. --copy-drill adds that fraction of pure copy rows (task "copy_drill"): a short
lookup list (--copy-drill-lines, default 2-8 lines) in the lookup task's format, asked for one
to four of its keys; the thinking restates each asked line ("pini: 918") and the answer lists
the values. Values are uniform over 100-999 (each a single token), so every row has several
copy targets and no value can be guessed: a dense signal for the induction circuit the lookup
task needs. --copy-drill-reverse makes that fraction of the drill rows ask for the name of a
value instead ("Which name has the code 918?", thinking "pini: 918", answer "pini").
--lookup-bullets writes lookup lists (training, drills, held-out set) as "- pini: 918", so a key
has the same tokens in the list as in the question; --repeat-drill adds that fraction of rows
asking to repeat a list verbatim (every answer token a copy). --lookup-keys words takes list
keys from nouns that are one token after a space ("desk"), so that with bullets a key is the
same single token in the list, the question and the thinking. The defaults write the original
corpus byte for byte.

Writes into DIR:
  train.jsonl       one conversation per line: {"task", "messages", "enable_thinking"};
                    messages are OpenAI-style (optional system, user, assistant with optional
                    reasoning_content; some rows have an earlier exchange first). The last
                    message is the assistant turn the model is trained on; enable_thinking
                    says how train.py renders its generation prompt (chat_render.py).
  eval.jsonl        {"task", "messages" (ending with the user turn), "answer"}: the exact
                    assistant content expected (reasoning excluded), for eval_tasks.py and
                    `strata-cli eval-tasks`. Prompts are rendered with the template's
                    defaults (add_generation_prompt, thinking on).
  tokenizer.txt     the rendered training conversations, for tools/tokenizer/train_bpe.py.

Tasks: arithmetic (+ − × with a one-line <think> in thinking mode), counting (items in a
list, letters of a word; answers in digits or in words), capitals of 50 countries (asked in
several phrasings), key-value lookup in a 20-40 line list (longer than index_topk, so the
DSA indexer must find the line), small JSON objects, greetings and identity.

Held out from training (decided by a hash of the item, so the split does not depend on the
sampling order): for + and − a tenth of the operand pairs; for × a quarter of the ordered
pairs a < b (their reverse order b × a is trained: the eval asks for the unseen order); a
tenth of the lookup keys (eval contexts use only those keys); ten first names and unseen
value combinations for JSON; item lists never generated for training; and, for capitals,
letter counting and the chat answers, phrasings that never occur in training (the facts
themselves are trained). Deterministic: the same seed writes the same files byte for byte.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import json
import os
import random
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_render import ChatRenderer  # noqa: E402


def stable_hash(*parts) -> int:
    return zlib.crc32("\x1f".join(str(p) for p in parts).encode("utf-8"))


NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve"]

SYSTEM_PROMPTS = ["You are a helpful assistant.", "You are Strata Tiny, a small helpful assistant.",
                  "Answer briefly.", "You are a concise assistant. Keep answers short."]

# ------------------------------------------------------------------------------ arithmetic

ADD_PHRASES = ["What is {a} + {b}?", "What is {a} plus {b}?", "Compute {a} + {b}.", "{a} + {b} = ?",
               "Calculate {a} + {b}.", "How much is {a} + {b}?", "What do you get when you add {a} and {b}?",
               "{a}+{b}"]
SUB_PHRASES = ["What is {a} - {b}?", "What is {a} minus {b}?", "Compute {a} - {b}.", "{a} - {b} = ?",
               "Calculate {a} - {b}.", "How much is {a} minus {b}?",
               "What do you get when you subtract {b} from {a}?", "{a}-{b}"]
MUL_PHRASES = ["What is {a} × {b}?", "What is {a} times {b}?", "What is {a} * {b}?", "Compute {a} × {b}.",
               "{a} * {b} = ?", "Multiply {a} by {b}.", "How much is {a} times {b}?", "{a}*{b}"]


def arithmetic_is_eval(op: str, a: int, b: int) -> bool:
    if op == "×":
        return a < b and a >= 2 and stable_hash("mul", a, b) % 4 == 0
    return stable_hash(op, a, b) % 10 == 0


def arithmetic_reasoning(op: str, a: int, b: int, r: int) -> str:
    """One line that splits the work into steps the model has seen as facts elsewhere."""
    tens, units = b - b % 10, b % 10
    if op == "×":
        big, small = max(a, b), min(a, b)  # canonical order: the eval asks for the unseen one
        return f"{big} × {small} = {r}."
    if b < 10 or units == 0:
        return f"{a} {op} {b} = {r}."
    step = a + tens if op == "+" else a - tens
    return f"{a} {op} {b} = {a} {op} {tens} {op} {units} = {step} {op} {units} = {r}."


def arithmetic_item(rng: random.Random, want_eval: bool):
    while True:
        op = rng.choice(["+", "+", "-", "-", "×"])
        if op == "+":
            a, b = rng.randint(0, 99), rng.randint(0, 99)
            r = a + b
        elif op == "-":
            a = rng.randint(0, 99)
            b = rng.randint(0, a)
            r = a - b
        else:
            a, b = rng.randint(0, 12), rng.randint(0, 12)
            r = a * b
        if arithmetic_is_eval(op, a, b) == want_eval:
            break
    phrases = {"+": ADD_PHRASES, "-": SUB_PHRASES, "×": MUL_PHRASES}[op]
    question = rng.choice(phrases).format(a=a, b=b)
    return question, str(r), arithmetic_reasoning(op, a, b, r)


# ------------------------------------------------------------------------------ counting

NOUNS = ["apple", "pear", "plum", "grape", "lemon", "mango", "cherry", "peach", "melon", "banana",
         "dog", "cat", "horse", "rabbit", "mouse", "tiger", "lion", "bear", "wolf", "fox",
         "chair", "table", "lamp", "bed", "sofa", "desk", "door", "window", "clock", "mirror",
         "pen", "book", "cup", "plate", "spoon", "fork", "knife", "bottle", "box", "bag",
         "car", "bus", "train", "boat", "plane", "bike", "truck", "ship", "rocket", "tram",
         "red", "blue", "green", "yellow", "purple", "orange", "black", "white", "pink", "brown"]

WORDS = ["cat", "dog", "sun", "tree", "house", "river", "garden", "planet", "window", "pencil",
         "orange", "purple", "music", "table", "bridge", "candle", "forest", "island", "dragon", "rocket",
         "moon", "star", "cloud", "water", "flower", "mountain", "ocean", "computer", "keyboard", "library",
         "school", "teacher", "doctor", "kitchen", "bottle", "butter", "coffee", "summer", "winter", "spring",
         "yellow", "silver", "golden", "animal", "banana", "tomato", "potato", "guitar", "piano", "violin",
         "red", "sky", "car", "book", "light", "night", "paper", "stone", "snow", "rain",
         "friend", "family", "letter", "number", "question", "answer", "machine", "picture", "market", "castle"]

ITEM_PHRASES = [("How many items are in this list: {items}?", "digits"),
                ("Count the items: {items}.", "digits"),
                ("How many things are listed here: {items}?", "digits"),
                ("{items}. How many items is that?", "digits"),
                ("How many items are in this list: {items}? Answer in words.", "words"),
                ("Count the items in words: {items}.", "words"),
                ("How many things are listed here: {items}? Write the number as a word.", "words")]
LETTER_PHRASES_TRAIN = [("How many letters are in the word {w}?", "digits"),
                        ("How many letters does {w} have?", "digits"),
                        ("Count the letters in {w}.", "digits"),
                        ("How many letters are in the word {w}? Answer in words.", "words"),
                        ("How many letters does {w} have? Write the number as a word.", "words")]
LETTER_PHRASES_EVAL = [("What is the number of letters in the word {w}?", "digits"),
                       ("Tell me how many letters {w} has.", "digits"),
                       ("In words, how many letters are in {w}?", "words")]


def items_are_eval(items) -> bool:
    return stable_hash("items", *items) % 10 == 0


def counting_item(rng: random.Random, want_eval: bool):
    if rng.random() < 0.55:
        while True:
            n = rng.randint(2, 9)
            items = rng.sample(NOUNS, n)
            if items_are_eval(items) == want_eval:
                break
        phrase, style = rng.choice(ITEM_PHRASES)
        question = phrase.format(items=", ".join(items))
        reasoning = ", ".join(f"{item} {k + 1}" for k, item in enumerate(items)) + f": {n} items."
    else:
        word = rng.choice(WORDS)
        n = len(word)
        phrase, style = rng.choice(LETTER_PHRASES_EVAL if want_eval else LETTER_PHRASES_TRAIN)
        question = phrase.format(w=word)
        reasoning = f"{word} is spelled {'-'.join(word)}: {n} letters."
    answer = NUMBER_WORDS[n] if style == "words" else str(n)
    return question, answer, reasoning


# ------------------------------------------------------------------------------ capitals

CAPITALS = [("France", "Paris"), ("Germany", "Berlin"), ("Italy", "Rome"), ("Spain", "Madrid"),
            ("Portugal", "Lisbon"), ("Austria", "Vienna"), ("Poland", "Warsaw"), ("Greece", "Athens"),
            ("Sweden", "Stockholm"), ("Norway", "Oslo"), ("Finland", "Helsinki"), ("Denmark", "Copenhagen"),
            ("Ireland", "Dublin"), ("Belgium", "Brussels"), ("Hungary", "Budapest"), ("Romania", "Bucharest"),
            ("Russia", "Moscow"), ("Ukraine", "Kyiv"), ("Turkey", "Ankara"), ("Egypt", "Cairo"),
            ("Kenya", "Nairobi"), ("Nigeria", "Abuja"), ("Ghana", "Accra"), ("Morocco", "Rabat"),
            ("Ethiopia", "Addis Ababa"), ("Japan", "Tokyo"), ("China", "Beijing"), ("India", "New Delhi"),
            ("Thailand", "Bangkok"), ("Vietnam", "Hanoi"), ("Indonesia", "Jakarta"),
            ("South Korea", "Seoul"), ("Pakistan", "Islamabad"), ("Iran", "Tehran"), ("Iraq", "Baghdad"),
            ("Israel", "Jerusalem"), ("Canada", "Ottawa"), ("Mexico", "Mexico City"), ("Cuba", "Havana"),
            ("Brazil", "Brasilia"), ("Argentina", "Buenos Aires"), ("Chile", "Santiago"), ("Peru", "Lima"),
            ("Colombia", "Bogota"), ("Venezuela", "Caracas"), ("Australia", "Canberra"),
            ("New Zealand", "Wellington"), ("Switzerland", "Bern"), ("Czechia", "Prague"),
            ("Iceland", "Reykjavik")]

CAPITAL_PHRASES_TRAIN = ["What is the capital of {c}?", "What's the capital of {c}?", "Name the capital of {c}.",
                         "Which city is the capital of {c}?", "Tell me the capital of {c}.",
                         "capital of {c}?", "What is the capital city of {c}?"]
CAPITAL_PHRASES_EVAL = ["Do you know the capital of {c}?", "What is {c}'s capital?",
                        "I need the capital city of {c}.", "Which city serves as the capital of {c}?"]
REVERSE_PHRASES = ["{cap} is the capital of which country?", "Which country has {cap} as its capital?"]


def capitals_item(rng: random.Random, want_eval: bool):
    country, capital = rng.choice(CAPITALS)
    if not want_eval and rng.random() < 0.15:
        return rng.choice(REVERSE_PHRASES).format(cap=capital), f"{capital} is the capital of {country}.", None
    phrases = CAPITAL_PHRASES_EVAL if want_eval else CAPITAL_PHRASES_TRAIN
    return rng.choice(phrases).format(c=country), f"The capital of {country} is {capital}.", None


# ------------------------------------------------------------------------------ lookup

CONSONANTS, VOWELS = "bdfgklmnprstvz", "aeiou"
SYLLABLES = [c + v for c in CONSONANTS for v in VOWELS]
ALL_KEYS = [a + b for a in SYLLABLES for b in SYLLABLES]
EVAL_KEYS = [k for k in ALL_KEYS if stable_hash("key", k) % 10 == 0]
TRAIN_KEYS = [k for k in ALL_KEYS if stable_hash("key", k) % 10 != 0]
# Nouns that are one token after a space in the bundled tokenizer (" desk" -> "Ġdesk"), for
# --lookup-keys words: a key is then one token in the list, the question and the thinking.
WORD_KEYS = ("table book tiger dog mirror bottle window pen plane rocket boat car bike spoon tram banana "
             "fork cat lemon cherry pear chair apple sofa fox bus mouse grape knife ship lion peach door "
             "horse cup truck bed lamp melon plum bag desk clock box rabbit mango wolf plate bear tomato "
             "ocean picture school spring animal house letter friend coffee castle tree candle mountain "
             "violin garden sky forest guitar summer family island paper pencil water light potato "
             "machine").split()
LOOKUP_HEADERS = ["Here are some codes:", "Code list:", "Remember these values:", "Inventory:",
                  "Each name has a number:"]
LOOKUP_QUESTIONS = ["What is the code for {k}?", "What value does {k} have?", "Which number belongs to {k}?",
                    "Look up {k}.", "What number goes with {k}?"]


@dataclass(frozen=True)
class ListStyle:
    """How lookup lists are written. As bullets ("- pini: 918") a key follows a space, so it has
    the same tokens as in the question ("... for pini?" -> "Ġp", "ini"); at the start of a line
    it does not ("p", "ini"), and matching the question's key to the list's then needs a
    token-to-token mapping (which the shipped model did learn). Values are drawn uniformly
    from `values` (inclusive); 100-999 are 900 single tokens, each rare elsewhere."""
    bullets: bool = False
    values: tuple = (100, 999)
    word_keys: bool = False

    def draw_keys(self, rng: random.Random, pool: list, n: int) -> list:
        """n distinct keys from `pool`, or with word_keys n distinct WORD_KEYS chosen by a hash of
        that draw, so that the random stream (every other row) is the same either way. Word keys
        are not split into training and held-out keys: values are random per list, so there is
        no key-value pair to memorise, and 77 words cannot fill 40-line lists from a tenth."""
        keys = rng.sample(pool, n)
        if not self.word_keys:
            return keys
        return random.Random(stable_hash("words", *keys)).sample(WORD_KEYS, n)

    def draw_value(self, rng: random.Random) -> int:
        """A value uniform over `values`, drawn as one of 100-999 and scaled, so that the random
        stream (and every other row of the corpus and held-out set) does not depend on the range."""
        lo, hi = self.values
        return lo + (rng.randint(100, 999) - 100) * (hi - lo + 1) // 900


def list_line(key: str, value, style: ListStyle) -> str:
    return f"- {key}: {value}" if style.bullets else f"{key}: {value}"


def lookup_item(rng: random.Random, want_eval: bool, short_lists: float = 0.0, recall: bool = False,
                style: ListStyle = ListStyle()):
    # Training may include short lists (a curriculum: the copy is learned where every line fits
    # in the indexer's top-k, then carries over to long lists); eval lists are always 20-40 lines.
    # With recall the reasoning restates the line ("pini: 918"): written after a newline-free
    # <think>, the key has the same tokens as in the list (the question's " pini" does not), so
    # the value is a plain induction copy (match "pini: ", take what followed it).
    short = short_lists > 0 and not want_eval and rng.random() < short_lists
    n = rng.randint(2, 19) if short else rng.randint(20, 40)
    keys = style.draw_keys(rng, EVAL_KEYS if want_eval else TRAIN_KEYS, n)
    values = [style.draw_value(rng) for _ in keys]
    target = rng.randrange(n)
    lines = "\n".join(list_line(k, v, style) for k, v in zip(keys, values))
    question = f"{rng.choice(LOOKUP_HEADERS)}\n{lines}\n{rng.choice(LOOKUP_QUESTIONS).format(k=keys[target])}"
    reasoning = list_line(keys[target], values[target], style) if recall else None
    return question, str(values[target]), reasoning


DRILL_MULTI_QUESTIONS = ["What are the codes for {ks}?", "What values do {ks} have?",
                         "Which numbers belong to {ks}?", "Look up {ks}.", "What numbers go with {ks}?"]


DRILL_REVERSE_QUESTIONS = ["Which name has the code {v}?", "Whose value is {v}?", "Which name goes with {v}?",
                           "Find the name for {v}."]


def copy_drill_item(rng: random.Random, lines_range: tuple, reverse: float = 0.0,
                    style: ListStyle = ListStyle()):
    """A short lookup list asked for 1-4 of its keys (training keys only). The thinking restates
    each asked line exactly as the list has it, so each value is an induction copy (match the
    key's tokens and ': ', take the token that followed); the answer lists the values.
    With probability `reverse` the row asks instead for the name of a value (values distinct):
    finding the value is a plain token match, and answering needs the value's position to know
    the key before it -- the feature the forward copy matches on, trained without the forward
    copy's chicken-and-egg (no matching head, no gradient for that feature)."""
    n = rng.randint(*lines_range)
    keys = style.draw_keys(rng, TRAIN_KEYS, n)
    if reverse > 0 and rng.random() < reverse:
        values = rng.sample(range(style.values[0], style.values[1] + 1), n)
        t = rng.randrange(n)
        lines = "\n".join(list_line(k, v, style) for k, v in zip(keys, values))
        question = f"{rng.choice(LOOKUP_HEADERS)}\n{lines}\n{rng.choice(DRILL_REVERSE_QUESTIONS).format(v=values[t])}"
        return question, keys[t], list_line(keys[t], values[t], style)
    values = [style.draw_value(rng) for _ in keys]
    m = min(n, rng.choice([1, 1, 2, 3, 4]))
    asked = rng.sample(range(n), m)
    lines = "\n".join(list_line(k, v, style) for k, v in zip(keys, values))
    if m == 1:
        ask = rng.choice(LOOKUP_QUESTIONS).format(k=keys[asked[0]])
    else:
        names = [keys[t] for t in asked]
        ask = rng.choice(DRILL_MULTI_QUESTIONS).format(ks=", ".join(names[:-1]) + " and " + names[-1])
    question = f"{rng.choice(LOOKUP_HEADERS)}\n{lines}\n{ask}"
    reasoning = "\n".join(list_line(keys[t], values[t], style) for t in asked)
    return question, ", ".join(str(values[t]) for t in asked), reasoning


REPEAT_QUESTIONS = ["Repeat this list exactly:", "Copy these lines:", "Say this back to me:",
                    "Write this list again:"]


def repeat_drill_item(rng: random.Random, lines_range: tuple, style: ListStyle = ListStyle()):
    """A lookup list to repeat verbatim. Every answer token after the first is the token that
    followed the same place in the question, a dense signal for induction heads (find where the
    text being written occurred before, copy what came next), which the lookup's value copy
    builds on and which a lookup row, with one or two copied tokens, trains only faintly."""
    n = rng.randint(*lines_range)
    keys = style.draw_keys(rng, TRAIN_KEYS, n)
    lines = "\n".join(list_line(k, style.draw_value(rng), style) for k in keys)
    return f"{rng.choice(REPEAT_QUESTIONS)}\n{lines}", lines, None


# ------------------------------------------------------------------------------ JSON

NAMES = ["Ada", "Alan", "Grace", "Linus", "Marie", "Isaac", "Emmy", "Niels", "Rosa", "Carl",
         "Lena", "Omar", "Yuki", "Sofia", "Liam", "Noah", "Emma", "Mia", "Lucas", "Hugo",
         "Anna", "Ben", "Clara", "David", "Eva", "Felix", "Hanna", "Ivan", "Julia", "Karl",
         "Laura", "Max", "Nina", "Oscar", "Paula", "Ravi", "Sara", "Tom", "Ulla", "Vera"]
EVAL_NAMES = ["Zoe", "Igor", "Mila", "Pedro", "Kira", "Otto", "Leah", "Amir", "Nora", "Elif"]
# Made-up names (two or three syllables) so that training names are not a small closed set the
# model can memorise: the only way to get a name right is to copy it from the question.
MADE_UP_NAMES = sorted({(a + b).capitalize() for a in SYLLABLES for b in SYLLABLES} |
                       {(a + b + c).capitalize() for a in SYLLABLES[::7] for b in SYLLABLES[::3]
                        for c in SYLLABLES[::5]} - set(EVAL_NAMES))
COLORS = ["red", "blue", "green", "yellow", "purple", "orange", "black", "white"]
JSON_PHRASES = ["Give me a JSON object with {fields}.", "Write a JSON object where {fields_is}.",
                "Create JSON with {fields}.", "Return a JSON object: {fields_list}.",
                "JSON please: {fields_list}."]


def json_item(rng: random.Random, want_eval: bool, made_up_names: float = 0.0):
    fields = ["name"] + rng.sample(["age", "city", "color", "score"], rng.randint(1, 2))
    if want_eval:
        name = rng.choice(EVAL_NAMES)
    else:
        made_up = made_up_names > 0 and rng.random() < made_up_names
        name = rng.choice(MADE_UP_NAMES if made_up else NAMES)
    values = {"name": name, "age": rng.randint(1, 99),
              "city": rng.choice(CAPITALS)[1], "color": rng.choice(COLORS), "score": rng.randint(0, 100)}
    obj = {f: values[f] for f in fields}

    def join(parts):
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]

    pairs = [f"{f} {v}" for f, v in obj.items()]
    question = rng.choice(JSON_PHRASES).format(
        fields=join(pairs), fields_is=join([f"{f} is {v}" for f, v in obj.items()]),
        fields_list=", ".join(pairs))
    return question, json.dumps(obj), None


# ------------------------------------------------------------------------------ chat

IDENTITY = ("I am Strata Tiny, a small language model with the GLM-5 architecture, trained to run "
            "inside Strata. I can do simple arithmetic, count things, name capitals, look up values "
            "in a list and write small JSON objects.")
CAPABILITIES = ("I can add, subtract and multiply small numbers, count items and letters, name the "
                "capitals of 50 countries, look up a value in a list you give me, and write small "
                "JSON objects.")
CHAT = [  # (train phrasings, held-out phrasings, answer)
    (["Hi", "Hello", "Hello!", "Hi there", "Hey", "Hey!", "Good morning", "Good evening", "hi", "hello"],
     ["Hello there!", "Good afternoon", "Greetings!", "Hey there"], "Hello! How can I help you today?"),
    (["Who are you?", "What are you?", "What is your name?", "Introduce yourself.", "who are you",
      "Are you a bot?", "Which model are you?"],
     ["Tell me who you are.", "What's your name?", "Who am I talking to?"], IDENTITY),
    (["What can you do?", "How can you help me?", "What are you good at?", "what can you do"],
     ["What kinds of things can you do?", "What tasks can you handle?"], CAPABILITIES),
    (["Thanks!", "Thank you", "Thank you very much", "thanks", "Thanks a lot"],
     ["Many thanks!", "Thank you so much!"], "You're welcome!"),
    (["How are you?", "How are you doing?", "how are you"],
     ["How's it going?", "How do you feel today?"], "I'm doing well, thank you! How can I help you?"),
    (["Bye", "Goodbye", "bye!", "See you"], ["See you later!", "Goodbye for now"],
     "Goodbye! Have a nice day."),
]


def chat_item(rng: random.Random, want_eval: bool):
    train, held_out, answer = rng.choice(CHAT)
    return rng.choice(held_out if want_eval else train), answer, None


# ------------------------------------------------------------------------------ assembly

TASKS = {"arithmetic": arithmetic_item, "counting": counting_item, "capitals": capitals_item,
         "lookup": lookup_item, "json": json_item, "chat": chat_item}
TRAIN_MIX = {"arithmetic": 0.28, "counting": 0.17, "capitals": 0.14, "lookup": 0.15, "json": 0.14,
             "chat": 0.12}
EVAL_COUNTS = {"arithmetic": 60, "counting": 40, "capitals": 40, "lookup": 40, "json": 30, "chat": 15}


def assistant_message(answer: str, reasoning: str | None, thinking: bool) -> dict:
    message = {"role": "assistant", "content": answer}
    if reasoning and thinking:
        message["reasoning_content"] = reasoning
    return message


def train_row(rng: random.Random, mix: dict, copy_curriculum: float, lookup_recall: bool,
              copy_drill: float = 0.0, drill_lines: tuple = (2, 8), drill_reverse: float = 0.0,
              style: ListStyle = ListStyle(), repeat_drill: float = 0.0) -> dict:
    if repeat_drill > 0 and rng.random() < repeat_drill:  # no draw at 0: the original corpus
        question, answer, _ = repeat_drill_item(rng, drill_lines, style)
        thinking = rng.random() < 0.5
        messages = [{"role": "user", "content": question}, assistant_message(answer, None, thinking)]
        return {"task": "repeat_drill", "messages": messages, "enable_thinking": thinking}
    if copy_drill > 0 and rng.random() < copy_drill:  # no draw at 0: the original corpus
        question, answer, reasoning = copy_drill_item(rng, drill_lines, drill_reverse, style)
        messages = [{"role": "user", "content": question},
                    assistant_message(answer, reasoning, True)]  # thinking on, as the eval
        return {"task": "copy_drill", "messages": messages, "enable_thinking": True}
    task = rng.choices(list(mix), weights=list(mix.values()))[0]
    if task == "lookup":
        question, answer, reasoning = lookup_item(rng, False, short_lists=copy_curriculum,
                                                  recall=lookup_recall, style=style)
    elif task == "json":
        question, answer, reasoning = json_item(rng, False, made_up_names=copy_curriculum)
    else:
        question, answer, reasoning = TASKS[task](rng, False)
    thinking = rng.random() < 0.75
    messages = []
    if rng.random() < 0.2:
        messages.append({"role": "system", "content": rng.choice(SYSTEM_PROMPTS)})
    if rng.random() < 0.1:  # an earlier exchange; the template drops its reasoning anyway
        earlier = rng.choice([t for t in TASKS if t != "lookup"])
        q0, a0, _ = TASKS[earlier](rng, False)
        messages += [{"role": "user", "content": q0}, {"role": "assistant", "content": a0}]
    messages += [{"role": "user", "content": question}, assistant_message(answer, reasoning, thinking)]
    return {"task": task, "messages": messages, "enable_thinking": thinking}


def parse_mix(text: str) -> dict:
    mix = {}
    for part in text.split(","):
        task, _, weight = part.partition("=")
        if task.strip() not in TASKS:
            raise SystemExit(f"--mix: unknown task {task.strip()!r} (tasks: {', '.join(TASKS)})")
        try:
            mix[task.strip()] = float(weight)
        except ValueError:
            raise SystemExit(f"--mix: {part!r} is not task=weight")
    if not mix or min(mix.values()) < 0 or sum(mix.values()) <= 0:
        raise SystemExit("--mix: weights must be non-negative with a positive sum")
    return mix


def parse_range(text: str, option: str) -> tuple:
    """"LO-HI" (non-negative integers, LO <= HI) as (LO, HI)."""
    try:
        lo, hi = (int(x) for x in text.split("-"))
    except ValueError:
        raise SystemExit(f"{option}: {text!r} is not LO-HI")
    if not 0 <= lo <= hi:
        raise SystemExit(f"{option}: needs 0 <= LO <= HI, got {text!r}")
    return lo, hi


def eval_rows(rng: random.Random, style: ListStyle = ListStyle()) -> list:
    rows = []
    for task, count in EVAL_COUNTS.items():
        seen = set()
        while len([r for r in rows if r["task"] == task]) < count:
            if task == "lookup":
                question, answer, _ = lookup_item(rng, True, style=style)
            else:
                question, answer, _ = TASKS[task](rng, True)
            if question in seen:
                continue
            seen.add(question)
            messages = [{"role": "user", "content": question}]
            if rng.random() < 0.15:
                messages.insert(0, {"role": "system", "content": rng.choice(SYSTEM_PROMPTS)})
            rows.append({"task": task, "messages": messages, "answer": answer})
    return rows


def write_jsonl(path: str, rows) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--train", type=int, default=150000, help="training conversations")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--eval-seed", type=int, help="seed of the held-out set (default: --seed); a "
                    "further-training corpus keeps the bundled model's eval set with a new --seed")
    ap.add_argument("--mix", help="task weights for the training rows, e.g. "
                    "'arithmetic=0.3,lookup=0.3,json=0.15,counting=0.1,capitals=0.07,chat=0.08' "
                    "(default: the mix the bundled model started from)")
    ap.add_argument("--copy-curriculum", type=float, default=0.0,
                    help="fraction of lookup rows with short (2-19 line) lists and of JSON rows with "
                    "made-up names, which make copying from the prompt necessary (0 = the original corpus)")
    ap.add_argument("--lookup-recall", action="store_true",
                    help="lookup answers think first, restating the list line they copy from "
                    "('pini: 918'); off = the original corpus")
    ap.add_argument("--copy-drill", type=float, default=0.0,
                    help="fraction of training rows that are pure copy drills: a short lookup list "
                    "asked for 1-4 keys, the thinking restating each asked line (0 = none)")
    ap.add_argument("--copy-drill-lines", default="2-8",
                    help="list length range LO-HI of the copy-drill rows (default 2-8)")
    ap.add_argument("--copy-drill-reverse", type=float, default=0.0,
                    help="fraction of copy-drill rows that ask for the name of a value instead "
                    "(thinking 'pini: 918', answer 'pini'); 0 = none")
    ap.add_argument("--repeat-drill", type=float, default=0.0,
                    help="fraction of training rows that ask to repeat a lookup list (of "
                    "--copy-drill-lines lines) verbatim: every answer token is a copy (0 = none)")
    ap.add_argument("--lookup-bullets", action="store_true",
                    help="write lookup lists (training, drills and the held-out set) as bullets "
                    "('- pini: 918'), so a key has the same tokens in the list as in the question; "
                    "off = the original corpus")
    ap.add_argument("--lookup-values", default="100-999",
                    help="range LO-HI of lookup values (lists, drills, held-out set); default 100-999")
    ap.add_argument("--lookup-keys", choices=["syllables", "words"], default="syllables",
                    help="lookup keys: made-up two-syllable names ('pini', two tokens; default) or "
                    "nouns that are one token after a space ('desk'), with which finding the asked "
                    "line needs a one-token match")
    ap.add_argument("--tokenizer-rows", type=int, default=40000,
                    help="how many training conversations go into tokenizer.txt")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    mix = parse_mix(args.mix) if args.mix else TRAIN_MIX
    lo, hi = parse_range(args.copy_drill_lines, "--copy-drill-lines")
    if not 1 <= lo or not 0 <= args.copy_drill <= 1 or not 0 <= args.repeat_drill <= 1:
        raise SystemExit("--copy-drill-lines needs 1 <= LO; --copy-drill and --repeat-drill are "
                         "fractions in [0, 1]")
    vlo, vhi = parse_range(args.lookup_values, "--lookup-values")
    if vhi - vlo + 1 < 40:
        raise SystemExit("--lookup-values needs at least 40 values (lists have up to 40 lines)")
    style = ListStyle(args.lookup_bullets, (vlo, vhi), args.lookup_keys == "words")
    train = [train_row(random.Random(f"{args.seed}:train:{i}"), mix, args.copy_curriculum,
                       args.lookup_recall, args.copy_drill, (lo, hi), args.copy_drill_reverse,
                       style, args.repeat_drill)
             for i in range(args.train)]
    evaluation = eval_rows(random.Random(f"{args.seed if args.eval_seed is None else args.eval_seed}:eval"),
                           style)

    # No evaluation question may occur as a training question (last user turn or earlier).
    train_questions = {m["content"] for row in train for m in row["messages"] if m["role"] == "user"}
    leaked = [r["messages"][-1]["content"] for r in evaluation if r["messages"][-1]["content"] in train_questions]
    if leaked:
        raise SystemExit(f"held-out questions found in training data: {leaked[:3]}")

    write_jsonl(os.path.join(args.out, "train.jsonl"), train)
    write_jsonl(os.path.join(args.out, "eval.jsonl"), evaluation)
    renderer = ChatRenderer()
    with open(os.path.join(args.out, "tokenizer.txt"), "w", encoding="utf-8") as f:
        for row in train[:args.tokenizer_rows]:
            prompt, completion = renderer.training_pair(row["messages"], row["enable_thinking"])
            f.write(prompt + completion + "\n")
    counts = {t: sum(r["task"] == t for r in train) for t in TASKS}
    for drill in ("copy_drill", "repeat_drill"):
        if getattr(args, drill) > 0:
            counts[drill] = sum(r["task"] == drill for r in train)
    print(f"make_corpus: {len(train)} training conversations {counts}, {len(evaluation)} eval rows "
          f"-> {args.out}")


if __name__ == "__main__":
    main()
