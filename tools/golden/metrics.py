#!/usr/bin/env python3
"""Golden values for src/metrics/ from an independent Python implementation.

Writes src/metrics/__fixtures__/golden-metrics.json, read by src/metrics/golden.test.ts.
Run from the repository root:  python3 tools/golden/metrics.py

Independent of the TypeScript code: DTW and Levenshtein are textbook full-matrix dynamic
programmes written here; the Jensen-Shannon distance comes from
scipy.spatial.distance.jensenshannon(p, q, base=2) (= sqrt(JSD_nat / ln 2), eq. 4);
Euclidean costs from scipy.spatial.distance.cdist; GRPO statistics from numpy (population
std, ddof=0); the DPO loss from numpy.logaddexp. Text rewards follow the definitions
documented in the TSDoc (answer block, letter runs via str.isalpha, NFC; step contents).
Edge-case conventions (both empty -> 0, exactly one empty -> 1) are the project's.
"""

import json
import math
import os
import re
import sys
import unicodedata

import numpy as np
from scipy.spatial.distance import cdist, jensenshannon

SEED = 20260601
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "src", "metrics", "__fixtures__", "golden-metrics.json")


# ---------------------------------------------------------------- sequence metrics


def dtw_from_costs(cost):
    """Full cumulative matrix; backtrack prefers diagonal, then (i-1, j), then (i, j-1)."""
    n, m = cost.shape
    acc = np.full((n, m), np.inf)
    for i in range(n):
        for j in range(m):
            if i == 0 and j == 0:
                best = 0.0
            else:
                options = []
                if i > 0 and j > 0:
                    options.append(acc[i - 1, j - 1])
                if i > 0:
                    options.append(acc[i - 1, j])
                if j > 0:
                    options.append(acc[i, j - 1])
                best = min(options)
            acc[i, j] = cost[i, j] + best
    i, j = n - 1, m - 1
    path = [(i, j)]
    while (i, j) != (0, 0):
        if i == 0:
            j -= 1
        elif j == 0:
            i -= 1
        else:
            diag, up, left = acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1]
            if diag <= up and diag <= left:
                i, j = i - 1, j - 1
            elif up <= left:
                i -= 1
            else:
                j -= 1
        path.append((i, j))
    path.reverse()
    return float(acc[n - 1, m - 1]), [[int(p), int(q)] for p, q in path]


def dtw_discrete(a, b):
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        longest = max(n, m)
        return {"raw": float(longest), "normalized": 0.0 if longest == 0 else 1.0, "path": []}
    cost = np.array([[0.0 if x == y else 1.0 for y in b] for x in a])
    raw, path = dtw_from_costs(cost)
    return {"raw": raw, "normalized": raw / max(n, m), "path": path}


def dtw_euclidean(a, b, embeddings):
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        longest = max(n, m)
        return {"raw": float(longest), "normalized": 0.0 if longest == 0 else 1.0, "path": []}
    cost = cdist(np.array([embeddings[s] for s in a]), np.array([embeddings[s] for s in b]), "euclidean")
    raw, path = dtw_from_costs(cost)
    return {"raw": raw, "normalized": raw / max(n, m), "path": path}


