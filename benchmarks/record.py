"""Recording time of every paradigm on Iris with 16 workers (target: under a minute each).

Run:  python benchmarks/record.py [--workers 16] [--dataset iris]

Each paradigm runs with its default options and exactly the requested workers
(ps-partitioned on its sparse dataset, the others on the chosen one). Times include
training, recording and the accuracy evaluation, after one warm-up import.
"""

import argparse
import sys
import time

import workloads


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--dataset", default="iris")
    args = ap.parse_args(argv)
    workloads.record("single", epochs=1)  # import scikit-learn and the datasets once
    print(f"{'paradigm':<16}{'dataset':<9}{'wall s':>8}{'accuracy':>10}{'bytes':>13}{'messages':>10}")
    worst = 0.0
    for name in workloads.PARADIGMS:
        dataset = "sparse" if name == "ps-partitioned" else args.dataset
        t0 = time.perf_counter()
        run = workloads.record(name, dataset=dataset, workers=args.workers)
        wall = time.perf_counter() - t0
        worst = max(worst, wall)
        print(f"{name:<16}{dataset:<9}{wall:>8.2f}{run.accuracy:>10.3f}{run.total_bytes:>13,.0f}"
              f"{run.messages:>10,}", flush=True)
    print(f"slowest: {worst:.2f} s (target < 60 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
