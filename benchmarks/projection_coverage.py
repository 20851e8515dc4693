"""Coverage of the D-study's projected-SE interval over repeated simulated pilots (issue 4).

Pilots are drawn from the seed-000 DGP (Table 8 components) at a small design, each is fitted,
and the 90% posterior interval of the SE projected to a larger design is compared with the
empirical SD of theta_hat over studies simulated at that larger design. Refits reuse the
compiled model, so most of the time is the first compile.

    python benchmarks/projection_coverage.py --reps 200
"""

from __future__ import annotations

import argparse
import time
import warnings

from bayes_tee.studies import repeated as rp

CASES = [
    (
        "pilot N30 V3 M3 H2 R3 -> N120 V5",
        dict(n_items=30, n_prompts=3, n_judges=3, n_temperatures=2, n_replicates=3),
        dict(n_items=120, n_prompts=5),
    ),
    (
        "pilot N30 V3 M3 H2 R3 -> N60 V3 M1 R1",
        dict(n_items=30, n_prompts=3, n_judges=3, n_temperatures=2, n_replicates=3),
        dict(n_items=60, n_judges=1, n_replicates=1),
    ),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--studies", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    for name, pilot, target in CASES:
        t = time.perf_counter()
        s = rp.projection_coverage(
            pilot, target, n_reps=args.reps, n_studies=args.studies, random_seed=args.seed
        )
        a = s.attrs
        print(
            f"{name}: true SE {a['true_se']:.4f}, empirical SE {a['empirical_se']:.4f} "
            f"({args.studies} studies); 90% projection interval covers the empirical SE in "
            f"{a['coverage']:.1%} of {args.reps} pilots; median projected/true {a['median_ratio']:.3f}; "
            f"diagnostics ok in {s['diagnostics_ok'].mean():.0%}; {time.perf_counter() - t:.0f} s"
        )


if __name__ == "__main__":
    main()
