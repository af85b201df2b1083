#!/usr/bin/python3
"""Golden values for src/stats mixedModel and varianceDecomposition.

Run from the repository root with Debian's python3 (numpy, pandas, statsmodels)
and R with lme4 installed (apt-get install python3-statsmodels r-cran-lme4):

    /usr/bin/python3 tools/golden/mixed_model.py

Generates seeded data sets, fits each with R lme4::lmer (the primary reference,
via tools/golden/mixed_model.R) and with statsmodels MixedLM (a second opinion),
and writes src/stats/__fixtures__/golden-mixed.json.
"""
import json
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels
import statsmodels.formula.api as smf

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "src/stats/__fixtures__/golden-mixed.json"
LEVELS = ["no_perturbation", "filler", "persona_age", "persona_job", "whitespace"]


def simulate(rng, sizes, levels, effects, group_sd, resid_sd, nested=False):
    rows = []
    for g, size in enumerate(sizes):
        u = rng.normal(0, group_sd)
        for k in range(size):
            level = levels[g % len(levels)] if nested else levels[rng.integers(len(levels))]
            y = 0.3 + effects[levels.index(level)] + u + rng.normal(0, resid_sd)
            rows.append({"y": float(y), "level": level, "group": f"q{g:03d}"})
    return rows


def boundary_rows(rng, n_groups, levels):
    """Every group holds each level once and residuals that sum to zero within the
    group, so all group means coincide and the group variance estimate is 0."""
    rows = []
    for g in range(n_groups):
        e = rng.normal(0, 1, len(levels))
        e -= e.mean()
        for j, level in enumerate(levels):
            rows.append({"y": float(0.5 * j + e[j]), "level": level, "group": f"g{g}"})
    return rows


def one_way(rng, sizes, group_sd, resid_sd):
    rows = []
    for g, size in enumerate(sizes):
        u = rng.normal(0, group_sd)
        rows += [{"y": float(1.2 + u + rng.normal(0, resid_sd)), "group": f"s{g + 1}"}
                 for _ in range(size)]
    return rows


def build_cases():
    rng = np.random.default_rng(7331)
    cases = []
    fx = [0.0, 0.05, 0.4, 0.25, 0.02]
    small = simulate(rng, [3, 5, 4, 8, 6, 2], LEVELS[:3], fx, 0.5, 0.4)
    medium = simulate(rng, list(rng.integers(2, 16, 20)), LEVELS[:4], fx, 0.3, 0.5)
    large = simulate(rng, list(rng.integers(1, 31, 100)), LEVELS, fx, 0.2, 0.3)
    weak = simulate(rng, list(rng.integers(3, 9, 12)), LEVELS[:3], fx, 0.03, 1.0)
    nested = simulate(rng, [4, 6, 5, 7, 3, 5, 6, 4, 5], LEVELS[:3], fx, 0.4, 0.3, nested=True)
    boundary = boundary_rows(rng, 8, LEVELS[:3])
    for name, rows, reference in [("small", small, "no_perturbation"),
                                  ("medium", medium, "no_perturbation"),
                                  ("large", large, "no_perturbation"),
                                  ("weak_group", weak, "persona_age"),
                                  ("nested_levels", nested, "filler"),
                                  ("boundary", boundary, "no_perturbation")]:
        for method in ["REML", "ML"]:
            cases.append({"name": f"{name}_{method}", "kind": "mixed", "rows": rows,
                          "reference": reference, "method": method})
    for name, rows in [("three_sessions", one_way(rng, [120, 95, 165], 0.25, 1.2)),
                       ("many_groups", one_way(rng, list(rng.integers(2, 20, 33)), 0.5, 1.0)),
                       ("tiny", one_way(rng, [2, 3, 2], 1.0, 0.5)),
                       # the same four values in every group, permuted: between variance 0
                       ("no_between", [{"y": v, "group": f"s{i % 3}"} for i, v in
                                       enumerate([-1.0, 0.5, 1.5, -0.25] * 3)])]:
        cases.append({"name": f"decomposition_{name}", "kind": "decomposition", "rows": rows,
                      "reference": "", "method": "REML"})
    return cases


def statsmodels_fit(case):
    data = pd.DataFrame(case["rows"])
    formula = "y ~ 1" if case["kind"] == "decomposition" else \
        f"y ~ C(level, Treatment('{case['reference']}'))"
    # statsmodels 0.13's optimisers sometimes stop early or return llf = inf on REML;
    # try several and keep the best finite optimum.
    fit, failures = None, []
    for method in ["bfgs", "lbfgs", "powell", "nm"]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                candidate = smf.mixedlm(formula, data, groups=data["group"]).fit(
                    reml=case["method"] == "REML", method=[method], maxiter=5000)
        except (np.linalg.LinAlgError, ValueError) as error:
            failures.append(f"{method}: {type(error).__name__}: {error}")
            continue
        if np.isfinite(candidate.llf) and (fit is None or candidate.llf > fit.llf):
            fit = candidate
    if fit is None:
        return {"error": "; ".join(failures) or "no finite optimum"}
    terms = [n.split("[T.")[1].rstrip("]") if "[T." in n else n for n in fit.fe_params.index]
    return {"fixed": [{"term": t, "estimate": float(b), "se": float(s)} for t, b, s in
                      zip(terms, fit.fe_params, fit.bse_fe)],
            "groupVariance": float(fit.cov_re.iloc[0, 0]), "residualVariance": float(fit.scale),
            "logLik": float(fit.llf)}


def main():
    cases = build_cases()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        pd.DataFrame([{k: c[k] for k in ("name", "reference", "method")} for c in cases]) \
            .to_csv(tmp / "cases.csv", index=False)
        for c in cases:
            pd.DataFrame(c["rows"]).to_csv(tmp / f"{c['name']}.csv", index=False)
        subprocess.run(["Rscript", str(HERE / "mixed_model.R"), str(tmp), str(tmp / "out.json")],
                       check=True)
        lme4 = json.loads((tmp / "out.json").read_text())
    out = {"generator": "tools/golden/mixed_model.py + mixed_model.R",
           "lme4": lme4["lme4"], "R": lme4["R"], "statsmodels": statsmodels.__version__,
           "cases": []}
    for c in cases:
        out["cases"].append(dict(c, lme4=lme4["fits"][c["name"]], statsmodels=statsmodels_fit(c)))
    OUT.write_text(json.dumps(out, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
