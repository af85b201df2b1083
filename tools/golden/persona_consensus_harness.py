#!/usr/bin/env python3
"""Golden values for the persona report's pooled multi-judge consensus and harness contrast.

Independent of echolens: numpy and scipy only, written from the definitions in
docs/statistics.md ("Pooled multi-judge consensus", "Harness contrast"): the session- and
position-level intervals are the exact sign-flip test inverted (found here by brute force over
subset means, not by echolens's bisection), the harness difference is scipy's Welch statistic with
its own interval, on one degree of freedom less than Satterthwaite's. Run from the
repository root with /usr/bin/python3 (Debian's python3-numpy, python3-scipy):

    /usr/bin/python3 tools/golden/persona_consensus_harness.py

Output: src/persona-drift/__fixtures__/golden-consensus-harness.json, holding the seeded
inputs (integer judge scores per response) and the values computed from them. The tests
build persona observations from the same inputs and compare.
"""
import itertools
import json
from pathlib import Path

import numpy as np
from scipy import stats

OUT = Path(__file__).resolve().parents[2] / "src/persona-drift/__fixtures__/golden-consensus-harness.json"
JUDGES = ["judge-a", "judge-b", "judge-c"]


def make_scores(rng, sessions, positions, probes, drift_of_session):
    """Rows: session, position, arm, probe, {judge: score}. Judges share a latent score and add their own bias."""
    rows = []
    for s in sessions:
        for p in range(positions):
            for arm in ("real", "filler"):
                for probe in range(probes):
                    latent = 2.6 - (drift_of_session[s] if arm == "real" else 0.0) + rng.normal(0, 0.7)
                    scores = {}
                    for j, judge in enumerate(JUDGES):
                        bias = (-0.4, 0.0, 0.5)[j]
                        scores[judge] = int(np.clip(np.rint(latent + bias + rng.normal(0, 0.4)), 0, 3))
                    rows.append({"session": s, "position": f"P{p + 1:02d}", "positionValue": 10 * (p + 1), "arm": arm, "item": f"C0{probe + 1}", "scores": scores})
    return rows


def unit_deltas(rows, judge):
    """filler − real of the per-(session, position) mean scores, sorted by (session, position)."""
    keys = sorted({(r["session"], r["position"]) for r in rows})
    out = []
    for key in keys:
        real = [r["scores"][judge] for r in rows if (r["session"], r["position"]) == key and r["arm"] == "real"]
        filler = [r["scores"][judge] for r in rows if (r["session"], r["position"]) == key and r["arm"] == "filler"]
        out.append((key[0], key[1], np.mean(filler) - np.mean(real)))
    return out


def unit_table(rows):
    """Units × judges: positions in one session, session means of positions with several."""
    per_judge = [unit_deltas(rows, j) for j in JUDGES]
    sessions = sorted({s for s, _, _ in per_judge[0]})
    if len(sessions) < 2:
        return "position", np.array([[d[i][2] for d in per_judge] for i in range(len(per_judge[0]))]), sessions
    table = []
    for s in sessions:
        table.append([np.mean([v for ss, _, v in d if ss == s]) for d in per_judge])
    return "session", np.array(table), sessions


def t_interval(values):
    values = np.asarray(values, float)
    n = len(values)
    m = values.mean()
    se = values.std(ddof=1) / np.sqrt(n)
    q = stats.t.ppf(0.975, n - 1)
    return m, [m - q * se, m + q * se], se


def sign_flip_exact(values):
    values = np.asarray(values, float)
    n = len(values)
    observed = abs(values.sum())
    tol = 1e-9 * np.abs(values).sum()
    count = 0
    for signs in itertools.product((1.0, -1.0), repeat=n):
        if abs(np.dot(signs, values)) >= observed - tol:
            count += 1
    return count / 2**n


def sign_flip_p_at(values, delta):
    return sign_flip_exact(np.asarray(values, float) - delta)


def sign_flip_interval(values, alpha=0.05):
    """{δ : exact sign-flip p of values − δ ≥ α}, by brute force over its breakpoints.

    The p of values − δ can change only where a sign pattern's |Σ s_i (v_i − δ)| crosses the
    observed |Σ (v_i − δ)|, i.e. at the mean of some non-empty subset of the values. The set is
    read off at every such mean and halfway between neighbours; its hull is returned. When the
    test cannot reach α (2/2^n ≥ α) the set is the whole line and the report shows the t
    interval widened to contain 0 instead.
    """
    values = np.asarray(values, float)
    n = len(values)
    if 2 / 2**n >= alpha:
        m, (lo, hi), _ = t_interval(values)
        return [min(lo, 0.0), max(hi, 0.0)]
    means = sorted({float(np.mean(values[list(c)])) for k in range(1, n + 1) for c in itertools.combinations(range(n), k)})
    points = means + [(x + y) / 2 for x, y in zip(means, means[1:])]
    accepted = [d for d in points if sign_flip_p_at(values, d) >= alpha]
    return [min(accepted), max(accepted)]


