#!/usr/bin/env python3
"""Golden values for src/continuation/reference-fidelity.ts: the ContextEcho authors' tool-call
argument similarity, re-derived here in Python from its definition (not their code).

Writes src/continuation/__fixtures__/golden-reference-fidelity.json, read by
src/continuation/reference-fidelity.test.ts. Run from the repository root:
    python3 tools/golden/continuation_reference.py

Definition: an argument dict becomes a set of tokens. A nested dict extends the key prefix with
"."; list item i of key k gives "k[i]=" + str(item); any other value v gives "k=" + str(v) when
str(v) has at most 50 characters, else "k~" + chunk for every complete 4-character chunk of
str(v). Similarity = |A & B| / |A | B| (1.0 when both are empty). Python's own str() is the
independent reference for how values print (True, None, dict and list reprs, unicode).
"""

import json
import os
import random

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "src", "continuation", "__fixtures__", "golden-reference-fidelity.json")


def tokens(args, prefix=""):
    out = set()
    for key in args:
        value = args[key]
        if isinstance(value, dict):
            out.update(tokens(value, prefix + key + "."))
        elif isinstance(value, list):
            for index in range(len(value)):
                out.add("%s%s[%d]=%s" % (prefix, key, index, str(value[index])))
        else:
            text = str(value)
            if len(text) > 50:
                start = 0
                while start + 4 <= len(text):
                    out.add("%s%s~%s" % (prefix, key, text[start:start + 4]))
                    start += 4
            else:
                out.add("%s%s=%s" % (prefix, key, text))
    return out


def similarity(a, b):
    x, y = tokens(a), tokens(b)
    if not x and not y:
        return 1.0
    return len(x & y) / max(len(x | y), 1)


LONG = "grep -rn 'def flatten' src/ --include=*.py | head -20 && echo done with it"
CASES = [
    ({}, {}),
    ({"command": "ls -la"}, {}),
    ({"command": "ls -la"}, {"command": "ls -la"}),
    ({"command": "ls -la", "description": "list"}, {"command": "ls -la"}),
    ({"file_path": "/a/b.py", "limit": 20, "offset": 0}, {"file_path": "/a/b.py", "offset": 0}),
    ({"replace_all": True, "x": None, "y": False}, {"replace_all": True, "x": None, "y": True}),
    ({"command": LONG}, {"command": LONG}),
    ({"command": LONG}, {"command": LONG[:40] + " | wc -l && echo done with it and more"}),
    ({"command": LONG}, {"command": LONG[4:]}),
    ({"todos": [{"id": "1", "status": "done"}, {"id": "2", "status": "open"}]}, {"todos": [{"id": "1", "status": "done"}]}),
    ({"paths": ["a.py", "b.py", 3, True, None]}, {"paths": ["a.py", "c.py", 3, False, None]}),
    ({"meta": {"tags": ["x", "y"], "depth": {"level": 2}}}, {"meta": {"tags": ["x"], "depth": {"level": 2}}}),
    ({"text": "ümlaut " * 9}, {"text": "ümlaut " * 8 + "umlaut "}),
    ({"text": "emoji 🙂 " * 7}, {"text": "emoji 🙂 " * 7}),
    ({"n": 1.5, "m": -3, "e": 1e-07}, {"n": 1.5, "m": -3, "e": 2.5e-05}),
    ({"a": "", "b": []}, {"a": ""}),
]


def random_case(rng):
    words = ["alpha", "beta", "src/x.ts", "npm test", "README.md", "", "∑ unicode", "x" * 60]
    def value(depth):
        kind = rng.randrange(6 if depth < 2 else 4)
        if kind == 0:
            return rng.choice(words) + (" " + rng.choice(words)) * rng.randrange(4)
        if kind == 1:
            return rng.randrange(-5, 100)
        if kind == 2:
            return rng.choice([True, False, None])
        if kind == 3:
            return "".join(rng.choice("abcd ") for _ in range(rng.randrange(30, 90)))
        if kind == 4:
            return [value(depth + 1) for _ in range(rng.randrange(3))]
        return {k: value(depth + 1) for k in rng.sample(["p", "q", "r"], rng.randrange(1, 3))}
    keys = ["command", "file_path", "pattern", "content", "opts"]
    a = {k: value(0) for k in rng.sample(keys, rng.randrange(1, 4))}
    b = dict(a)
    for k in list(b):
        if rng.random() < 0.5:
            b[k] = value(0)
    return a, b


def main():
    rng = random.Random(20261202)
    cases = list(CASES) + [random_case(rng) for _ in range(40)]
    out = [{"a": a, "b": b, "similarity": similarity(a, b), "tokens_a": sorted(tokens(a))} for a, b in cases]
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"cases": out}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %d cases to %s" % (len(out), OUT))


if __name__ == "__main__":
    main()
