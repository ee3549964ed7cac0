"""Where the time goes: per-op and per-node time of bench/models.py's models on our engine.

Usage: WEBNN_NUM_THREADS=1 python bench/profile_models.py [--models det rec ...] [--runs 20]
Each model is imported as in bench/models.py, dispatched once to build its plan, then timed node
by node over --runs dispatches (MLGraph.set_profiling / MLGraph.profile).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from models import ALL_MODELS, WHEEL_MODELS, Ours, model_cases
from webnn.profile import profile_table


def profiled(ours, runs, top):
    """Our per-op table of `runs` dispatches of a bench/models.py `Ours` engine (after one
    unprofiled run that builds its plan)."""
    ours.run()
    ours.graph.set_profiling(True)
    for _ in range(runs):
        ours.run()
    return profile_table(ours.graph.profile, top=top)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models", nargs="+", default=ALL_MODELS, choices=ALL_MODELS + WHEEL_MODELS
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    for name, (model, feed, folded) in model_cases(args.models).items():
        table = profiled(Ours(model, feed, folded), args.runs, args.top)
        print(f"== {name} (threads: {os.environ.get('WEBNN_NUM_THREADS', 'default')})")
        print(table)
        print()


if __name__ == "__main__":
    main()