def levenshtein(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(
                table[i - 1][j] + 1,
                table[i][j - 1] + 1,
                table[i - 1][j - 1] + (0 if a[i - 1] == b[j - 1] else 1),
            )
    return table[len(a)][len(b)]


def js_distance(a, b):
    if not a and not b:
        return 0.0
    if not a or not b:
        return 1.0
    support = sorted(set(a) | set(b))
    p = np.array([a.count(s) for s in support], dtype=float) / len(a)
    q = np.array([b.count(s) for s in support], dtype=float) / len(b)
    value = float(jensenshannon(p, q, base=2))
    assert not math.isnan(value), (a, b)
    return value


def sri_drift(a, b, alpha):
    longest = max(len(a), len(b))
    if longest == 0:
        return 0.0
    return alpha * levenshtein(a, b) / longest + (1 - alpha) * js_distance(a, b)


# ---------------------------------------------------------------- text rewards


def lexical_diversity(text):
    start = text.find("<answer>")
    if start >= 0:
        body = text[start + len("<answer>"):]
        end = body.find("</answer>")
        if end >= 0:
            body = body[:end]
    else:
        return 0.0  # the paper: a missing answer scores 0
    body = unicodedata.normalize("NFC", body)
    tokens, current = [], []
    for ch in body:
        if ch.isalpha():
            current.append(ch)
        elif current:
            tokens.append("".join(current))
            current = []
    if current:
        tokens.append("".join(current))
    if not tokens:
        return 0.0
    diversity = len({t.lower() for t in tokens}) / len(tokens)
    scale = min(1.0, len(tokens) / 5)
    return 1.0 / (1.0 + math.exp(-8.0 * (diversity * scale - 0.2)))


STEP_OPEN = re.compile(r"<step_[0-9]+>")
STEP_END = re.compile(r"</step_[0-9]+>|<step_[0-9]+>|</think>|<answer>")


def format_reward(text):
    reward = 0.0
    if "<step_" in text:
        reward += 0.25
    if "<answer>" in text:
        reward += 0.25
    lengths = []
    for opening in STEP_OPEN.finditer(text):
        closing = STEP_END.search(text, opening.end())
        content = text[opening.end():closing.start() if closing else len(text)].strip()
        if content:
            lengths.append(len(content))
    if lengths and min(lengths) >= 2:
        reward += 0.5
    return reward


# ---------------------------------------------------------------- training helpers


def grpo(rewards, eps):
    r = np.asarray(rewards, dtype=float)
    if np.all(r == r[0]):
        return [0.0] * len(rewards)
    return [float(x) for x in (r - r.mean()) / (r.std(ddof=0) + eps)]


def dpo(pc, pr, rc, rr, beta):
    delta = (np.asarray(pc, float) - np.asarray(rc, float)) - (np.asarray(pr, float) - np.asarray(rr, float))
    return float(np.mean(np.logaddexp(0.0, -beta * delta)))


# ---------------------------------------------------------------- cases


def main():
    rng = np.random.default_rng(SEED)
    exotic = ["Infer/Déduction", "推理/演绎", "unmapped", "", "a b", "Verify/Check "]

    def random_sequence(alphabet, low, high):
        return [alphabet[int(k)] for k in rng.integers(0, len(alphabet), size=int(rng.integers(low, high + 1)))]

    pairs = [
        ([], []),
        (["A"], []),
        ([], ["A", "B"]),
        (["A", "B", "C"], ["A", "B", "C"]),
        (["A", "B", "C"], ["A", "C"]),
        (["A", "B", "A", "B"], ["B", "A", "B", "A"]),
        (["x"], ["y"]),
    ]
    for _ in range(320):
        size = int(rng.integers(1, 13))
        alphabet = [f"Cat{k}/Sub{k % 3}" for k in range(size)]
        if rng.random() < 0.15:
            alphabet = alphabet + exotic
        high = 45 if rng.random() < 0.1 else 20
        pairs.append((random_sequence(alphabet, 0, high), random_sequence(alphabet, 0, high)))

    sequence_cases = []
    for a, b in pairs:
        alpha = 0.5 if rng.random() < 0.5 else float(rng.random())
        d = dtw_discrete(a, b)
        sequence_cases.append({
            "a": a,
            "b": b,
            "dtwRaw": d["raw"],
            "dtwNormalized": d["normalized"],
            "dtwPath": d["path"],
            "editDistance": levenshtein(a, b),
            "jensenShannon": js_distance(a, b),
            "alpha": alpha,
            "sriDrift": sri_drift(a, b, alpha),
            "sriDriftDefault": sri_drift(a, b, 0.5),
        })

    vector_cases = []
    for _ in range(60):
        size = int(rng.integers(1, 7))
        dim = int(rng.integers(1, 6))
        alphabet = [f"S{k}" for k in range(size)]
        embeddings = {s: [float(x) for x in rng.normal(size=dim)] for s in alphabet}
        a = random_sequence(alphabet, 1, 12)
        b = random_sequence(alphabet, 1, 12)
        d = dtw_euclidean(a, b, embeddings)
        vector_cases.append({"a": a, "b": b, "embeddings": embeddings, "raw": d["raw"], "normalized": d["normalized"], "path": d["path"]})

    sri_cases = []
    for _ in range(50):
        alphabet = [f"C{k}" for k in range(int(rng.integers(1, 9)))]
        base = random_sequence(alphabet, 0, 15)
        variants = [random_sequence(alphabet, 0, 15) for _ in range(int(rng.integers(1, 7)))]
        alpha = 0.5 if rng.random() < 0.5 else float(rng.random())
        value = float(np.mean([sri_drift(base, v, alpha) for v in variants]))
        sri_cases.append({"base": base, "variants": variants, "alpha": alpha, "sri": value})

    words = ["the", "The", "cat", "sat", "on", "mat", "Answer", "is", "forty", "two", "Ärger",
             "A\u0308rger", "naïve", "Привет", "мир", "漢字", "x", "déjà", "vu", "Straße"]
    separators = [" ", ", ", ". ", "! ", "\n", " 42 ", "-", "'", "_", " (", ") ", "3"]
    lexical_cases = ["", "   ", "123 456", "<answer></answer>", "<answer>Yes.</answer>", "no answer tag at all here"]
    for _ in range(140):
        count = int(rng.integers(0, 14))
        body = "".join(words[int(rng.integers(len(words)))] + separators[int(rng.integers(len(separators)))] for _ in range(count))
        style = rng.random()
        if style < 0.4:
            text = "<think>" + " ".join(words[:3]) + "</think><answer>" + body + "</answer>"
        elif style < 0.55:
            text = "prefix words <answer>" + body  # unterminated answer block
        elif style < 0.65:
            text = "<answer>" + body + "</answer> trailing words <answer>second block</answer>"
        else:
            text = body
        lexical_cases.append(text)
    lexical = [{"text": t, "value": lexical_diversity(t)} for t in lexical_cases]

    pieces = ["<step_1>", "<step_2>", "<step_13>", "</step_1>", "</step_2>", "<step_>", "<step1>", "<answer>",
              "</answer>", "<think>", "</think>", "a", "ok", "Compute the sum", " ", "\n", "😀", "é", "x y"]
    format_cases = ["", "<answer>42</answer>", "<step_1>x</step_1>", "<step_1>  </step_1><step_2>ok</step_2>",
                    "<think><step_1>Read</step_1><step_2>Add</step_2></think><answer>5</answer>"]
    for _ in range(160):
        format_cases.append("".join(pieces[int(rng.integers(len(pieces)))] for _ in range(int(rng.integers(0, 12)))))
    formats = [{"text": t, "value": format_reward(t)} for t in format_cases]

    grpo_cases = []
    for _ in range(60):
        k = int(rng.integers(1, 9))
        rewards = [float(x) for x in rng.uniform(-1.0, 1.0, size=k)]
        if rng.random() < 0.2:
            rewards = [float(round(x * 4) / 4) for x in rewards]  # ties, as with the discrete format reward
        eps = [1e-6, 0.0, 1e-3][int(rng.integers(0, 3))]
        if eps == 0.0 and len(set(rewards)) == 1:
            rewards = rewards + [rewards[0] + 0.5]
        grpo_cases.append({"rewards": rewards, "eps": eps, "advantages": grpo(rewards, eps)})

    dpo_cases = []
    for _ in range(60):
        scalar = rng.random() < 0.4
        size = 1 if scalar else int(rng.integers(1, 8))
        spread = [1.0, 50.0, 3000.0][int(rng.integers(0, 3))]
        values = [[float(x) for x in -np.abs(rng.normal(scale=spread, size=size))] for _ in range(4)]
        beta = float(rng.choice([0.01, 0.1, 0.5, 2.0]))
        args = [v[0] for v in values] if scalar else values
        dpo_cases.append({"policyChosen": args[0], "policyRejected": args[1], "refChosen": args[2],
                          "refRejected": args[3], "beta": beta, "loss": dpo(*values, beta)})

    fixture = {
        "generator": "tools/golden/metrics.py",
        "seed": SEED,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scipy": __import__("scipy").__version__,
        "sequences": sequence_cases,
        "dtwVector": vector_cases,
        "sri": sri_cases,
        "lexicalDiversity": lexical,
        "formatReward": formats,
        "grpoAdvantages": grpo_cases,
        "dpoLoss": dpo_cases,
    }
    with open(OUT, "w", encoding="utf-8") as handle:
        json.dump(fixture, handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")
    print(f"wrote {os.path.normpath(OUT)}: {len(sequence_cases)} sequence pairs, {len(vector_cases)} vector DTW, "
          f"{len(sri_cases)} SRI, {len(lexical)} lexical, {len(formats)} format, {len(grpo_cases)} GRPO, {len(dpo_cases)} DPO")


if __name__ == "__main__":
    main()