def welch(a, b):
    """Welch's t statistic and Satterthwaite df from scipy; the test and its interval on df − 1 (at least 1)."""
    res = stats.ttest_ind(a, b, equal_var=False)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    satterthwaite = float((va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1)))
    # scipy's own Welch p on the Satterthwaite df pins that df down independently.
    assert abs(float(2 * stats.t.sf(abs(float(res.statistic)), satterthwaite)) - float(res.pvalue)) < 1e-12
    df = max(satterthwaite - 1.0, 1.0)
    diff = float(a.mean() - b.mean())
    se = diff / float(res.statistic)
    half = float(stats.t.ppf(0.975, df)) * se
    p = float(2 * stats.t.sf(abs(float(res.statistic)), df))
    return p, [diff - half, diff + half], df, satterthwaite


def rm_anova_gg(table):
    """Two-way repeated-measures ANOVA F, p with the Greenhouse–Geisser ε from orthonormal contrasts."""
    n, k = table.shape
    grand = table.mean()
    ss_judge = n * ((table.mean(axis=0) - grand) ** 2).sum()
    resid = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0, keepdims=True) + grand
    ss_res = (resid**2).sum()
    df1, df2 = k - 1, (k - 1) * (n - 1)
    F = (ss_judge / df1) / (ss_res / df2)
    # Orthonormal contrasts orthogonal to the unit vector (Helmert-like, from an SVD of the centring matrix).
    C = np.linalg.svd(np.eye(k) - 1.0 / k)[0][:, : k - 1].T
    Sc = C @ np.cov(table, rowvar=False, ddof=1) @ C.T
    eps = float(np.trace(Sc) ** 2 / ((k - 1) * np.trace(Sc @ Sc)))
    eps = min(1.0, max(1.0 / df1, eps))
    return {"F": F, "df1": df1, "df2": df2, "epsilon": eps, "p": float(stats.f.sf(F, df1 * eps, df2 * eps))}

def consensus(rows):
    level, table, sessions = unit_table(rows)
    pooled = table.mean(axis=1)
    estimate, _, se = t_interval(pooled)
    ci = sign_flip_interval(pooled)
    per_judge = []
    for j, judge in enumerate(JUDGES):
        per_judge.append({"judge": judge, "estimate": float(table[:, j].mean()), "ci": sign_flip_interval(table[:, j])})
    return {
        "level": level,
        "units": int(len(pooled)),
        "unitValues": pooled.tolist(),
        "estimate": estimate,
        "ci": ci,
        "se": se,
        "p": sign_flip_exact(pooled),
        "perJudge": per_judge,
        "judgeEffect": rm_anova_gg(table),
    }


def harness(rows, harness_of):
    out = []
    for judge in JUDGES:
        deltas = unit_deltas(rows, judge)
        sessions = sorted({s for s, _, _ in deltas})
        gap = {s: np.mean([v for ss, _, v in deltas if ss == s]) for s in sessions}
        cc = np.array([gap[s] for s in sessions if harness_of[s] == "claude-code"])
        cx = np.array([gap[s] for s in sessions if harness_of[s] == "codex"])
        p, ci, df, df_satterthwaite = welch(cc, cx)
        out.append({
            "judge": judge,
            "claudeCode": {"estimate": float(cc.mean()), "ci": sign_flip_interval(cc), "sessions": int(len(cc))},
            "codex": {"estimate": float(cx.mean()), "ci": sign_flip_interval(cx), "sessions": int(len(cx))},
            "difference": {"estimate": float(cc.mean() - cx.mean()), "ci": ci, "p": p, "df": df, "dfSatterthwaite": df_satterthwaite},
        })
    return out


def main():
    rng = np.random.default_rng(20261202)
    one = make_scores(rng, ["S1"], 8, 3, {"S1": 0.8})
    sessions = [f"S{i}" for i in range(1, 10)]
    harness_of = {s: ("claude-code" if i < 5 else "codex") for i, s in enumerate(sessions)}
    drift = {s: (1.0 if harness_of[s] == "claude-code" else 0.4) + rng.normal(0, 0.2) for s in sessions}
    many = make_scores(rng, sessions, 3, 2, drift)
    golden = {
        "judges": JUDGES,
        "onePosition": {"rows": one, "consensus": consensus(one)},
        "manySessions": {"rows": many, "harnessOf": harness_of, "consensus": consensus(many), "harness": harness(many, harness_of)},
    }
    OUT.write_text(json.dumps(golden, indent=1, default=float) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
